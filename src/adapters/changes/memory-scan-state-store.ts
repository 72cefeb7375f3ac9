import type { ScanState, ScanStateStore } from '../../domain/ports.js';

/** The scan state of one process (tests, the embedded demo); shared by the scanners given the same store. */
export class MemoryScanStateStore implements ScanStateStore {
  #state: ScanState | undefined;
  saves = 0;

  async load(): Promise<ScanState | undefined> {
    return this.#state;
  }

  async save(state: ScanState): Promise<void> {
    this.saves += 1;
    this.#state = state;
  }
}
