import { LimitsUnavailable, RateLimited, type BudgetStanding } from '../domain/errors.js';
import { quotaExceeded, type MonthlyQuota, type QuotaStanding } from '../domain/monthly-quota.js';
import type { Clock, CountedVersions, DownloadLimit, Principal, RequestLimit } from '../domain/ports.js';
import type { EventSink } from './events.js';

/** Where the core writes what a request's metering had to say (the request's own logger). */
export interface RequestLog {
  warn(fields: object, message: string): void;
}

/** What every limit does while its store fails: let requests through uncounted, or refuse them (503). */
export type StoreErrorPolicy = 'allow' | 'deny';

export interface MeteringDependencies {
  /** Downloads per client and window (DOWNLOAD_RATE_LIMIT per DOWNLOAD_RATE_WINDOW_SECONDS). */
  readonly limit: DownloadLimit;
  /** Authenticated requests per client and window (REQUEST_RATE_LIMIT per REQUEST_RATE_WINDOW_SECONDS). */
  readonly requests: RequestLimit;
  /** The file versions whose partial requests were counted within the window. */
  readonly versions: CountedVersions;
  readonly quota: MonthlyQuota;
  readonly clock: Clock;
  /** RATE_LIMIT_ON_STORE_ERROR, for the quota ledger (the budget's stores apply it themselves). */
  readonly onLedgerError: StoreErrorPolicy;
  readonly events: EventSink;
}

/** Bytes reserved from a client's monthly quota for one body, and how to give back what was not sent. */
export interface Reservation {
  /** What the ledger counted (0 when the client has no quota, or the ledger was down and let it through). */
  readonly bytes: number;
  readonly standing: QuotaStanding | undefined;
  /** Gives back `unsent` bytes (at most what was reserved); resolves to what the ledger took back. */
  refund(unsent: number): Promise<number>;
}

/** Seconds a refused client should wait while the quota ledger is down. */
const LEDGER_DOWN_RETRY_AFTER_SECONDS = 5;

/**
 * What a client's downloads cost it, whichever door they come through: the download budget (every
 * complete body counts; the partial requests of one file version count once together within the
 * window) and the monthly byte quota (reserved before the first byte, the unsent bytes given back).
 */
export class Metering {
  constructor(private readonly deps: MeteringDependencies) {}

  /**
   * Before storage is asked anything: refuses a client whose budget is spent. A request that may
   * be partial (`lenient`) is let through when a version of this file was counted for the client
   * within the window, since its ranges are free.
   */
  async admit(clientId: string, path: string, lenient: boolean): Promise<void> {
    try {
      await this.deps.limit.refuseIfSpent(clientId);
    } catch (error) {
      if (!lenient || !(error instanceof RateLimited)) throw error;
      if ((await this.deps.versions.counted(clientId, path)) === undefined) throw error;
    }
  }

  /**
   * One authenticated request of the client, whichever door: refused (`RateLimited`) past the
   * request budget, before it costs storage anything.
   */
  async admitRequest(clientId: string): Promise<void> {
    await this.deps.requests.count(clientId);
  }

  /** A complete body (or a direct link storage serves): always one download. */
  countWhole(clientId: string): Promise<BudgetStanding | undefined> {
    return this.deps.limit.count(clientId);
  }

  /**
   * A partial request (or a HEAD, a refused precondition or range) of version `etag` of `path`:
   * counted unless that version was already counted for the client within the window. A refused
   * count leaves its version uncounted.
   */
  async countVersion(clientId: string, path: string, etag: string): Promise<BudgetStanding | undefined> {
    if (!(await this.deps.versions.claim(clientId, path, etag))) return undefined;
    try {
      return await this.deps.limit.count(clientId);
    } catch (error) {
      await this.deps.versions.release(clientId, path, etag);
      throw error;
    }
  }

  /**
   * A request for a file storage does not have (no version to count it by): counted, so that asking
   * for it again and again costs the client its budget.
   */
  async countUnversioned(clientId: string): Promise<void> {
    await this.deps.limit.count(clientId);
  }

  /**
   * Reserves `bytes` of the principal's monthly quota. Throws `QuotaExceeded` when they do not fit
   * (`onRefused` first sees the standing, for the answer's fields). Reports each alert share crossed.
   */
  async reserve(
    principal: Principal,
    bytes: number,
    context: { readonly log: RequestLog; readonly requestId: string; readonly onRefused?: (standing: QuotaStanding) => void },
  ): Promise<Reservation> {
    // Without a ledger reservation (no quota, or a ledger down and let through), the bytes are what
    // a quota would have counted: the audit bills the body bytes delivered, as the ledger would.
    const uncounted: Reservation = { bytes, standing: undefined, refund: async (unsent) => Math.min(Math.max(0, Math.floor(unsent)), bytes) };
    if (principal.monthlyBytes === undefined) return uncounted;
    const decision = await this.#ledger(context.log, () => this.deps.quota.reserve(principal.clientId, principal.monthlyBytes, bytes));
    if (decision === undefined || decision.kind === 'unlimited') return uncounted;
    if (decision.kind === 'refused') {
      context.onRefused?.(decision.standing);
      throw quotaExceeded(decision.standing, bytes, this.deps.clock.now());
    }
    for (const percent of decision.crossed) {
      const { standing } = decision;
      context.log.warn(
        { event: 'quota', clientId: principal.clientId, period: standing.period.key, percent, limit: standing.limit, used: standing.used },
        `monthly byte quota ${percent}% used`,
      );
      this.deps.events.emit({ type: 'quota.threshold', requestId: context.requestId, clientId: principal.clientId, percent, standing });
    }
    let kept = bytes;
    return {
      bytes,
      standing: decision.standing,
      refund: async (unsent) => {
        const back = Math.min(Math.max(0, Math.floor(unsent)), kept);
        if (back === 0) return 0;
        try {
          await decision.refund(back);
          kept -= back;
          return back;
        } catch (error) {
          // The reservation stays counted: the subscriber loses bytes, never the vendor.
          context.log.warn({ clientId: principal.clientId, unsent: back, err: error }, 'quota refund failed: the unsent bytes stay counted');
          return 0;
        }
      },
    };
  }

  /**
   * Where the principal stands this period (`undefined` without a quota). `policy` 'deny' always
   * refuses when the ledger fails: an answer without the quota would read as "no limit".
   */
  standing(principal: Principal, log: RequestLog, policy: StoreErrorPolicy = this.deps.onLedgerError): Promise<QuotaStanding | undefined> {
    return this.#ledger(log, () => this.deps.quota.standing(principal.clientId, principal.monthlyBytes), policy);
  }

  async #ledger<T>(log: RequestLog, call: () => Promise<T>, policy = this.deps.onLedgerError): Promise<T | undefined> {
    try {
      return await call();
    } catch (error) {
      if (policy === 'allow') {
        log.warn({ err: error }, 'quota ledger unavailable: the request is not counted against the monthly quota');
        return undefined;
      }
      throw new LimitsUnavailable('The monthly quota cannot be checked right now; retry shortly', {
        retryAfterSeconds: LEDGER_DOWN_RETRY_AFTER_SECONDS,
        cause: error,
      });
    }
  }
}
