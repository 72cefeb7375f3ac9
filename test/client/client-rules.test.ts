import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { decideRetry, defaultRetryOptions, parseRetryAfter } from '../../client/src/retry-policy.js';
import { AdaptiveConcurrency } from '../../client/src/sync/adaptive-concurrency.js';
import { localPathFor } from '../../client/src/sync/local-path.js';
import { TokenCache } from '../../client/src/token-cache.js';

const options = { ...defaultRetryOptions, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 30_000 };
const always = (value: number) => () => value;
const now = Date.parse('2026-11-22T10:00:00Z');

describe('client rules', function () {
  describe('decideRetry', function () {
    it('when 429 carries Retry-After: 7, waits at least 7 s', function () {
      const decision = decideRetry({ status: 429, retryAfter: '7' }, 0, options, always(0), now);
      expect(decision).to.deep.include({ retry: true, reason: 'rate_limited', retryAfterMs: 7000, delayMs: 7000 });
    });

    it('when 503 carries Retry-After as an HTTP date, waits until then', function () {
      const decision = decideRetry({ status: 503, retryAfter: 'Sun, 22 Nov 2026 10:00:05 GMT' }, 0, options, always(0), now);
      expect(decision).to.deep.include({ retry: true, reason: 'unavailable', delayMs: 5000 });
    });

    it('when Retry-After exceeds the cap, waits the cap', function () {
      const decision = decideRetry({ status: 429, retryAfter: '3600' }, 0, options, always(0), now);
      expect(decision).to.deep.include({ retry: true, delayMs: 30_000 });
    });

    it('when Retry-After is more than a day away (a monthly quota used up), does not retry', function () {
      expect(decideRetry({ status: 429, retryAfter: String(86_401) }, 0, options, always(0), now)).to.deep.equal({ retry: false });
      expect(decideRetry({ status: 429, retryAfter: String(86_400) }, 0, options, always(0), now)).to.deep.include({ retry: true, delayMs: 30_000 });
    });

    it('when a 500 or a connection failure repeats, backs off exponentially under the ceiling, with jitter', function () {
      const delays = [0, 1, 2, 3, 4, 5].map((retries) => {
        const decision = decideRetry({ status: 500 }, retries, options, always(1), now);
        return decision.retry ? decision.delayMs : -1;
      });
      expect(delays).to.deep.equal([100, 200, 400, 800, 1000, 1000]);
      const jittered = decideRetry({ connectionFailed: true }, 3, options, always(0.25), now);
      expect(jittered).to.deep.include({ retry: true, reason: 'connection_failed', delayMs: 200 });
    });

    for (const status of [400, 401, 403, 404, 408, 412, 416, 501]) {
      it(`when the answer is ${status}, does not retry`, function () {
        expect(decideRetry({ status }, 0, options, always(0), now)).to.deep.equal({ retry: false });
      });
    }

    it('when the retries are spent, does not retry', function () {
      expect(decideRetry({ status: 503, retryAfter: '1' }, options.maxRetries, options, always(0), now)).to.deep.equal({ retry: false });
    });

    it('when Retry-After is garbage, reads nothing', function () {
      expect(parseRetryAfter('soon', now)).to.equal(undefined);
      expect(parseRetryAfter('-3', now)).to.equal(undefined);
      expect(parseRetryAfter(null, now)).to.equal(undefined);
    });
  });

  describe('AdaptiveConcurrency', function () {
    it('when throttled, halves down to 1; several 429s without a success in between count once', function () {
      const limit = new AdaptiveConcurrency(8);
      limit.throttled();
      limit.throttled();
      expect(limit.limit).to.equal(4);
      limit.succeeded();
      limit.throttled();
      limit.succeeded();
      limit.throttled();
      limit.succeeded();
      limit.throttled();
      expect(limit.limit).to.equal(1);
    });

    it('when transfers keep succeeding, grows by one per four successes up to the maximum', function () {
      const limit = new AdaptiveConcurrency(4);
      limit.throttled();
      expect(limit.limit).to.equal(2);
      for (let index = 0; index < 4; index += 1) limit.succeeded();
      expect(limit.limit).to.equal(3);
      for (let index = 0; index < 40; index += 1) limit.succeeded();
      expect(limit.limit).to.equal(4);
    });

    it('when the limit is reached, holds further acquires until a release', async function () {
      const limit = new AdaptiveConcurrency(2);
      await limit.acquire();
      await limit.acquire();
      let third = false;
      const waiting = limit.acquire().then(() => {
        third = true;
      });
      await Promise.resolve();
      expect(third).to.equal(false);
      limit.release();
      await waiting;
      expect(third).to.equal(true);
    });
  });

  describe('localPathFor (storage paths from the server are hostile)', function () {
    const dir = resolve('/tmp/mirror');
    for (const hostile of ['../etc/passwd', 'a/../../b', '/etc/passwd', 'a\\..\\b', 'a//b', './a', 'a/.', 'C:/x', 'a/con.txt', 'a\u0000b', '', 'x.part', 'a/b.part.json', '.dfg-manifest.json']) {
      it(`when the path is ${JSON.stringify(hostile)}, refuses it with unsafe_path`, function () {
        expect(() => localPathFor(dir, hostile)).to.throw().with.property('code', 'unsafe_path');
      });
    }

    // The mirror's own names, wherever they would collide: a folder named like a part, the manifest's
    // temporary file, and on case-insensitive file systems (macOS, Windows) another case.
    for (const colliding of ['x.part/y', 'a/x.part.json/y', '.dfg-manifest.json.4242.tmp', 'X.PART', 'a/B.Part.Json', '.DFG-Manifest.JSON']) {
      it(`when the path ${JSON.stringify(colliding)} collides with the mirror's own files, refuses it with unsafe_path`, function () {
        expect(() => localPathFor(dir, colliding)).to.throw().with.property('code', 'unsafe_path');
      });
    }

    it('when the path is ordinary, places it under the folder', function () {
      expect(localPathFor(dir, 'b3/cotahist/COTAHIST 2024.parquet')).to.equal(join(dir, 'b3', 'cotahist', 'COTAHIST 2024.parquet'));
    });
  });

  describe('TokenCache', function () {
    it('when many callers find no token, asks for exactly one (single flight)', async function () {
      let issued = 0;
      const cache = new TokenCache({ now: () => now, refreshMarginSeconds: 60, issue: async () => ({ accessToken: `t${++issued}`, expiresInSeconds: 3600 }) });

      const tokens = await Promise.all(Array.from({ length: 10 }, () => cache.token()));

      expect(new Set(tokens)).to.deep.equal(new Set(['t1']));
      expect(issued).to.equal(1);
    });

    it('when 60 s remain, refreshes; before that, reuses', async function () {
      let clock = now;
      let issued = 0;
      const cache = new TokenCache({ now: () => clock, refreshMarginSeconds: 60, issue: async () => ({ accessToken: `t${++issued}`, expiresInSeconds: 3600 }) });
      await cache.token();
      clock = now + 3539_000;
      expect(await cache.token()).to.equal('t1');
      clock = now + 3540_000;
      expect(await cache.token()).to.equal('t2');
    });

    it('when the token lives 10 s, refreshes at half its life rather than on every call', async function () {
      let clock = now;
      let issued = 0;
      const cache = new TokenCache({ now: () => clock, refreshMarginSeconds: 60, issue: async () => ({ accessToken: `t${++issued}`, expiresInSeconds: 10 }) });
      await cache.token();
      clock = now + 4_999;
      expect(await cache.token()).to.equal('t1');
      clock = now + 5_000;
      expect(await cache.token()).to.equal('t2');
    });

    it('when a refused token was already replaced, invalidating it keeps the new one', async function () {
      let issued = 0;
      const cache = new TokenCache({ now: () => now, refreshMarginSeconds: 60, issue: async () => ({ accessToken: `t${++issued}`, expiresInSeconds: 3600 }) });
      await cache.token();
      cache.invalidate('t1');
      expect(await cache.token()).to.equal('t2');
      cache.invalidate('t1');
      expect(await cache.token()).to.equal('t2');
    });
  });
});
