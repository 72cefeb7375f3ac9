import { randomBytes } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { ScryptSecretHasher } from '../../src/adapters/clients/secret-hash.js';
import type { Options } from 'express-rate-limit';
import { boundedMemoryStores } from '../../src/adapters/limits/memory-rate-limit-store.js';
import type { RateLimitStore, RateLimitStores } from '../../src/domain/ports.js';
import { GatewayMetrics } from '../../src/adapters/metrics/gateway-metrics.js';
import { redisStores } from '../../src/adapters/redis/redis-rate-limit-stores.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { SecretHasher } from '../../src/domain/ports.js';
import type { HttpResponse } from '../support/contract.js';
import { startGateway, type RequestOptions, type TestClient, type TestGateway } from '../support/gateway.js';
import { capturedAudit } from '../support/audit-capture.js';
import { jsonOf, type ErrorBody, type OAuthErrorBody } from '../support/json.js';
import { sharedRedis, uniqueKeyPrefix } from '../support/redis.js';

/*
 * Issue 16: what an attack from outside found at POST /oauth/token.
 *
 * RFC 6749 section 2.3.1: "Since this client authentication method involves a password, the
 * authorization server MUST protect any endpoint utilizing it against brute force attacks."
 * RFC 6819 section 5.1.4.2.3 (and 4.4.1.3): count failed attempts, lock out attackers, not clients.
 * Every limit must itself be bounded: a limit keyed by whatever a client sends is a way in.
 */

const acme: TestClient = { clientId: 'acme', secret: 'acme-secret-acme-secret' };
const other: TestClient = { clientId: 'other', secret: 'other-secret-other-secret' };
const third: TestClient = { clientId: 'third', secret: 'third-secret-third-secret' };
const quiet: TestClient = { clientId: 'quiet', secret: 'quiet-secret-quiet-secret' };

/** Addresses as App Service's front ends forward them (X-Forwarded-For, with TRUST_PROXY). */
const attacker = '198.51.100.7';
const subscriber = '203.0.113.1';

function tokenRequest(clientId: string, secret: string, address: string): RequestOptions {
  return {
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString(),
  };
}

/** A client id nobody registered, `length` characters long. */
const madeUpId = (length: number): string => randomBytes(Math.ceil(length / 2)).toString('hex').slice(0, length);

/**
 * The real scrypt hasher, recording every verification as it starts (by the secret presented), and
 * holding them while `hold()` is in force: a count of the work done, never a time.
 */
class CountingHasher implements SecretHasher {
  readonly started: string[] = [];
  readonly events = new EventEmitter();
  readonly #inner = new ScryptSecretHasher({ concurrency: 4 });
  #held: Promise<void> | undefined;
  #release: (() => void) | undefined;

  hold(): void {
    this.#held = new Promise((resolve) => {
      this.#release = resolve;
    });
  }

  release(): void {
    this.#release?.();
    this.#held = undefined;
  }

  async verify(secret: string, hash: string): Promise<boolean> {
    this.started.push(secret);
    this.events.emit('started', this.started.length);
    await this.#held;
    return this.#inner.verify(secret, hash);
  }

  decoyHash(): Promise<string> {
    return this.#inner.decoyHash();
  }

  fingerprint(hash: string): string {
    return this.#inner.fingerprint(hash);
  }
}

/** Stores from `factory`, recording every key they are asked to count, by budget. */
function keyRecordingStores(factory: RateLimitStores): { stores: RateLimitStores; keys: Map<string, Set<string>> } {
  const keys = new Map<string, Set<string>>();
  const stores: RateLimitStores = (name) => {
    const inner = factory(name);
    const counted = new Set<string>();
    keys.set(name, counted);
    const store: RateLimitStore = {
      localKeys: inner.localKeys ?? false,
      init: (options) => inner.init?.(options),
      get: async (key) => inner.get?.(key),
      increment: async (key) => {
        counted.add(key);
        return inner.increment(key);
      },
      decrement: async (key) => inner.decrement(key),
      resetKey: async (key) => inner.resetKey(key),
    };
    return store;
  };
  return { stores, keys };
}

function allKeys(keys: Map<string, Set<string>>): string[] {
  return [...keys.entries()].flatMap(([name, counted]) => [...counted].map((key) => `${name}:${key}`));
}

/** Resolves once `count` of `responses` have settled with `status`. */
function whenAnswered(responses: ReadonlyArray<Promise<HttpResponse>>, status: number, count: number): Promise<void> {
  let seen = 0;
  return new Promise((resolve) => {
    if (count === 0) resolve();
    for (const response of responses) {
      void response.then((answer) => {
        if (answer.status === status && (seen += 1) === count) resolve();
      });
    }
  });
}

