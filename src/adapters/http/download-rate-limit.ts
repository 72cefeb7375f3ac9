import type { Request, Response } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import type { Principal } from '../../domain/ports.js';

export interface DownloadRateLimit {
  /** Downloads allowed per client within the window. */
  readonly limit: number;
  readonly windowSeconds: number;
  /** Where counts are kept; express-rate-limit's in-memory store when absent. */
  readonly store?: Store;
}

export type DownloadLimiter = (req: Request, res: Response, principal: Principal) => Promise<'allowed' | 'limited'>;

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
    handler: (_req, res) => {
      res.set('Cache-Control', 'no-store');
      const retryAfter = res.get('Retry-After') ?? String(options.windowSeconds);
      res.set('Retry-After', retryAfter);
      res.status(429).json({
        error: 'Too many requests',
        message: `Download limit of ${options.limit} per ${options.windowSeconds} seconds reached; retry in ${retryAfter} seconds`,
      });
    },
  });

  return async (req, res, principal) => {
    res.locals['principal'] = principal;
    let allowed = false;
    let failure: unknown;
    await middleware(req, res, (error?: unknown) => {
      if (error !== undefined) failure = error;
      else allowed = true;
    });
    if (failure !== undefined) throw failure;
    return allowed ? 'allowed' : 'limited';
  };
}
