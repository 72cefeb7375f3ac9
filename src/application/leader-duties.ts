import type { ChangeScanner, ScanReport } from './change-scanner.js';
import type { ChangeLog, Clock, ScannerLease } from '../domain/ports.js';

/** A duty run by the lease holder after each scan (e.g. the webhook dispatcher). */
export type AfterScanDuty = (scan: { readonly report: ScanReport; readonly at: Date }) => Promise<void>;

export interface LeaderDutiesOptions {
  readonly lease: ScannerLease;
  readonly scanner: ChangeScanner;
  readonly log: ChangeLog;
  readonly clock: Clock;
  /** CHANGES_SCAN_SECONDS, in milliseconds: how often the holder scans. */
  readonly scanEveryMs: number;
  /** CHANGES_RETENTION_DAYS, in milliseconds: changes found longer ago are pruned. */
  readonly retentionMs: number;
  /** How often the log is pruned (default an hour: pruning a table visits every client's partition). */
  readonly pruneEveryMs?: number;
  /** A scan, prune or duty that failed; the loop goes on. */
  readonly onError: (error: unknown, what: 'lease' | 'scan' | 'prune' | 'duty') => void;
  /** A scan that ran (for logs and metrics). */
  readonly onScan?: (report: ScanReport) => void;
  /** This instance became, or stopped being, the lease holder. */
  readonly onLeadership?: (held: boolean) => void;
}

/**
 * What exactly one instance of the fleet does: the holder of the scanner lease scans every
 * `scanEveryMs`, prunes the log past the retention, and then runs the duties registered with
 * `afterScan` (in order of registration, each one's failure reported and the next run). Every
 * instance calls `tick` (the wiring on a timer, tests by hand with their clock); a tick renews the
 * lease, and runs a scan when one is due. A tick while a scan runs only renews the lease.
 */
export class LeaderDuties {
  readonly #options: LeaderDutiesOptions;
  readonly #duties: AfterScanDuty[] = [];
  #held = false;
  #scanning: Promise<void> | undefined;
  #lastScan = Number.NEGATIVE_INFINITY;
  #lastPrune = Number.NEGATIVE_INFINITY;

  constructor(options: LeaderDutiesOptions) {
    this.#options = options;
  }

  /** Registers a duty the lease holder runs after each scan. */
  afterScan(duty: AfterScanDuty): void {
    this.#duties.push(duty);
  }

  /**
   * How long to wait before the next tick: `renewEveryMs` (the lease's renewal), or less when this
   * instance holds the lease and its next scan is due sooner, so that scans keep their schedule.
   */
  delayBeforeNextTick(renewEveryMs: number): number {
    if (!this.#held || this.#scanning !== undefined) return renewEveryMs;
    const due = this.#lastScan + this.#options.scanEveryMs - this.#options.clock.now().getTime();
    return Math.max(0, Math.min(renewEveryMs, due));
  }

  /** Whether a scan (and its duties) is running: a tick meanwhile only renews the lease. */
  get scanning(): boolean {
    return this.#scanning !== undefined;
  }

  /** Whether this instance held the lease at its last tick. */
  get leading(): boolean {
    return this.#held;
  }

  /** Renews or takes the lease, and scans when this instance holds it and a scan is due. */
  async tick(): Promise<void> {
    const { lease, scanner, clock, onError } = this.#options;
    let held: boolean;
    try {
      held = await lease.acquire();
    } catch (error) {
      onError(error, 'lease');
      held = false;
    }
    if (held !== this.#held) {
      // Another instance may have scanned meanwhile: the next scan starts from the saved state.
      scanner.forget();
      this.#held = held;
      this.#lastScan = Number.NEGATIVE_INFINITY;
      this.#options.onLeadership?.(held);
    }
    if (!held || this.#scanning !== undefined) return;
    if (clock.now().getTime() - this.#lastScan < this.#options.scanEveryMs) return;
    this.#scanning = this.#duty();
    try {
      await this.#scanning;
    } finally {
      this.#scanning = undefined;
    }
  }

  /** Waits for a scan in progress, then gives the lease up so another instance may take it at once. */
  async stop(): Promise<void> {
    await this.#scanning;
    this.#held = false;
    await this.#options.lease.release();
  }

  async #duty(): Promise<void> {
    const { scanner, log, clock, onError } = this.#options;
    const at = clock.now();
    this.#lastScan = at.getTime();
    let report: ScanReport | undefined;
    try {
      report = await scanner.scan();
    } catch (error) {
      // What it had found is saved with the state or not at all: the next scan finds it again.
      scanner.forget();
      onError(error, 'scan');
    }
    if (report !== undefined) this.#options.onScan?.(report);
    // Pruned whether the scan failed or not: a scanner that keeps failing (over its memory budget,
    // say) must not keep changes past CHANGES_RETENTION_DAYS.
    if (at.getTime() - this.#lastPrune >= (this.#options.pruneEveryMs ?? 3_600_000)) {
      this.#lastPrune = at.getTime();
      await log.prune(new Date(at.getTime() - this.#options.retentionMs)).catch((error: unknown) => onError(error, 'prune'));
    }
    if (report === undefined) return;
    for (const duty of this.#duties) await duty({ report, at }).catch((error: unknown) => onError(error, 'duty'));
  }
}
