import { RateLimited, type BudgetStanding } from '../../domain/errors.js';
import type { Clock, DownloadLimit, RateLimitStores, RequestLimit } from '../../domain/ports.js';

export interface WindowLimitOptions {
  /** Counts allowed per client within the window. */
  readonly limit: number;
  readonly windowSeconds: number;
  readonly stores: RateLimitStores;
  readonly clock: Clock;
}

/**
 * The download budget (`DownloadLimit`, the core's port) counted in a rate-limit store, so that it
 * lives in the same store as every other limit (each instance's memory, or Redis shared by the
 * fleet). What counts as a download is the core's rule (`src/application/metering.ts`).
 */
export function createDownloadLimit(options: WindowLimitOptions): DownloadLimit {
  return windowLimit('downloads', 'Download', options);
}

/**
 * The request budget (`RequestLimit`): every authenticated request of a client, whichever API,
 * so that requests that cost storage a call each (`/info`, `HEAD`, S3 `HeadObject`, ranges of a
 * counted version) are bounded per client, on every instance alike when the store is shared.
 */
export function createRequestLimit(options: WindowLimitOptions): RequestLimit {
  return windowLimit('requests', 'Request', options);
}

function windowLimit(name: string, noun: string, options: WindowLimitOptions): DownloadLimit {
  const store = options.stores(name);
  const windowMs = options.windowSeconds * 1000;
  // Stores read only `windowMs` from the options they are initialised with.
  const ready = Promise.resolve(store.init?.({ windowMs }));
  const keyOf = (clientId: string): string => `client:${clientId}`;
  const refusal = (retryAfterSeconds: number, standing?: BudgetStanding): RateLimited =>
    new RateLimited(`${noun} limit of ${options.limit} per ${options.windowSeconds} seconds reached; retry in ${retryAfterSeconds} seconds`, {
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
        name,
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
