import { LRUCache } from 'lru-cache';
import type { Clock, RateLimitStore, RateLimitStores, WindowCount } from '../../domain/ports.js';

/**
 * Keys one in-memory budget remembers. Every key is a registered client or an address (see
 * `LimitedParty`), so a real deployment stays far below it; past it, the key counted least recently
 * is forgotten (its count starts again), so memory stays bounded (about 150 bytes a key) whatever
 * an attacker sends.
 */
export const MEMORY_STORE_MAX_KEYS = 100_000;

/**
 * lru-cache's options for at most `keys` entries, without its `max`: given `max`, lru-cache sets
 * aside six arrays of `max` slots when it is made (about 4 MB for 100,000 keys with a TTL, empty or
 * not; the gateway's five bounded stores held 20 MB of a 64 MB heap, which every full collection
 * walks). Counting each entry as a size of 1 against `maxSize` keeps the same bound with arrays
 * that grow with the entries held. A full store costs a little more than with `max` (its links are
 * arrays of numbers rather than typed arrays, and each entry has a size): about 10-20 bytes a key.
 */
export function keyCountBound(keys: number): { readonly maxSize: number; readonly sizeCalculation: () => number } {
  return { maxSize: keys, sizeCalculation: () => 1 };
}

/** Each budget's counts in this process's memory, at most `maxKeys` keys each. */
export function boundedMemoryStores(clock: Clock, maxKeys: number = MEMORY_STORE_MAX_KEYS): RateLimitStores {
  return () => new BoundedMemoryStore(maxKeys, clock);
}

interface Count {
  totalHits: number;
  readonly resetTime: Date;
}

/**
 * An express-rate-limit store in a least-recently-used cache (lru-cache) of at most `maxKeys`
 * keys, each forgotten when its window ends. (express-rate-limit's own `MemoryStore` keeps every
 * key of the window, however many.)
 */
export class BoundedMemoryStore implements RateLimitStore {
  readonly localKeys = true;
  #windowMs = 60_000;
  #counts: LRUCache<string, Count>;

  constructor(
    private readonly maxKeys: number,
    private readonly clock: Clock = { now: () => new Date() },
  ) {
    this.#counts = this.#newCounts();
  }

  /**
   * Ages are read from the gateway's clock at every call, so that a test's clock moves the windows.
   * The bound is counted as a size of 1 a key (`keyCountBound`), so memory follows the keys held.
   */
  #newCounts(): LRUCache<string, Count> {
    return new LRUCache({ ...keyCountBound(this.maxKeys), ttl: this.#windowMs, ttlResolution: 0, perf: { now: () => this.clock.now().getTime() } });
  }

  /** Keys remembered now. */
  get size(): number {
    return this.#counts.size;
  }

  init(options: { readonly windowMs: number }): void {
    this.#windowMs = options.windowMs;
    this.#counts = this.#newCounts();
  }

  async get(key: string): Promise<WindowCount | undefined> {
    const count = this.#current(key);
    return count === undefined ? undefined : { totalHits: count.totalHits, resetTime: count.resetTime };
  }

  async increment(key: string): Promise<WindowCount> {
    let count = this.#current(key);
    if (count === undefined) {
      count = { totalHits: 0, resetTime: new Date(this.clock.now().getTime() + this.#windowMs) };
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
    if (count === undefined || count.resetTime.getTime() > this.clock.now().getTime()) return count;
    this.#counts.delete(key);
    return undefined;
  }
}

