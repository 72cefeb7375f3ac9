import { isIP } from 'node:net';
import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit, type IncrementResponse, type Options, type Store } from 'express-rate-limit';
import type { ClientRegistry, Clock, RateLimitStores } from '../../domain/ports.js';
import { RequestRefused } from './error-responses.js';

/**
 * The gateway's request budgets, all counted in express-rate-limit stores, so that one kind of
 * store (each instance's memory, or one shared by every instance) keeps them all. Every refusal is
 * a thrown `rate_limited` for the error renderer.
 */

/** Seconds until `resetTime`, at least 1 (`Retry-After`, RFC 9110 section 10.2.3). */
function secondsUntil(resetTime: Date | undefined, windowSeconds: number, now: number): number {
  return resetTime === undefined ? windowSeconds : Math.max(1, Math.ceil((resetTime.getTime() - now) / 1000));
}

function limiterRetryAfter(req: Request, windowSeconds: number, clock: Clock): number {
  const resetTime = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
  return secondsUntil(resetTime, windowSeconds, clock.now().getTime());
}

/**
 * Whether the registry knows the client id a request names (answered from the registry's memory,
 * once per request). Limits name a client only when it is registered: every id the registry does
 * not know counts against the address it came from, so the keys of every budget are bounded by
 * registered clients plus addresses, whatever ids a client makes up. A registry that cannot be
 * read knows no one.
 */
export type RegisteredClients = (req: Request, clientId: string) => Promise<boolean>;

export function registeredClients(registry: ClientRegistry): RegisteredClients {
  // Per request, so that its budget and its failure count look the client up once.
  const answers = new WeakMap<Request, { readonly clientId: string; readonly registered: Promise<boolean> }>();
  return (req, clientId) => {
    const known = answers.get(req);
    if (known?.clientId === clientId) return known.registered;
    const registered = registry.find(clientId).then(
      (client) => client !== undefined,
      () => false,
    );
    answers.set(req, { clientId, registered });
    return registered;
  };
}

export interface TokenIssueLimit {
  /** Tokens issued per client within the window. */
  readonly limit: number;
  readonly windowSeconds: number;
  readonly stores: RateLimitStores;
  /** The gateway's clock, which the stores' windows run on (Retry-After counts down on it). */
  readonly clock: Clock;
}

/**
 * Caps the tokens issued to one client, checked before its secret is verified (so a flood of
 * correct requests stops costing scrypt work). Only issued tokens count: failed requests are
 * taken back once answered. Ids the registry does not know share one budget per address.
 */
