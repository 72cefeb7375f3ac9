import { QuotaExceeded } from './errors.js';
import type { Clock, QuotaLedger } from './ports.js';

/**
 * A client's monthly byte quota: what a download or a link may take, and what is given back when a
 * download ends early. The period is the calendar month in UTC. The ledger (one instance's memory,
 * or Redis for a fleet) reserves atomically, so two instances cannot both spend the last bytes.
 */

/** A calendar month, UTC: `[start, end)`. */
export interface QuotaPeriod {
  /** `YYYY-MM`, e.g. `2026-11`. */
  readonly key: string;
  readonly start: Date;
  readonly end: Date;
}

export function quotaPeriodOf(now: Date): QuotaPeriod {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  return {
    key: `${String(year).padStart(4, '0')}-${String(month + 1).padStart(2, '0')}`,
    start: new Date(Date.UTC(year, month, 1)),
    end: new Date(Date.UTC(year, month + 1, 1)),
  };
}

/** The share of a quota at which an operator is told, once per period each. */
export const QUOTA_ALERT_PERCENTS = [80, 100] as const;
export type QuotaAlertPercent = (typeof QUOTA_ALERT_PERCENTS)[number];

/** Where a client stands in the current period. */
export interface QuotaStanding {
  readonly limit: number;
  readonly used: number;
  readonly remaining: number;
  readonly period: QuotaPeriod;
}

/** What a reservation of bytes got. */
export type QuotaDecision =
  | {
      readonly kind: 'granted';
      readonly standing: QuotaStanding;
      /** Alert shares this reservation crossed (an operator is told of each once). */
      readonly crossed: readonly QuotaAlertPercent[];
      /** Gives back `bytes` of the reservation (a download that ended early), at most what was reserved. */
      readonly refund: (bytes: number) => Promise<void>;
    }
  | { readonly kind: 'unlimited' }
  | { readonly kind: 'refused'; readonly standing: QuotaStanding };

/** Shares of `limit` that `before` had not reached and `after` has. */
export function crossedAlerts(before: number, after: number, limit: number): QuotaAlertPercent[] {
  return QUOTA_ALERT_PERCENTS.filter((percent) => before * 100 < percent * limit && after * 100 >= percent * limit);
}

export class MonthlyQuota {
  constructor(
    private readonly ledger: QuotaLedger,
    private readonly clock: Clock,
  ) {}

  /**
   * Reserves `bytes` of the client's quota for the current period before the first byte moves.
   * A client without a quota (`limit` undefined) is unlimited; zero bytes (a 304, a HEAD) always
   * fit and cost nothing.
   */
  async reserve(clientId: string, limit: number | undefined, bytes: number): Promise<QuotaDecision> {
    if (limit === undefined) return { kind: 'unlimited' };
    if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`A reservation is a whole number of bytes, not ${bytes}`);
    const period = quotaPeriodOf(this.clock.now());
    const result = await this.ledger.reserve({ clientId, period: period.key, bytes, limit, expiresAt: retentionEnd(period) });
    if (!result.granted) return { kind: 'refused', standing: standing(limit, result.used, period) };
    const after = result.used + bytes;
    let left = bytes;
    return {
      kind: 'granted',
      standing: standing(limit, after, period),
      crossed: crossedAlerts(result.used, after, limit),
      refund: async (unsent) => {
        const back = Math.min(Math.max(0, Math.floor(unsent)), left);
        if (back === 0) return;
        left -= back;
        await this.ledger.refund({ clientId, period: period.key, bytes: back });
      },
    };
  }

  /** The client's standing in the current period, or `undefined` without a quota. */
  async standing(clientId: string, limit: number | undefined): Promise<QuotaStanding | undefined> {
    if (limit === undefined) return undefined;
    const period = quotaPeriodOf(this.clock.now());
    return standing(limit, await this.ledger.used(clientId, period.key), period);
  }
}

/**
 * The refusal of `bytes` that did not fit: how much is left and when the period resets, so that the
 * subscriber can ask for a smaller range or wait.
 */
export function quotaExceeded(standing: QuotaStanding, bytes: number, now: Date): QuotaExceeded {
  return new QuotaExceeded(
    `The monthly byte quota (${standing.limit} bytes) does not cover this request of ${bytes} bytes: ` +
      `${standing.remaining} bytes remain in ${standing.period.key}, until it resets at ${standing.period.end.toISOString()}`,
    {
      remaining: standing.remaining,
      resetsAt: standing.period.end,
      retryAfterSeconds: Math.max(1, Math.ceil((standing.period.end.getTime() - now.getTime()) / 1000)),
    },
  );
}

function standing(limit: number, used: number, period: QuotaPeriod): QuotaStanding {
  return { limit, used, remaining: Math.max(0, limit - used), period };
}

/** A period's count is kept a while after it ends, so that a usage report of last month can read it. */
const RETENTION_AFTER_PERIOD_MS = 62 * 24 * 3600 * 1000;

function retentionEnd(period: QuotaPeriod): Date {
  return new Date(period.end.getTime() + RETENTION_AFTER_PERIOD_MS);
}
