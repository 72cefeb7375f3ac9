import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, MemoryStore, rateLimit, type Options, type Store } from 'express-rate-limit';
import type { Principal } from '../../domain/ports.js';
import { RequestRefused } from './error-responses.js';

/**
 * The gateway's request budgets, all counted in express-rate-limit stores, so that one kind of
 * store (each instance's memory, or one shared by every instance) keeps them all. Every refusal is
 * a thrown `rate_limited` for the error renderer.
 */

/** Makes a store for one budget; each budget gets its own, initialised with its own window. */
export type RateLimitStoreFactory = (name: string) => Store;

export const memoryStores: RateLimitStoreFactory = () => new MemoryStore();

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

/** Counts one download; throws the `rate_limited` refusal when the client's budget is spent. */
export type DownloadLimiter = (req: Request, res: Response, principal: Principal) => Promise<void>;

/**
 * Counts a download against its client's budget. Called by the download handler only for
 * responses that are not 304, so revalidating a cached file is never counted nor refused.
 */
export function createDownloadLimiter(options: DownloadRateLimit): DownloadLimiter {
  const middleware = rateLimit({
    windowMs: options.windowSeconds * 1000,
    limit: options.limit,
    identifier: 'downloads',
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (_req, res) => `client:${(res.locals['principal'] as Principal).clientId}`,
    store: options.stores('downloads'),
    handler: (req, _res, next) => {
      const retryAfterSeconds = limiterRetryAfter(req, options.windowSeconds);
      next(
        new RequestRefused(
          'rate_limited',
          `Download limit of ${options.limit} per ${options.windowSeconds} seconds reached; retry in ${retryAfterSeconds} seconds`,
          { retryAfterSeconds },
        ),
      );
    },
  });

  return async (req, res, principal) => {
    res.locals['principal'] = principal;
    let failure: unknown;
    await middleware(req, res, (error?: unknown) => {
      failure = error;
    });
    if (failure !== undefined) throw failure;
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
