import type { ScannerLease } from '../../domain/ports.js';

/** The lease of a process that is the whole fleet (the embedded default, tests): always held. */
export class SoleInstanceLease implements ScannerLease {
  async acquire(): Promise<boolean> {
    return true;
  }

  async release(): Promise<void> {}
}
