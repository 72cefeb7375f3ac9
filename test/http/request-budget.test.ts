import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { connectRedis } from '../../src/adapters/redis/redis-client.js';
import { redisStores } from '../../src/adapters/redis/redis-rate-limit-stores.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { BlobProperties } from '../../src/domain/ports.js';
import { quietLogger, startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody } from '../support/json.js';
import { sharedRedisUrl, uniqueKeyPrefix } from '../support/redis.js';
import { secretAccessKeyOf } from '../support/s3-sdk.js';
import { signedRaw } from '../support/s3-signing.js';

const KEY = 'DFGKREQUESTBUDGET001';
const clients = [
  { clientId: 'acme', secret: 'acme-secret-acme-secret', accessKeyIds: [KEY] },
  { clientId: 'other', secret: 'other-secret-other-secret' },
];

/** A store that counts the property reads (a paid storage transaction each on Azure). */
class CountingStore extends MemoryBlobStore {
  propertyReads = 0;

  override async getProperties(path: string): Promise<BlobProperties | undefined> {
    this.propertyReads += 1;
    return super.getProperties(path);
  }
}

function seeded(): CountingStore {
  const store = new CountingStore();
  const index = buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'data/a.csv' })]);
  store.put('indexes/acme.csv', index);
  store.put('indexes/other.csv', index);
  store.put('data/a.csv', 'a,b\n1,2\n');
  return store;
}

describe('the per-client request budget (REQUEST_RATE_LIMIT per REQUEST_RATE_WINDOW_SECONDS)', function () {
  this.timeout(120_000);
  it('answers the 6th /info of a limit of 5 with 429 rate_limited and Retry-After, at 5 storage calls in all, and leaves other clients alone', async function () {
    const store = seeded();
    const gateway = await startGateway({ store, clients, env: { REQUEST_RATE_LIMIT: '5', REQUEST_RATE_WINDOW_SECONDS: '600' } });
    try {
      for (let i = 0; i < 5; i += 1) expect((await gateway.get('acme', '/info/A')).status, `request ${i + 1}`).to.equal(200);
      const reads = store.propertyReads;
      const refused = await gateway.get('acme', '/info/A');
      expect(refused.status).to.equal(429);
      expect(jsonOf<ErrorBody>(refused).code).to.equal('rate_limited');
      expect(jsonOf<ErrorBody>(refused).message).to.include('Request limit of 5 per 600 seconds');
      expect(Number(refused.headers['retry-after'])).to.be.within(1, 600);
      for (let i = 0; i < 20; i += 1) expect((await gateway.get('acme', '/download/A', {}, 'HEAD')).status).to.equal(429);
      expect(store.propertyReads, 'no storage call once the budget is spent').to.equal(reads);
      expect((await gateway.get('other', '/info/A')).status).to.equal(200);
    } finally {
      await gateway.close();
    }
  });

  it('answers every bearer-token operation with 429 rate_limited once the budget is spent, before storage is asked', async function () {
    const store = seeded();
    const gateway = await startGateway({ store, clients, env: { S3_API: 'on', DOWNLOAD_LINKS: 'on', REQUEST_RATE_LIMIT: '1', REQUEST_RATE_WINDOW_SECONDS: '600' } });
    try {
      const token = await gateway.tokenFor('acme');
      expect((await gateway.get('acme', '/count')).status).to.equal(200);
      const reads = store.propertyReads;
      for (const [method, path] of [
        ['GET', '/catalog'],
        ['GET', '/list'],
        ['GET', '/count'],
        ['GET', '/account'],
        ['GET', '/changes'],
        ['GET', '/info/A'],
        ['GET', '/download/A'],
        ['HEAD', '/download/A'],
        ['GET', '/data/a.csv'],
        ['HEAD', '/data/a.csv'],
        ['GET', '/link/A'],
        ['GET', '/portal/link/A'],
        ['POST', '/oauth/s3-credentials'],
      ] as const) {
        const refused = await gateway.request(method, path, { headers: { authorization: `Bearer ${token}` } });
        expect(refused.status, `${method} ${path}`).to.equal(429);
        expect(Number(refused.headers['retry-after']), `${method} ${path}`).to.be.greaterThan(0);
      }
      expect(store.propertyReads).to.equal(reads);
    } finally {
      await gateway.close();
    }
  });

  it('counts signed S3 requests in the same budget and answers past it with 503 SlowDown and Retry-After', async function () {
    const store = seeded();
    const gateway = await startGateway({ store, clients, env: { S3_API: 'on', REQUEST_RATE_LIMIT: '4', REQUEST_RATE_WINDOW_SECONDS: '600' } });
    const key = { accessKeyId: KEY, secretAccessKey: secretAccessKeyOf(KEY) };
    try {
      expect((await gateway.get('acme', '/info/A')).status).to.equal(200);
      for (let i = 0; i < 3; i += 1) expect((await signedRaw(gateway, 'HEAD', '/data/data/a.csv', key, new Date())).status, `HeadObject ${i + 1}`).to.equal(200);
      const reads = store.propertyReads;
      const refused = await signedRaw(gateway, 'GET', '/data/data/a.csv', key, new Date());
      expect(refused.status).to.equal(503);
      expect(refused.body.toString()).to.include('<Code>SlowDown</Code>');
      expect(Number(refused.headers['retry-after'])).to.be.greaterThan(0);
      expect(store.propertyReads).to.equal(reads);
      expect((await gateway.get('acme', '/count')).status, 'the native API shares the budget').to.equal(429);
    } finally {
      await gateway.close();
    }
  });

  it('is counted on every instance alike through Redis: 3 requests on each of two instances through a limit of 5 refuse the 6th', async function () {
    const store = seeded();
    const keyPrefix = uniqueKeyPrefix('request-budget');
    const redisClients: Redis[] = [];
    const instance = (): Promise<TestGateway> => {
      const redis = connectRedis({ url: sharedRedisUrl, connectTimeoutMs: 1000, commandTimeoutMs: 1000, logger: quietLogger });
      redisClients.push(redis);
      return startGateway({ store, clients, rateLimitStores: redisStores(redis, keyPrefix), env: { REQUEST_RATE_LIMIT: '5', REQUEST_RATE_WINDOW_SECONDS: '600' } });
    };
    const a = await instance();
    const b = await instance();
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i += 1) statuses.push((await (i % 2 === 0 ? a : b).get('acme', '/info/A')).status);
      expect(statuses).to.deep.equal([200, 200, 200, 200, 200, 429]);
    } finally {
      await a.close();
      await b.close();
      for (const redis of redisClients) redis.disconnect();
    }
  });
});