export function createTokenIssueLimit(
  options: TokenIssueLimit,
  clientIdOf: (req: Request) => string | undefined,
  isRegistered: RegisteredClients,
): RequestHandler {
  return rateLimit({
    windowMs: options.windowSeconds * 1000,
    limit: options.limit,
    identifier: 'tokens-issued',
    standardHeaders: false,
    legacyHeaders: false,
    skipFailedRequests: true,
    keyGenerator: async (req) => {
      const clientId = clientIdOf(req);
      return clientId !== undefined && (await isRegistered(req, clientId)) ? clientKey(clientId) : unregisteredKey(addressOf(req));
    },
    store: options.stores('tokens-issued'),
    handler: (req, _res, next) => {
      const retryAfterSeconds = limiterRetryAfter(req, options.windowSeconds, options.clock);
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
  /**
   * Wrong secrets allowed per client id from one address within the window; all the ids the
   * registry does not know count as one id.
   */
  readonly perAddress: number;
  /**
   * Wrong secrets allowed per client id from all addresses together; past it, only addresses that
   * have not failed for that client may still try (once each), so a distributed guesser slows to a
   * crawl while the subscriber's own machines keep getting tokens. It is also the ceiling of one
   * address over all client ids together, so that one address gets no more than its share of
   * secret verifications whatever ids it names.
   */
  readonly perClient: number;
  readonly windowSeconds: number;
  readonly stores: RateLimitStores;
  /** The gateway's clock, which the stores' windows run on (Retry-After counts down on it). */
  readonly clock: Clock;
}

/** A wrong secret's place, held while the secret is verified. */
export interface FailureReservation {
  /** Gives the place back: the secret was right, or none was verified (a malformed request, a server failure). */
  release(): Promise<void>;
}

/**
 * Brute-force protection of client secrets (RFC 6749 section 2.3.1 and RFC 6819 section 5.1.4.2.3).
 * Only a secret actually verified and found wrong counts, never a malformed request (which cost no
 * verification) and never a server failure, so neither a stranger's junk nor an outage can lock a
 * subscriber out.
 *
 * Each request reserves its failure before its secret is verified (the counts are incremented
 * first, then compared with the limits), so a burst sent in parallel gets at most the limit
 * verified; the reservation is released when the secret was right or never verified.
 */
export class TokenFailureThrottle {
  readonly #limits: TokenFailureLimits;
  readonly #isRegistered: RegisteredClients;
  readonly #store: Store;
  readonly #ready: Promise<void>;

  constructor(limits: TokenFailureLimits, isRegistered: RegisteredClients) {
    this.#limits = limits;
    this.#isRegistered = isRegistered;
    this.#store = limits.stores('token-failures');
    // express-rate-limit stores read only `windowMs` from the options they are initialised with.
    this.#ready = Promise.resolve(this.#store.init?.({ windowMs: limits.windowSeconds * 1000 } as Options));
  }

  /** Reserves a failure of this client id from the request's address, or throws `rate_limited` when it may not try now. */
  async reserve(req: Request, clientId: string): Promise<FailureReservation> {
    await this.#ready;
    const address = addressOf(req);
    const registered = await this.#isRegistered(req, clientId);
    const keys = [registered ? pairKey(clientId, address) : unregisteredKey(address), addressKey(address)];
    if (registered) keys.push(clientKey(clientId));
    const release = async (): Promise<void> => {
      // The store logs its own failures; a count left one too high expires with its window.
      await Promise.allSettled(keys.map((key) => this.#store.decrement(key)));
    };

    const increments = await Promise.allSettled(keys.map((key) => this.#store.increment(key)));
    const failed = increments.find((increment) => increment.status === 'rejected');
    if (failed !== undefined) {
      // The store refuses (RATE_LIMIT_ON_STORE_ERROR=deny): give back the counts that were taken.
      await Promise.allSettled(keys.filter((_key, index) => increments[index]?.status === 'fulfilled').map((key) => this.#store.decrement(key)));
      throw failed.reason;
    }
    const counts = increments.map((increment) => (increment as PromiseFulfilledResult<IncrementResponse>).value);
    const [fromPair, fromAddress, fromClient] = counts as [IncrementResponse, IncrementResponse, IncrementResponse | undefined];
    const refusedBy =
      fromPair.totalHits > this.#limits.perAddress
        ? fromPair
        : fromAddress.totalHits > this.#limits.perClient
          ? fromAddress
          : fromClient !== undefined && fromClient.totalHits > this.#limits.perClient && fromPair.totalHits > 1
            ? fromClient
            : undefined;
    if (refusedBy === undefined) return { release };
    await release();
    const retryAfterSeconds = secondsUntil(refusedBy.resetTime, this.#limits.windowSeconds, this.#limits.clock.now().getTime());
    throw new RequestRefused('rate_limited', `Too many failed token requests; retry in ${retryAfterSeconds} seconds`, { retryAfterSeconds });
  }
}

/**
 * The address a limit is counted against: IPv4 as is, IPv6 by its /56 (one subscriber's network).
 * Behind a trusted proxy (`TRUST_PROXY`) it is the forwarded address, without the `:port` that
 * App Service's front ends may add; a forwarded value that is no IP address counts as the socket's
 * address, so that made-up values cannot each open a budget of their own.
 */
export function addressOf(req: Request): string {
  return ipKeyGenerator(ipAddressIn(req.ip) ?? ipAddressIn(req.socket.remoteAddress) ?? '');
}

/** `text` when it is an IP address, without a port (`203.0.113.1:5000`, `[2001:db8::1]:5000`); otherwise `undefined`. */
export function ipAddressIn(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (isIP(text) !== 0) return text;
  // Anchored, and `.`/`:`/`]` end each run: linear time on any input.
  const hostAndPort = /^(?:\[([0-9A-Fa-f:.]{2,45})\]|([0-9.]{7,15}))(?::[0-9]{1,5})?$/.exec(text);
  const host = hostAndPort?.[1] ?? hostAndPort?.[2];
  return host !== undefined && isIP(host) !== 0 ? host : undefined;
}

const pairKey = (clientId: string, address: string): string => `pair:${clientId}|${address}`;
const clientKey = (clientId: string): string => `client:${clientId}`;
const addressKey = (address: string): string => `address:${address}`;
const unregisteredKey = (address: string): string => `unregistered:${address}`;
