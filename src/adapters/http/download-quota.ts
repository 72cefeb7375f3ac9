import type { Response } from 'express';
import type { Logger } from 'pino';
import { quotaExceeded, type MonthlyQuota, type QuotaAlertPercent, type QuotaStanding } from '../../domain/monthly-quota.js';
import type { Clock, Principal } from '../../domain/ports.js';
import { RequestRefused } from './error-responses.js';
import { appendListItem, quotaItem, quotaPolicyItem } from './quota-headers.js';
import type { StoreErrorPolicy } from './rate-limits.js';

/** A client's quota reached one of its alert shares in a period (told once per share and period). */
export interface QuotaCrossing {
  readonly requestId: string;
  readonly clientId: string;
  readonly percent: QuotaAlertPercent;
  readonly standing: QuotaStanding;
}

export interface DownloadQuotaOptions {
  readonly quota: MonthlyQuota;
  readonly clock: Clock;
  /** What to do when the ledger (Redis) fails: let the download through uncounted, or refuse it with 503. */
  readonly onLedgerError: StoreErrorPolicy;
  /** Told of each alert share a reservation crossed (the log and the audit trail). */
  readonly onCrossed: (crossing: QuotaCrossing, logger: Logger) => void;
}

/** Gives back bytes of a reservation that were not sent. */
export type Refund = (unsentBytes: number) => Promise<void>;

const noRefund: Refund = async () => undefined;

/** Seconds a refused client should wait while the quota ledger is down. */
const LEDGER_DOWN_RETRY_AFTER_SECONDS = 5;

/**
 * The monthly byte quota at the HTTP edge of downloads and links: the bytes a response will move are
 * reserved before its first byte, and every download answer carries the client's standing in the
 * `RateLimit-Policy` and `RateLimit` fields (beside the download budget's item, when there is one).
 */
export class DownloadQuota {
  constructor(private readonly options: DownloadQuotaOptions) {}

  /**
   * Reserves `bytes` for `principal` and shows the standing on `res`. Throws `QuotaExceeded` (with
   * the standing shown) when they do not fit what is left. Resolves to the refund of unsent bytes.
   */
  async charge(res: Response, logger: Logger, principal: Principal, bytes: number): Promise<Refund> {
    if (principal.monthlyBytes === undefined) return noRefund;
    const decision = await this.#ledger(logger, () => this.options.quota.reserve(principal.clientId, principal.monthlyBytes, bytes));
    if (decision === undefined || decision.kind === 'unlimited') return noRefund;
    const now = this.options.clock.now();
    showStanding(res, decision.standing, now);
    if (decision.kind === 'refused') throw quotaExceeded(decision.standing, bytes, now);
    const requestId = String(res.getHeader('X-Request-Id') ?? '');
    for (const percent of decision.crossed) {
      this.options.onCrossed({ requestId, clientId: principal.clientId, percent, standing: decision.standing }, logger);
    }
    return (unsent) =>
      decision.refund(unsent).catch((error: unknown) => {
        // The reservation stays counted: the subscriber loses bytes, never the vendor.
        logger.warn({ clientId: principal.clientId, unsent, err: error }, 'quota refund failed: the unsent bytes stay counted');
      });
  }

  /** Shows the standing on `res` for an answer that costs nothing (a 304, a HEAD, a link's download). */
  async show(res: Response, logger: Logger, principal: Principal): Promise<void> {
    if (principal.monthlyBytes === undefined) return;
    const standing = await this.#ledger(logger, () => this.options.quota.standing(principal.clientId, principal.monthlyBytes));
    if (standing !== undefined) showStanding(res, standing, this.options.clock.now());
  }

  /**
   * Where `principal` stands this period, for `GET /account`; `undefined` without a quota. A ledger
   * failure is always a 503 here: an answer without the quota would read as "no limit".
   */
  async standing(logger: Logger, principal: Principal): Promise<QuotaStanding | undefined> {
    return this.#ledger(logger, () => this.options.quota.standing(principal.clientId, principal.monthlyBytes), 'deny');
  }

  async #ledger<T>(logger: Logger, call: () => Promise<T>, policy = this.options.onLedgerError): Promise<T | undefined> {
    try {
      return await call();
    } catch (error) {
      if (policy === 'allow') {
        logger.warn({ err: error }, 'quota ledger unavailable: the request is not counted against the monthly quota');
        return undefined;
      }
      throw new RequestRefused('limits_unavailable', 'The monthly quota cannot be checked right now; retry shortly', {
        retryAfterSeconds: LEDGER_DOWN_RETRY_AFTER_SECONDS,
        cause: error,
      });
    }
  }
}

function showStanding(res: Response, standing: QuotaStanding, now: Date): void {
  res.setHeader('RateLimit-Policy', appendListItem(res.getHeader('RateLimit-Policy'), quotaPolicyItem(standing)));
  res.setHeader('RateLimit', appendListItem(res.getHeader('RateLimit'), quotaItem(standing, now)));
}
