import type { Logger } from 'pino';
import type { StoreErrorPolicy } from '../../application/metering.js';
import { LimitsUnavailable } from '../../domain/errors.js';
import type { Clock, RateLimitStore, RateLimitStores, WindowCount } from '../../domain/ports.js';

/** What every limit does while its store fails: let requests through, or refuse them with 503. */

/** Seconds a refused client should wait while the limits' store is down. */
const STORE_DOWN_RETRY_AFTER_SECONDS = 5;

/**
 * Stores that survive their backend failing (Redis down, slow, or restarted without our scripts):
 * each call either succeeds or, at once, applies `policy`, and the store is set up again on the
 * next call, so limits work again as soon as the backend does. The outage and the recovery are
 * logged once each.
 */
export function resilientStores(factory: RateLimitStores, policy: StoreErrorPolicy, logger: Logger, clock: Clock): RateLimitStores {
  return (name) => new ResilientStore(name, factory(name), policy, logger, clock);
}

class ResilientStore implements RateLimitStore {
  readonly localKeys: boolean;
  #options: { readonly windowMs: number } | undefined;
  #needsInit = false;
  #failing = false;

  constructor(
    private readonly name: string,
    private readonly inner: RateLimitStore,
    private readonly policy: StoreErrorPolicy,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {
    this.localKeys = inner.localKeys ?? false;
  }

  init(options: { readonly windowMs: number }): void {
    // Set up lazily, on the first call: at start-up the backend may not be reachable yet.
    this.#options = options;
    this.#needsInit = true;
  }

  async get(key: string): Promise<WindowCount | undefined> {
    return this.#call(async () => (await this.inner.get?.(key)) ?? undefined, () => undefined);
  }

  async increment(key: string): Promise<WindowCount> {
    return this.#call(
      async () => this.inner.increment(key),
      () => ({ totalHits: 1, resetTime: new Date(this.clock.now().getTime() + (this.#options?.windowMs ?? 60_000)) }),
    );
  }

  async decrement(key: string): Promise<void> {
    await this.#call(async () => this.inner.decrement(key), () => undefined);
  }

  async resetKey(key: string): Promise<void> {
    await this.#call(async () => this.inner.resetKey(key), () => undefined);
  }

  async #call<T>(operation: () => Promise<T>, allowed: () => T): Promise<T> {
    try {
      if (this.#needsInit && this.#options !== undefined) {
        await this.inner.init?.(this.#options);
        this.#needsInit = false;
      }
      const result = await operation();
      if (this.#failing) this.logger.info({ limit: this.name }, 'rate-limit store is back: limits apply again');
      this.#failing = false;
      return result;
    } catch (error) {
      this.#needsInit = true;
      if (!this.#failing) {
        this.logger.error(
          { err: error, limit: this.name, policy: this.policy },
          this.policy === 'allow' ? 'rate-limit store failing: requests pass unlimited' : 'rate-limit store failing: requests refused with 503',
        );
      }
      this.#failing = true;
      if (this.policy === 'allow') return allowed();
      throw new LimitsUnavailable('The request limits cannot be checked right now; retry shortly', {
        retryAfterSeconds: STORE_DOWN_RETRY_AFTER_SECONDS,
        cause: error,
      });
    }
  }
}

