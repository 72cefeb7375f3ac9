import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, MemoryStore, rateLimit, type ClientRateLimitInfo, type IncrementResponse, type Options, type Store } from 'express-rate-limit';
import type { Logger } from 'pino';
import { RequestRefused } from './error-responses.js';

/**
 * The gateway's request budgets, all counted in express-rate-limit stores, so that one kind of
 * store (each instance's memory, or one shared by every instance) keeps them all. Every refusal is
 * a thrown `rate_limited` for the error renderer.
 */

/** Makes a store for one budget; each budget gets its own, initialised with its own window. */
export type RateLimitStoreFactory = (name: string) => Store;

export const memoryStores: RateLimitStoreFactory = () => new MemoryStore();

/** What every limit does while its store fails: let requests through, or refuse them with 503. */
export type StoreErrorPolicy = 'allow' | 'deny';

/** Seconds a refused client should wait while the limits' store is down. */
const STORE_DOWN_RETRY_AFTER_SECONDS = 5;

/**
 * Stores that survive their backend failing (Redis down, slow, or restarted without our scripts):
 * each call either succeeds or, at once, applies `policy`, and the store is set up again on the
 * next call, so limits work again as soon as the backend does. The outage and the recovery are
 * logged once each.
 */
export function resilientStores(factory: RateLimitStoreFactory, policy: StoreErrorPolicy, logger: Logger): RateLimitStoreFactory {
  return (name) => new ResilientStore(name, factory(name), policy, logger);
}

class ResilientStore implements Store {
  readonly localKeys: boolean;
  #options: Options | undefined;
  #needsInit = false;
  #failing = false;

  constructor(
    private readonly name: string,
    private readonly inner: Store,
    private readonly policy: StoreErrorPolicy,
    private readonly logger: Logger,
  ) {
    this.localKeys = inner.localKeys ?? false;
  }

  init(options: Options): void {
    // Set up lazily, on the first call: at start-up the backend may not be reachable yet.
    this.#options = options;
    this.#needsInit = true;
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    return this.#call(async () => (await this.inner.get?.(key)) ?? undefined, () => undefined);
  }

