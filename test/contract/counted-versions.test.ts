import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createHash } from 'node:crypto';
import { getHeapStatistics } from 'node:v8';
import { COUNTED_VERSIONS_KEPT, memoryCountedVersions } from '../../src/adapters/limits/memory-counted-versions.js';
import type { CountedVersions } from '../../src/domain/ports.js';
import { redisCountedVersions } from '../../src/adapters/redis/redis-counted-versions.js';
import type { Clock } from '../../src/domain/ports.js';
import { quietLogger } from '../support/gateway.js';
import { sharedRedis, uniqueKeyPrefix } from '../support/redis.js';
import { collectGarbage } from '../support/heap.js';

const WINDOW_MS = 60_000;

/** A clock that moves only when the test says. */
class FixedClock implements Clock {
  at = Date.parse('2026-01-02T03:04:05Z');
  now(): Date {
    return new Date(this.at);
  }
}

/** The cases every store of counted versions passes. */
function countedVersionsContract(name: string, make: () => CountedVersions): void {
  describe(`counted download versions (${name})`, function () {
    let versions: CountedVersions;

    beforeEach(function () {
      versions = make();
    });

    it('claims a version once: the first request counts, the next ones of the same version do not', async function () {
      expect(await versions.counted('acme', 'data/a.parquet')).to.equal(undefined);
      expect(await versions.claim('acme', 'data/a.parquet', '"v1"')).to.equal(true);
      for (let i = 0; i < 5; i += 1) expect(await versions.claim('acme', 'data/a.parquet', '"v1"')).to.equal(false);
      expect(await versions.counted('acme', 'data/a.parquet')).to.equal('"v1"');
    });

    it('claims a changed version (another ETag) again', async function () {
      expect(await versions.claim('acme', 'data/a.parquet', '"v1"')).to.equal(true);
      expect(await versions.claim('acme', 'data/a.parquet', '"v2"')).to.equal(true);
      expect(await versions.claim('acme', 'data/a.parquet', '"v2"')).to.equal(false);
    });

    it('keeps clients and files apart', async function () {
      expect(await versions.claim('acme', 'data/a.parquet', '"v1"')).to.equal(true);
      expect(await versions.claim('beta', 'data/a.parquet', '"v1"')).to.equal(true);
      expect(await versions.claim('acme', 'data/b.parquet', '"v1"')).to.equal(true);
      // No ambiguity where the client id ends and the path begins.
      expect(await versions.claim('acme/data', 'a.parquet', '"v1"')).to.equal(true);
    });

    it('releases a claim (a refused download), but not another version claimed since', async function () {
      expect(await versions.claim('acme', 'data/a.parquet', '"v1"')).to.equal(true);
      await versions.release('acme', 'data/a.parquet', '"v1"');
      expect(await versions.counted('acme', 'data/a.parquet')).to.equal(undefined);
      expect(await versions.claim('acme', 'data/a.parquet', '"v1"')).to.equal(true);
      expect(await versions.claim('acme', 'data/a.parquet', '"v2"')).to.equal(true);
      await versions.release('acme', 'data/a.parquet', '"v1"');
      expect(await versions.counted('acme', 'data/a.parquet')).to.equal('"v2"');
    });
  });
}

countedVersionsContract('this instance\'s memory', () => memoryCountedVersions(new FixedClock())(WINDOW_MS));

describe('counted download versions in this instance\'s memory', function () {
  it('forgets a version a window after it was first counted (on the gateway\'s clock), however often it is read', async function () {
    const clock = new FixedClock();
    const versions = memoryCountedVersions(clock)(WINDOW_MS);
    expect(await versions.claim('acme', 'data/a.parquet', '"v1"')).to.equal(true);
    clock.at += WINDOW_MS - 1;
    expect(await versions.claim('acme', 'data/a.parquet', '"v1"')).to.equal(false);
    // Just past the window.
    clock.at += 2;
    expect(await versions.claim('acme', 'data/a.parquet', '"v1"')).to.equal(true);
  });

  it('keeps at most its bound of (client, file) pairs, forgetting the least recently used (which then counts again)', async function () {
    const versions = memoryCountedVersions(new FixedClock(), 3)(WINDOW_MS);
    for (const file of ['a', 'b', 'c']) expect(await versions.claim('acme', file, '"v1"')).to.equal(true);
    expect(await versions.claim('acme', 'a', '"v1"')).to.equal(false);
    expect(await versions.claim('acme', 'd', '"v1"')).to.equal(true);
    // b was the least recently used: forgotten, so counted again.
    expect(await versions.counted('acme', 'b')).to.equal(undefined);
    expect(await versions.counted('acme', 'a')).to.equal('"v1"');
  });

  it('sets aside no memory for its bound: ten empty windows of 100,000 pairs take well under 1 MB of heap (lru-cache with max took 30-40 MB)', async function () {
    collectGarbage();
    const before = getHeapStatistics().used_heap_size;
    const windows = Array.from({ length: 10 }, () => memoryCountedVersions(new FixedClock(), COUNTED_VERSIONS_KEPT)(WINDOW_MS));
    collectGarbage();
    const grown = getHeapStatistics().used_heap_size - before;
    expect(await windows[9]?.counted('acme', 'a')).to.equal(undefined);
    expect(grown).to.be.below(1024 * 1024);
  });
});

describe('counted download versions in Redis (shared by every instance)', function () {
  let redis: Redis;
  let keyPrefix: string;

  before(function () {
    redis = sharedRedis();
  });

  after(function () {
    redis.disconnect();
  });

  beforeEach(function () {
    keyPrefix = uniqueKeyPrefix('counted-versions');
  });

  countedVersionsContract('Redis', () => redisCountedVersions(redis, keyPrefix, quietLogger)(WINDOW_MS));

  it('keeps one key per client and file, named by a hash, that expires a window after the version was first counted', async function () {
    const versions = redisCountedVersions(redis, keyPrefix, quietLogger)(WINDOW_MS);
    await versions.claim('acme', 'data/a.parquet', '"v1"');
    const key = `${keyPrefix}download-versions:${createHash('sha256').update('acme').update('\0').update('data/a.parquet').digest('base64url')}`;
    expect(await redis.keys(`${keyPrefix}*`)).to.deep.equal([key]);
    expect(key).not.to.include('acme').and.not.to.include('parquet');
    const ttl = await redis.pttl(key);
    expect(ttl).to.be.above(0).and.at.most(WINDOW_MS);
    // Reading the same version again does not extend the window.
    await redis.pexpire(key, 5000);
    expect(await versions.claim('acme', 'data/a.parquet', '"v1"')).to.equal(false);
    expect(await redis.pttl(key)).to.be.at.most(5000);
  });

  it('counts every download while Redis fails (never lets one through uncounted)', async function () {
    const broken = sharedRedis();
    broken.disconnect();
    const versions = redisCountedVersions(broken, keyPrefix, quietLogger)(WINDOW_MS);
    expect(await versions.claim('acme', 'data/a.parquet', '"v1"')).to.equal(true);
    expect(await versions.claim('acme', 'data/a.parquet', '"v1"')).to.equal(true);
    expect(await versions.counted('acme', 'data/a.parquet')).to.equal(undefined);
  });
});