function statuses(responses: readonly HttpResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const response of responses) counts[response.status] = (counts[response.status] ?? 0) + 1;
  return counts;
}

function expectThrottled(response: HttpResponse): void {
  expect(response.status, response.body.toString()).to.equal(429);
  expect(String(response.headers['retry-after'])).to.match(/^[1-9]\d*$/);
  expect(response.headers['cache-control']).to.equal('no-store');
  expect(jsonOf<ErrorBody>(response).code).to.equal('rate_limited');
}

async function scanKeys(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

describe('issue 16 D1: every rate-limit key is bounded, whatever client ids a caller makes up', function () {
  this.timeout(60_000);
  const requests = 60;
  const env = { TRUST_PROXY: 'true' };

  /** `requests` wrong secrets from one address, each for a new made-up 200-character client id, 10 at a time. */
  async function madeUpIdFlood(gateway: TestGateway): Promise<HttpResponse[]> {
    const answers: HttpResponse[] = [];
    for (let sent = 0; sent < requests; sent += 10) {
      answers.push(...(await Promise.all(Array.from({ length: 10 }, () => gateway.request('POST', '/oauth/token', tokenRequest(madeUpId(200), 'guess', attacker))))));
    }
    return answers;
  }

  it('keeps the in-memory budgets at 3 keys in all (one per address, not per id) after 60 requests naming 60 made-up ids', async function () {
    const { stores, keys } = keyRecordingStores(boundedMemoryStores({ now: () => new Date() }));
    const gateway = await startGateway({ store: new MemoryBlobStore(), clients: [acme], rateLimitStores: stores, env });
    try {
      const answers = await madeUpIdFlood(gateway);
      // RFC 6749 section 5.2: an unknown client is invalid_client (401) until the address is throttled (429).
      expect(Object.keys(statuses(answers)).map(Number)).to.satisfy((codes: number[]) => codes.every((code) => code === 401 || code === 429));
      expect(allKeys(keys)).to.have.lengthOf.at.most(3);
    } finally {
      await gateway.close();
    }
  });

  it('keeps the Redis key space at 3 keys, each with an expiry, after the same requests', async function () {
    const redis = sharedRedis();
    const keyPrefix = uniqueKeyPrefix('made-up-ids');
    const gateway = await startGateway({ store: new MemoryBlobStore(), clients: [acme], rateLimitStores: redisStores(redis, keyPrefix), env });
    try {
      await madeUpIdFlood(gateway);
      const stored = await scanKeys(redis, keyPrefix);
      expect(stored).to.have.lengthOf.at.most(3);
      for (const key of stored) expect(await redis.pttl(key), key).to.be.above(0);
    } finally {
      await gateway.close();
      const leftovers = await scanKeys(redis, keyPrefix);
      if (leftovers.length > 0) await redis.del(...leftovers);
      redis.disconnect();
    }
  });

  it('never creates a key without an expiry when a count is taken back after its window (Redis)', async function () {
    const redis = sharedRedis();
    const keyPrefix = uniqueKeyPrefix('decrement');
    try {
      const store = redisStores(redis, keyPrefix)('tokens-issued');
      await store.init?.({ windowMs: 60_000 } as Options);
      // A request taken back once its count has expired: the key is gone when the decrement comes.
      await store.decrement('client:acme');
      expect(await scanKeys(redis, keyPrefix)).to.deep.equal([]);
      await store.increment('client:acme');
      await store.decrement('client:acme');
      await store.decrement('client:acme');
      const [key] = await scanKeys(redis, keyPrefix);
      expect(await redis.get(key ?? '')).to.equal('0');
      expect(await redis.pttl(key ?? '')).to.be.above(0);
    } finally {
      const leftovers = await scanKeys(redis, keyPrefix);
      if (leftovers.length > 0) await redis.del(...leftovers);
      redis.disconnect();
    }
  });

  it('answers a client id longer than 256 characters with 401 invalid_client (RFC 6749 section 5.2), verifying no secret and auditing 256 characters of it', async function () {
    const secrets = new CountingHasher();
    const audited = capturedAudit();
    const gateway = await startGateway({ store: new MemoryBlobStore(), clients: [acme], secrets, audit: audited.audit, env });
    try {
      const longId = madeUpId(3900);
      const response = await gateway.request('POST', '/oauth/token', tokenRequest(longId, 'guess', attacker));
      expect(response.status, response.body.toString()).to.equal(401);
      expect(jsonOf<OAuthErrorBody>(response).error).to.equal('invalid_client');
      expect(secrets.started).to.have.lengthOf(0);
      const [record] = audited.records().filter((entry) => entry.event === 'token');
      expect(record?.clientId).to.equal(longId.slice(0, 256));
    } finally {
      await gateway.close();
    }
  });
});

describe('issue 16 D3: a burst of wrong secrets sent in parallel from one address', function () {
  this.timeout(60_000);
  const burst = 60;
  // Queue places for the whole burst (4 verifiers: 256 waiting, 64 per address), so only the failure limit acts.
  const env = { TRUST_PROXY: 'true', TOKEN_FAILURE_LIMIT: '10', TOKEN_FAILURE_CLIENT_LIMIT: '1000', TOKEN_ISSUE_LIMIT: '1000', SECRET_HASH_CONCURRENCY: '4' };

  it('verifies at most TOKEN_FAILURE_LIMIT (10) of 60 wrong secrets for one client, and answers the rest 429', async function () {
    const secrets = new CountingHasher();
    const gateway = await startGateway({ store: new MemoryBlobStore(), clients: [acme], secrets, env });
    try {
      const answers = await Promise.all(Array.from({ length: burst }, (_, attempt) => gateway.request('POST', '/oauth/token', tokenRequest(acme.clientId, `wrong-${attempt}`, attacker))));
      expect(secrets.started.length, 'secrets verified').to.be.at.most(10);
      expect(statuses(answers)).to.deep.equal({ 401: secrets.started.length, 429: burst - secrets.started.length });
    } finally {
      await gateway.close();
    }
  });

  it('verifies at most 10 of 60 wrong secrets each naming a different made-up client id', async function () {
    const secrets = new CountingHasher();
    const gateway = await startGateway({ store: new MemoryBlobStore(), clients: [acme], secrets, env });
    try {
      const answers = await Promise.all(Array.from({ length: burst }, () => gateway.request('POST', '/oauth/token', tokenRequest(madeUpId(40), 'guess', attacker))));
      expect(secrets.started.length, 'secrets verified').to.be.at.most(10);
      expect(statuses(answers)[429]).to.equal(burst - secrets.started.length);
    } finally {
      await gateway.close();
    }
  });
});

describe('issue 16 D2: one address may not take more than its share of secret verification', function () {
  this.timeout(60_000);

  it('counts wrong secrets from one address across client ids: past TOKEN_FAILURE_CLIENT_LIMIT (5) in all, the address is refused for every id', async function () {
    const gateway = await startGateway({
      store: new MemoryBlobStore(),
      clients: [acme, other, third],
      env: { TRUST_PROXY: 'true', TOKEN_FAILURE_LIMIT: '3', TOKEN_FAILURE_CLIENT_LIMIT: '5' },
    });
    try {
      // Two wrong secrets for each of three ids: under every per-id limit, but 6 from one address.
      const answers: HttpResponse[] = [];
      for (const client of [acme, other, third]) {
        for (let attempt = 0; attempt < 2; attempt += 1) answers.push(await gateway.request('POST', '/oauth/token', tokenRequest(client.clientId, `wrong-${attempt}`, attacker)));
      }
      expect(answers.map((answer) => answer.status)).to.deep.equal([401, 401, 401, 401, 401, 429]);
      expectThrottled(await gateway.request('POST', '/oauth/token', tokenRequest(acme.clientId, acme.secret, attacker)));
      // Another address is not affected.
      expect((await gateway.request('POST', '/oauth/token', tokenRequest(acme.clientId, acme.secret, subscriber))).status).to.equal(200);
    } finally {
      await gateway.close();
    }
  });

  it('counts made-up ids from one address as one id: the 4th wrong secret is refused when TOKEN_FAILURE_LIMIT is 3', async function () {
    const gateway = await startGateway({ store: new MemoryBlobStore(), clients: [acme], env: { TRUST_PROXY: 'true', TOKEN_FAILURE_LIMIT: '3' } });
    try {
      for (let attempt = 0; attempt < 3; attempt += 1) {
        expect((await gateway.request('POST', '/oauth/token', tokenRequest(madeUpId(30), 'guess', attacker))).status).to.equal(401);
      }
      expectThrottled(await gateway.request('POST', '/oauth/token', tokenRequest(madeUpId(30), 'guess', attacker)));
    } finally {
      await gateway.close();
    }
  });

  it('refuses a flood at once past its share of the verification queue, and verifies a client at another address next, before any more of the flood', async function () {
    // One verifier: 64 places waiting, 16 per address (running or waiting).
    const share = 16;
    const flood = 40;
    const secrets = new CountingHasher();
    const waitingNow = new EventEmitter();
    const metrics = new (class extends GatewayMetrics {
      override secretVerificationsWaiting(waiting: number): void {
        super.secretVerificationsWaiting(waiting);
        waitingNow.emit('waiting', waiting);
      }
    })();
    const gateway = await startGateway({
      store: new MemoryBlobStore(),
      clients: [acme, quiet],
      secrets,
      metrics,
      // Failure limits out of the way: the queue alone is under test.
      env: { TRUST_PROXY: 'true', SECRET_HASH_CONCURRENCY: '1', TOKEN_FAILURE_LIMIT: '1000', TOKEN_FAILURE_CLIENT_LIMIT: '1000', TOKEN_ISSUE_LIMIT: '1000' },
    });
    try {
      secrets.hold();
      const flooding = Array.from({ length: flood }, (_, attempt) => gateway.request('POST', '/oauth/token', tokenRequest(acme.clientId, `wrong-${attempt}`, attacker)));
      // Refused fast: answered while the one verification admitted first is still held.
      await whenAnswered(flooding, 429, flood - share);
      expect(secrets.started, 'verifications started while the flood was refused').to.have.lengthOf(1);

      const queued = once(waitingNow, 'waiting');
      const legitimate = gateway.request('POST', '/oauth/token', tokenRequest(quiet.clientId, quiet.secret, subscriber));
      // The flood's 15 waiting, and now the subscriber's.
      let [waiting] = (await queued) as [number];
      while (waiting !== share) [waiting] = (await once(waitingNow, 'waiting')) as [number];
      secrets.release();

      expect((await legitimate).status).to.equal(200);
      const floodBefore = secrets.started.indexOf(quiet.secret);
      expect(floodBefore, 'flood verifications started before the subscriber\'s').to.equal(1);
      const answers = await Promise.all(flooding);
      expect(statuses(answers)).to.deep.equal({ 401: share, 429: flood - share });
      for (const refused of answers.filter((answer) => answer.status === 429)) expectThrottled(refused);
    } finally {
      secrets.release();
      await gateway.close();
    }
  });
});

describe('issue 16 L8: TRUST_PROXY with a forwarded address that is not a bare IP address', function () {
  const env = { TRUST_PROXY: 'true', TOKEN_FAILURE_LIMIT: '3' };

  it('counts 203.0.113.1:1001, :1002 and :1003 (App Service adds the port) as 203.0.113.1', async function () {
    const gateway = await startGateway({ store: new MemoryBlobStore(), clients: [acme], env });
    try {
      for (const port of [1001, 1002, 1003]) {
        expect((await gateway.request('POST', '/oauth/token', tokenRequest(acme.clientId, 'wrong', `${subscriber}:${port}`))).status).to.equal(401);
      }
      expectThrottled(await gateway.request('POST', '/oauth/token', tokenRequest(acme.clientId, acme.secret, subscriber)));
    } finally {
      await gateway.close();
    }
  });

  it('counts [2001:db8::1]:1001 as the IPv6 address 2001:db8::1', async function () {
    const gateway = await startGateway({ store: new MemoryBlobStore(), clients: [acme], env });
    try {
      for (let attempt = 0; attempt < 3; attempt += 1) {
        expect((await gateway.request('POST', '/oauth/token', tokenRequest(acme.clientId, 'wrong', `[2001:db8::1]:${1001 + attempt}`))).status).to.equal(401);
      }
      expectThrottled(await gateway.request('POST', '/oauth/token', tokenRequest(acme.clientId, acme.secret, '2001:db8::1')));
    } finally {
      await gateway.close();
    }
  });

  it('counts forwarded values that are no IP address as the connection\'s own address (127.0.0.1 here)', async function () {
    const gateway = await startGateway({ store: new MemoryBlobStore(), clients: [acme], env });
    try {
      for (const junk of ['junk-1', 'unknown', '999.1.1.1']) {
        expect((await gateway.request('POST', '/oauth/token', tokenRequest(acme.clientId, 'wrong', junk))).status).to.equal(401);
      }
      expectThrottled(await gateway.request('POST', '/oauth/token', tokenRequest(acme.clientId, acme.secret, '127.0.0.1')));
    } finally {
      await gateway.close();
    }
  });
});
