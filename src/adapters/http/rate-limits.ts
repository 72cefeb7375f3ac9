import { isIP } from 'node:net';
import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit, type ClientRateLimitInfo, type IncrementResponse, type Options, type Store } from 'express-rate-limit';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { LimitsUnavailable, RateLimited, type BudgetStanding } from '../../domain/errors.js';
import type { ClientRegistry, DownloadLimit } from '../../domain/ports.js';
import { RequestRefused } from './error-responses.js';

/**
 * The gateway's request budgets, all counted in express-rate-limit stores, so that one kind of
 * store (each instance's memory, or one shared by every instance) keeps them all. Every refusal is
 * a thrown `rate_limited` for the error renderer.
 */

/** Makes a store for one budget; each budget gets its own, initialised with its own window. */
export type RateLimitStoreFactory = (name: string) => Store;

/**
 * Keys one in-memory budget remembers. Every key is a registered client or an address (see
 * `LimitedParty`), so a real deployment stays far below it; past it, the key counted least recently
 * is forgotten (its count starts again), so memory stays bounded (about 150 bytes a key) whatever
 * an attacker sends.
 */
export const MEMORY_STORE_MAX_KEYS = 100_000;

/** Each budget's counts in this process's memory, at most `maxKeys` keys each. */
export function boundedMemoryStores(maxKeys: number = MEMORY_STORE_MAX_KEYS): RateLimitStoreFactory {
  return () => new BoundedMemoryStore(maxKeys);
}

export const memoryStores: RateLimitStoreFactory = boundedMemoryStores();

interface Count {
  totalHits: number;
  readonly resetTime: Date;
}

/**
 * An express-rate-limit store in a least-recently-used cache (lru-cache) of at most `maxKeys`
 * keys, each forgotten when its window ends. (express-rate-limit's own `MemoryStore` keeps every
 * key of the window, however many.)
 */
export class BoundedMemoryStore implements Store {
  readonly localKeys = true;
  #windowMs = 60_000;
  #counts: LRUCache<string, Count>;

  constructor(private readonly maxKeys: number) {
    this.#counts = new LRUCache({ max: maxKeys, ttl: this.#windowMs });
  }

  /** Keys remembered now. */
  get size(): number {
    return this.#counts.size;
  }

  init(options: Options): void {
    this.#windowMs = options.windowMs;
    this.#counts = new LRUCache({ max: this.maxKeys, ttl: this.#windowMs });
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const count = this.#current(key);
    return count === undefined ? undefined : { totalHits: count.totalHits, resetTime: count.resetTime };
  }

  async increment(key: string): Promise<IncrementResponse> {
    let count = this.#current(key);
    if (count === undefined) {
      count = { totalHits: 0, resetTime: new Date(Date.now() + this.#windowMs) };
      this.#counts.set(key, count);
    }
    count.totalHits += 1;
    return { totalHits: count.totalHits, resetTime: count.resetTime };
  }

  async decrement(key: string): Promise<void> {
    // A count whose window has ended is not brought back by taking a request back.
    const count = this.#current(key);
    if (count !== undefined && count.totalHits > 0) count.totalHits -= 1;
  }

  async resetKey(key: string): Promise<void> {
    this.#counts.delete(key);
  }

  #current(key: string): Count | undefined {
    const count = this.#counts.get(key);
    if (count === undefined || count.resetTime.getTime() > Date.now()) return count;
    this.#counts.delete(key);
    return undefined;
  }
}

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
      throw new LimitsUnavailable('The request limits cannot be checked right now; retry shortly', {
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

/**
 * The download budget (`DownloadLimit`, the core's port) counted in an express-rate-limit store, so
 * that the budget lives in the same store as every other limit (each instance's memory, or Redis
 * shared by the fleet). What counts as a download is the core's rule (`src/application/metering.ts`).
 */
export function createDownloadLimit(options: DownloadRateLimit): DownloadLimit {
  const store = options.stores('downloads');
  const windowMs = options.windowSeconds * 1000;
  // express-rate-limit stores read only `windowMs` from the options they are initialised with.
  const ready = Promise.resolve(store.init?.({ windowMs } as Options));
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
      const now = Date.now();
      if (info === undefined || info.totalHits < options.limit || (info.resetTime !== undefined && info.resetTime.getTime() <= now)) return;
      throw refusal(secondsUntil(info.resetTime, options.windowSeconds, now));
    },
    async count(clientId) {
      await ready;
      const key = keyOf(clientId);
      const { totalHits, resetTime } = await store.increment(key);
      const resetSeconds = secondsUntil(resetTime, options.windowSeconds, Date.now());
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
  readonly stores: RateLimitStoreFactory;
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
  readonly stores: RateLimitStoreFactory;
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
    const retryAfterSeconds = secondsUntil(refusedBy.resetTime, this.#limits.windowSeconds, Date.now());
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
