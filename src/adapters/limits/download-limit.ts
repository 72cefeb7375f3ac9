import { RateLimited, type BudgetStanding } from '../../domain/errors.js';
import type { Clock, DownloadLimit, RateLimitStores } from '../../domain/ports.js';

export interface DownloadRateLimit {
  /** Downloads allowed per client within the window. */
  readonly limit: number;
  readonly windowSeconds: number;
  readonly stores: RateLimitStores;
  readonly clock: Clock;
}

/**
 * The download budget (`DownloadLimit`, the core's port) counted in an express-rate-limit store, so
 * that the budget lives in the same store as every other limit (each instance's memory, or Redis
 * shared by the fleet). What counts as a download is the core's rule (`src/application/metering.ts`).
 */
export function createDownloadLimit(options: DownloadRateLimit): DownloadLimit {
  const store = options.stores('downloads');
  const windowMs = options.windowSeconds * 1000;
  // express-rate-limit stores read only `windowMs` from the options they are initialised with.
  const ready = Promise.resolve(store.init?.({ windowMs }));
  const keyOf = (clientId: string): string => `client:${clientId}`;
  const refusal = (retryAfterSeconds: number, standing?: BudgetStanding): RateLimited =>
    new RateLimited(`Download limit of ${options.limit} per ${options.windowSeconds} seconds reached; retry in ${retryAfterSeconds} seconds`, {
      retryAfterSeconds,
      ...(standing !== undefined && { standing }),
    });
  return {
    async refuseIfSpent(clientId) {
      await ready;
      const info = await store.get?.(keyOf(clientId));
      const now = options.clock.now().getTime();
      if (info === undefined || info.totalHits < options.limit || (info.resetTime !== undefined && info.resetTime.getTime() <= now)) return;
      throw refusal(secondsUntil(info.resetTime, options.windowSeconds, now));
    },
    async count(clientId) {
      await ready;
      const key = keyOf(clientId);
      const { totalHits, resetTime } = await store.increment(key);
      const resetSeconds = secondsUntil(resetTime, options.windowSeconds, options.clock.now().getTime());
      const standing: BudgetStanding = {
        name: 'downloads',
        limit: options.limit,
        remaining: Math.max(0, options.limit - totalHits),
        windowSeconds: options.windowSeconds,
        resetSeconds,
        key,
      };
      if (totalHits > options.limit) throw refusal(resetSeconds, standing);
      return standing;
    },
  };
}


/** Seconds until `resetTime`, at least 1 (`Retry-After`, RFC 9110 section 10.2.3). */
function secondsUntil(resetTime: Date | undefined, windowSeconds: number, now: number): number {
  return resetTime === undefined ? windowSeconds : Math.max(1, Math.ceil((resetTime.getTime() - now) / 1000));
}