  async increment(key: string): Promise<IncrementResponse> {
    return this.#call(
      async () => this.inner.increment(key),
      () => ({ totalHits: 1, resetTime: new Date(Date.now() + (this.#options?.windowMs ?? 60_000)) }),
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
      throw new RequestRefused('limits_unavailable', 'The request limits cannot be checked right now; retry shortly', {
        retryAfterSeconds: STORE_DOWN_RETRY_AFTER_SECONDS,
        cause: error,
      });
    }
  }
}

/** Seconds until `resetTime`, at least 1 (`Retry-After`, RFC 9110 section 10.2.3). */
function secondsUntil(resetTime: Date | undefined, windowSeconds: number, now: number): number {
  return resetTime === undefined ? windowSeconds : Math.max(1, Math.ceil((resetTime.getTime() - now) / 1000));
}

function limiterRetryAfter(req: Request, windowSeconds: number): number {
  const resetTime = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
  return secondsUntil(resetTime, windowSeconds, Date.now());
}

export interface DownloadRateLimit {
  /** Downloads allowed per client within the window. */
  readonly limit: number;
  readonly windowSeconds: number;
  readonly stores: RateLimitStoreFactory;
}

/** A client's download budget (see download-budget.ts for what is counted). */
export interface DownloadLimiter {
  /** Counts one download (or link) of a client; throws the `rate_limited` refusal when its budget is spent. */
  count(req: Request, res: Response, clientId: string): Promise<void>;
  /** Throws the `rate_limited` refusal when the client's budget is already spent, counting nothing. */
  refuseIfSpent(clientId: string): Promise<void>;
}

/**
 * Counts downloads against their client's budget. Called by the download handler only for
 * responses that are not 304, so revalidating a cached file is never counted nor refused.
 */
export function createDownloadLimiter(options: DownloadRateLimit): DownloadLimiter {
  const store = options.stores('downloads');
  const keyOf = (clientId: string): string => `client:${clientId}`;
  const refusal = (retryAfterSeconds: number): RequestRefused =>
    new RequestRefused(
      'rate_limited',
      `Download limit of ${options.limit} per ${options.windowSeconds} seconds reached; retry in ${retryAfterSeconds} seconds`,
      { retryAfterSeconds },
    );
  const middleware = rateLimit({
    windowMs: options.windowSeconds * 1000,
    limit: options.limit,
    identifier: 'downloads',
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (_req, res) => keyOf(String(res.locals['limitedClientId'])),
    store,
    handler: (req, _res, next) => {
      next(refusal(limiterRetryAfter(req, options.windowSeconds)));
    },
  });

  return {
    async count(req, res, clientId) {
      res.locals['limitedClientId'] = clientId;
      let failure: unknown;
      await middleware(req, res, (error?: unknown) => {
        failure = error;
      });
      if (failure !== undefined) throw failure;
    },
    async refuseIfSpent(clientId) {
      const info = await store.get?.(keyOf(clientId));
      const now = Date.now();
      if (info === undefined || info.totalHits < options.limit || (info.resetTime !== undefined && info.resetTime.getTime() <= now)) return;
      throw refusal(secondsUntil(info.resetTime, options.windowSeconds, now));
    },
  };
}

export interface TokenIssueLimit {
  /** Tokens issued per client within the window. */
  readonly limit: number;
  readonly windowSeconds: number;
  readonly stores: RateLimitStoreFactory;
}

/**
 * Caps the tokens issued to one client, checked before its secret is verified (so a flood of
 * correct requests stops costing scrypt work). Only issued tokens count: failed requests are
 * taken back once answered.
 */
export function createTokenIssueLimit(options: TokenIssueLimit, clientIdOf: (req: Request) => string | undefined): RequestHandler {
  return rateLimit({
    windowMs: options.windowSeconds * 1000,
    limit: options.limit,
    identifier: 'tokens-issued',
    standardHeaders: false,
    legacyHeaders: false,
    skipFailedRequests: true,
    keyGenerator: (req) => `client:${clientIdOf(req) ?? ''}`,
    store: options.stores('tokens-issued'),
    handler: (req, _res, next) => {
      const retryAfterSeconds = limiterRetryAfter(req, options.windowSeconds);
      next(
        new RequestRefused(
          'rate_limited',
          `Token limit of ${options.limit} per ${options.windowSeconds} seconds reached for this client; reuse the token you have (it is valid until it expires) or retry in ${retryAfterSeconds} seconds`,
          { retryAfterSeconds },
        ),
      );
    },
  });
}

export interface TokenFailureLimits {
  /** Wrong secrets allowed per client id from one address within the window. */
  readonly perAddress: number;
  /**
   * Wrong secrets allowed per client id from all addresses together; past it, only addresses that
   * have not failed for that client may still try (once each), so a distributed guesser slows to a
   * crawl while the subscriber's own machines keep getting tokens.
   */
  readonly perClient: number;
  readonly windowSeconds: number;
  readonly stores: RateLimitStoreFactory;
}

/**
 * Brute-force protection of client secrets (RFC 6749 section 2.3.1 and RFC 6819 section 5.1.4.2.3).
 * Only a secret actually verified and found wrong counts, never a malformed request (which cost no
 * verification) and never a server failure, so neither a stranger's junk nor an outage can lock a
 * subscriber out. Counts are read before and written after the verification, never held while it runs.
 */
export class TokenFailureThrottle {
  readonly #limits: TokenFailureLimits;
  readonly #store: Store;
  readonly #ready: Promise<void>;

  constructor(limits: TokenFailureLimits) {
    this.#limits = limits;
    this.#store = limits.stores('token-failures');
    // express-rate-limit stores read only `windowMs` from the options they are initialised with.
    this.#ready = Promise.resolve(this.#store.init?.({ windowMs: limits.windowSeconds * 1000 } as Options));
  }

  /** Throws `rate_limited` when this address may not try a secret for this client now. */
  async check(clientId: string, address: string): Promise<void> {
    await this.#ready;
    const [fromAddress, fromAll] = await Promise.all([
      this.#store.get?.(pairKey(clientId, address)),
      this.#store.get?.(clientKey(clientId)),
    ]);
    const addressFailures = fromAddress?.totalHits ?? 0;
    const clientFailures = fromAll?.totalHits ?? 0;
    const refused =
      addressFailures >= this.#limits.perAddress || (clientFailures >= this.#limits.perClient && addressFailures > 0);
    if (!refused) return;
    const resetTime = addressFailures >= this.#limits.perAddress ? fromAddress?.resetTime : fromAll?.resetTime;
    const retryAfterSeconds = secondsUntil(resetTime, this.#limits.windowSeconds, Date.now());
    throw new RequestRefused('rate_limited', `Too many failed token requests; retry in ${retryAfterSeconds} seconds`, { retryAfterSeconds });
  }

  /** Counts one wrong secret for this client from this address. */
  async recordFailure(clientId: string, address: string): Promise<void> {
    await this.#ready;
    await Promise.all([this.#store.increment(pairKey(clientId, address)), this.#store.increment(clientKey(clientId))]);
  }
}

/** The address a limit is counted against: IPv4 as is, IPv6 by its /56 (one subscriber's network). */
export function addressOf(req: Request): string {
  return ipKeyGenerator(req.ip ?? '');
}

const pairKey = (clientId: string, address: string): string => `pair:${clientId}|${address}`;
const clientKey = (clientId: string): string => `client:${clientId}`;
