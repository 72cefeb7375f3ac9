import { expect } from 'chai';
import { pino } from 'pino';
import { createDownloadLimit } from '../../src/adapters/limits/window-limits.js';
import { boundedMemoryStores } from '../../src/adapters/limits/memory-rate-limit-store.js';
import { resilientStores } from '../../src/adapters/limits/resilient-stores.js';
import { redisStores } from '../../src/adapters/redis/redis-rate-limit-stores.js';
import { LimitsUnavailable, RateLimited } from '../../src/domain/errors.js';
import type { Clock, RateLimitStore, RateLimitStores } from '../../src/domain/ports.js';
import { sharedRedis, uniqueKeyPrefix } from '../support/redis.js';

/** The RateLimitStore port's contract and the DownloadLimit over it, run against every adapter. */
const WINDOW_MS = 60_000;
const quiet = pino({ level: 'silent' });

class MovableClock implements Clock {
  at = Date.parse('2026-11-26T10:00:00Z');
  now(): Date {
    return new Date(this.at);
  }
}

interface Adapter {
  readonly name: string;
  /** Stores, and the clock their windows run on (`undefined`: the wall clock, as Redis's expiries). */
  readonly make: () => { stores: RateLimitStores; clock: MovableClock | undefined; close: () => Promise<void> };
}

const redisAdapter = (wrap: boolean): Adapter['make'] => () => {
  const redis = sharedRedis();
  const prefix = uniqueKeyPrefix('rate-limit-store');
  const inner = redisStores(redis, prefix);
  return {
    stores: wrap ? resilientStores(inner, 'deny', quiet, { now: () => new Date() }) : inner,
    clock: undefined,
    close: async () => {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    },
  };
};

const adapters: Adapter[] = [
  {
    name: 'BoundedMemoryStore (on the injected clock)',
    make: () => {
      const clock = new MovableClock();
      return { stores: boundedMemoryStores(clock), clock, close: async () => undefined };
    },
  },
  {
    name: 'the resilient wrapper over memory',
    make: () => {
      const clock = new MovableClock();
      return { stores: resilientStores(boundedMemoryStores(clock), 'deny', quiet, clock), clock, close: async () => undefined };
    },
  },
  { name: 'the Redis store (the machine’s Redis)', make: redisAdapter(false) },
  { name: 'the resilient wrapper over Redis', make: redisAdapter(true) },
];

for (const adapter of adapters) {
  describe(`RateLimitStore contract: ${adapter.name}`, function () {
    let store: RateLimitStore;
    let made: ReturnType<Adapter['make']>;

    beforeEach(async function () {
      made = adapter.make();
      store = made.stores('contract');
      await store.init?.({ windowMs: WINDOW_MS });
    });

    afterEach(async function () {
      await made.close();
    });

    it('starts a key at one, with the window ending about one window from now', async function () {
      const now = made.clock?.now().getTime() ?? Date.now();
      const first = await store.increment('client:acme');
      expect(first.totalHits).to.equal(1);
      expect(first.resetTime?.getTime()).to.be.within(now + WINDOW_MS - 2000, now + WINDOW_MS + 2000);
    });

    it('counts up per key, and reads the count without adding to it', async function () {
      await store.increment('client:acme');
      await store.increment('client:acme');
      await store.increment('client:other');
      expect((await store.get?.('client:acme'))?.totalHits).to.equal(2);
      expect((await store.get?.('client:other'))?.totalHits).to.equal(1);
      expect(await store.get?.('client:nobody')).to.equal(undefined);
    });

    it('takes one back, never below zero, and forgets a reset key', async function () {
      await store.increment('client:acme');
      await store.decrement('client:acme');
      await store.decrement('client:acme');
      expect((await store.get?.('client:acme'))?.totalHits ?? 0).to.equal(0);
      await store.increment('client:acme');
      await store.resetKey('client:acme');
      expect((await store.increment('client:acme')).totalHits).to.equal(1);
    });

    it('gives each of 50 concurrent increments its own count', async function () {
      const counts = await Promise.all(Array.from({ length: 50 }, () => store.increment('client:acme')));
      expect(counts.map((count) => count.totalHits).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 50 }, (_, i) => i + 1));
    });

    if (adapter.name.includes('memory') || adapter.name.includes('Memory')) {
      it('starts a new window once the clock passes the end of the last one', async function () {
        await store.increment('client:acme');
        await store.increment('client:acme');
        if (made.clock !== undefined) made.clock.at += WINDOW_MS;
        expect((await store.increment('client:acme')).totalHits).to.equal(1);
      });
    }

    it('makes a DownloadLimit that counts to its limit, then refuses with RateLimited, Retry-After and the standing', async function () {
      const limit = createDownloadLimit({ limit: 3, windowSeconds: WINDOW_MS / 1000, stores: made.stores, clock: made.clock ?? { now: () => new Date() } });
      await limit.refuseIfSpent('acme');
      expect((await limit.count('acme'))?.remaining).to.equal(2);
      await limit.count('acme');
      expect((await limit.count('acme'))?.remaining).to.equal(0);
      const refusal = await limit.count('acme').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refusal).to.be.instanceOf(RateLimited);
      expect((refusal as RateLimited).retryAfterSeconds).to.be.within(1, WINDOW_MS / 1000);
      expect((refusal as RateLimited).standing).to.include({ name: 'downloads', limit: 3, remaining: 0 });
      const spent = await limit.refuseIfSpent('acme').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(spent).to.be.instanceOf(RateLimited);
      await limit.refuseIfSpent('other');
    });
  });
}

describe('the resilient wrapper while its store fails', function () {
  const failing: RateLimitStores = () => ({
    increment: async () => Promise.reject(new Error('store down')),
    decrement: async () => Promise.reject(new Error('store down')),
    resetKey: async () => Promise.reject(new Error('store down')),
    get: async () => Promise.reject(new Error('store down')),
  });
  const clock = new MovableClock();

  it('with RATE_LIMIT_ON_STORE_ERROR=allow, lets every request through as the first of its window', async function () {
    const store = resilientStores(failing, 'allow', quiet, clock)('contract');
    expect((await store.increment('client:acme')).totalHits).to.equal(1);
    expect((await store.increment('client:acme')).totalHits).to.equal(1);
  });

  it('with RATE_LIMIT_ON_STORE_ERROR=deny, refuses with LimitsUnavailable and a Retry-After', async function () {
    const store = resilientStores(failing, 'deny', quiet, clock)('contract');
    const refusal = await store.increment('client:acme').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).to.be.instanceOf(LimitsUnavailable);
    expect((refusal as LimitsUnavailable).retryAfterSeconds).to.be.greaterThan(0);
  });
});
