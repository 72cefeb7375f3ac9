import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit, type Store } from 'express-rate-limit';
import type { Principal } from '../../domain/ports.js';
import { RequestRefused } from './error-responses.js';

/**
 * The gateway's request budgets, all on express-rate-limit so that one store (in memory, or shared
 * by every instance) counts them. Every refusal is written by the error renderer.
 */

export interface DownloadRateLimit {
  /** Downloads allowed per client within the window. */
  readonly limit: number;
  readonly windowSeconds: number;
  /** Where counts are kept; express-rate-limit's in-memory store when absent. */
  readonly store?: Store;
}

/** Counts one download; throws the `rate_limited` refusal when the client's budget is spent. */
export type DownloadLimiter = (req: Request, res: Response, principal: Principal) => Promise<void>;

/** Seconds until the limiter's window resets, at least 1 (`Retry-After`, RFC 9110 section 10.2.3). */
function secondsUntilReset(req: Request, windowSeconds: number): number {
  const resetTime = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
  return resetTime === undefined ? windowSeconds : Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000));
}

/**
 * Counts a download against its client's budget, answering 429 with `Retry-After` when the budget
 * is spent. Called by the download handler only for responses that are not 304, so revalidating a
 * cached file is never counted nor refused.
 */
export function createDownloadLimiter(options: DownloadRateLimit): DownloadLimiter {
  const middleware = rateLimit({
    windowMs: options.windowSeconds * 1000,
    limit: options.limit,
    identifier: 'downloads',
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (_req, res) => `client:${(res.locals['principal'] as Principal).clientId}`,
    ...(options.store !== undefined && { store: options.store }),
    handler: (req, _res, next) => {
      const retryAfterSeconds = secondsUntilReset(req, options.windowSeconds);
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

export interface TokenThrottle {
  /** Failed token requests allowed per client id within the window; ten times as many per address. */
  readonly failuresPerClient: number;
  readonly windowSeconds: number;
  readonly store?: () => Store;
}

/** The client id a token request names, from HTTP Basic or the parsed body. */
export type ClientIdOf = (req: Request) => string | undefined;

/**
 * Throttles of failed token requests: per address (before the body is even read) and per client id
 * (once it is known). Successful requests are not counted.
 */
export function createTokenThrottles(options: TokenThrottle, clientIdOf: ClientIdOf): { perAddress: RequestHandler; perClient: RequestHandler } {
  const throttle = (name: string, limit: number, key: (req: Request) => string): RequestHandler =>
    rateLimit({
      windowMs: options.windowSeconds * 1000,
      limit,
      identifier: name,
      standardHeaders: false,
      legacyHeaders: false,
      skipSuccessfulRequests: true,
      keyGenerator: key,
      ...(options.store !== undefined && { store: options.store() }),
      handler: (req, _res, next) => {
        const retryAfterSeconds = secondsUntilReset(req, options.windowSeconds);
        next(new RequestRefused('rate_limited', `Too many failed token requests; retry in ${retryAfterSeconds} seconds`, { retryAfterSeconds }));
      },
    });
  return {
    perAddress: throttle('token-failures-per-address', options.failuresPerClient * 10, (req) => ipKeyGenerator(req.ip ?? '')),
    perClient: throttle('token-failures-per-client', options.failuresPerClient, (req) => `client:${clientIdOf(req) ?? ''}`),
  };
}
