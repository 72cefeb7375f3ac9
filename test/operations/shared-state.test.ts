import { ContainerClient } from '@azure/storage-blob';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { connectRedis, pingRedis } from '../../src/adapters/redis/redis-client.js';
import { redisCountedVersions } from '../../src/adapters/redis/redis-counted-versions.js';
import { redisStores } from '../../src/adapters/redis/redis-rate-limit-stores.js';
import { fromConnectionString } from '../../src/adapters/storage/azure-blob-store.js';
import { createTestContainer, FAST_FAILING_PIPELINE, startAzurite } from '../support/azurite.js';
import { quietLogger, startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody } from '../support/json.js';
import { freePort, sharedRedisUrl, startRedisServer, uniqueKeyPrefix } from '../support/redis.js';
import { azuriteFixture, type BlobStoreFixture } from '../support/store-fixtures.js';

const acme = { clientId: 'acme', secret: 'acme-secret-acme-secret' };
const other = { clientId: 'other', secret: 'other-secret-other-secret' };
const reader = { clientId: 'reader', secret: 'reader-secret-reader-secret' };
/** The symbols of the seeded files `data/<symbol>.csv`, in every client's index. */
const SYMBOLS = ['A', 'B', 'C', 'D'] as const;
const CONTENT = 'a,b\n1,2\n';

function redisClient(url: string, commandTimeoutMs = 500): Redis {
  return connectRedis({ url, connectTimeoutMs: 1000, commandTimeoutMs, logger: quietLogger });
}

/** Resolves once `client` is connected (again). */
function connected(client: Redis): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => client.once('ready', () => resolve()));
}

async function seed(fixture: BlobStoreFixture): Promise<void> {
  const index = buildIndexCsv(SYMBOLS.map((symbol) => buildIndexRow({ Symbol: symbol, FileName: `data/${symbol.toLowerCase()}.csv` })));
  for (const client of [acme, other, reader]) await fixture.put(`indexes/${client.clientId}.csv`, index);
  for (const symbol of SYMBOLS) await fixture.put(`data/${symbol.toLowerCase()}.csv`, CONTENT);
}

/** The limits and the counted download versions of a gateway instance, in Redis under `keyPrefix`. */
function sharedLimits(client: Redis, keyPrefix: string) {
  return { rateLimitStores: redisStores(client, keyPrefix), countedVersions: redisCountedVersions(client, keyPrefix, quietLogger) };
}

describe('two gateway instances sharing one Azurite and one Redis (REDIS_URL)', function () {
  this.timeout(60_000);
  let fixture: BlobStoreFixture;
  const clients: Redis[] = [];
  let instanceA: TestGateway;
  let instanceB: TestGateway;

  before(async function () {
    fixture = await azuriteFixture('shared-limits');
    await seed(fixture);
    const keyPrefix = uniqueKeyPrefix('shared-limits');
    const instance = async (): Promise<TestGateway> => {
      const client = redisClient(sharedRedisUrl);
      clients.push(client);
      await connected(client);
      return startGateway({
        store: fixture.store,
        clients: [acme, other, reader],
        ...sharedLimits(client, keyPrefix),
        env: { DOWNLOAD_RATE_LIMIT: '2', TOKEN_FAILURE_LIMIT: '2' },
      });
    };
    instanceA = await instance();
    instanceB = await instance();
  });

  after(async function () {
    await instanceA?.close();
    await instanceB?.close();
    for (const client of clients) client.disconnect();
    await fixture?.cleanup();
  });

  it('refuses on instance B a client that spent its download budget on instance A', async function () {
    expect((await instanceA.get('acme', '/download/A')).status).to.equal(200);
    expect((await instanceA.get('acme', '/download/B')).status).to.equal(200);
    const refused = await instanceB.get('acme', '/download/C');
    expect(refused.status).to.equal(429);
    expect(refused.headers['retry-after']).to.match(/^\d+$/);
  });

  it('counts 40 range reads of one file version, spread over both instances, as one download, and every whole body as one', async function () {
    for (let i = 0; i < 40; i += 1) {
      const response = await (i % 2 === 0 ? instanceA : instanceB).get('reader', '/download/A', { range: `bytes=${i % CONTENT.length}-` });
      expect(response.status, `range read ${i + 1}`).to.equal(206);
    }
    // A and B are the budget of 2, whichever instance serves them; a third file is refused on both.
    expect((await instanceB.get('reader', '/download/B')).status).to.equal(200);
    expect((await instanceA.get('reader', '/download/C')).status).to.equal(429);
    expect((await instanceB.get('reader', '/download/C')).status).to.equal(429);
    // The ranges of the counted version are still served by both; a whole body is a download of its own.
    expect((await instanceA.get('reader', '/download/A', { range: 'bytes=0-0' })).status).to.equal(206);
    expect((await instanceB.get('reader', '/download/A')).status).to.equal(429);
  });

  it('shares wrong-secret counts: failures on A lock the address out for that client on B too', async function () {
    const form = (secret: string) => ({
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: other.clientId, client_secret: secret }).toString(),
    });
    expect((await instanceA.request('POST', '/oauth/token', form('wrong-secret-number-1'))).status).to.equal(401);
    expect((await instanceA.request('POST', '/oauth/token', form('wrong-secret-number-2'))).status).to.equal(401);
    expect((await instanceB.request('POST', '/oauth/token', form(other.secret))).status).to.equal(429);
  });
});

describe('Redis stopping while the gateway serves (RATE_LIMIT_ON_STORE_ERROR)', function () {
  this.timeout(60_000);

  for (const policy of ['allow', 'deny'] as const) {
    describe(`with ${policy}`, function () {
      it(`${policy === 'allow' ? 'lets downloads through' : 'answers 503 limits_unavailable with Retry-After'} at once while Redis is down, says so in /ready, and limits again when Redis is back`, async function () {
        const redis = await startRedisServer();
        const client = redisClient(redis.url, 200);
        const fixture = await azuriteFixture(`redis-outage-${policy}`);
        await seed(fixture);
        await connected(client);
        const gateway = await startGateway({
          store: fixture.store,
          clients: [acme],
          ...sharedLimits(client, uniqueKeyPrefix(`outage-${policy}`)),
          redisProblem: () => pingRedis(client),
          env: { DOWNLOAD_RATE_LIMIT: '2', RATE_LIMIT_ON_STORE_ERROR: policy, READY_CACHE_SECONDS: '0' },
        });
        let restarted = redis;
        try {
          expect((await gateway.get('acme', '/download/A')).status).to.equal(200);
          expect((await gateway.request('GET', '/ready')).status).to.equal(200);

          await redis.stop();
          for (let attempt = 0; attempt < 3; attempt += 1) {
            const response = await gateway.get('acme', '/download/A');
            if (policy === 'allow') {
              expect(response.status).to.equal(200);
            } else {
              expect(response.status).to.equal(503);
              expect(jsonOf<ErrorBody>(response).code).to.equal('limits_unavailable');
              expect(response.headers['retry-after']).to.match(/^\d+$/);
            }
          }
          const ready = await gateway.request('GET', '/ready');
          expect(ready.status).to.equal(503);
          expect(jsonOf<{ reasons: string[] }>(ready).reasons).to.deep.equal(['redis']);

          // Redis comes back (empty: it kept nothing), on the same port.
          restarted = await startRedisServer(redis.port);
          await connected(client);
          expect((await gateway.request('GET', '/ready')).status).to.equal(200);
          expect((await gateway.get('acme', '/download/A')).status).to.equal(200);
          expect((await gateway.get('acme', '/download/B')).status).to.equal(200);
          expect((await gateway.get('acme', '/download/C')).status, 'the limit applies again').to.equal(429);
        } finally {
          await gateway.close();
          client.disconnect();
          await restarted.stop();
          await fixture.cleanup();
        }
      });
    });
  }
});

describe('a gateway started while Redis is unreachable', function () {
  this.timeout(30_000);

  it('starts and serves, says in /ready that Redis is missing, and uses Redis once it comes up', async function () {
    const port = await freePort();
    const client = redisClient(`redis://127.0.0.1:${port}`, 200);
    const fixture = await azuriteFixture('redis-late');
    await seed(fixture);
    const gateway = await startGateway({
      store: fixture.store,
      clients: [acme],
      ...sharedLimits(client, uniqueKeyPrefix('late')),
      redisProblem: () => pingRedis(client),
      env: { DOWNLOAD_RATE_LIMIT: '1', READY_CACHE_SECONDS: '0' },
    });
    let redis: Awaited<ReturnType<typeof startRedisServer>> | undefined;
    try {
      expect((await gateway.get('acme', '/download/A')).status).to.equal(200);
      const ready = await gateway.request('GET', '/ready');
      expect(ready.status).to.equal(503);
      expect(jsonOf<{ reasons: string[] }>(ready).reasons).to.deep.equal(['redis']);

      redis = await startRedisServer(port);
      await connected(client);
      expect((await gateway.request('GET', '/ready')).status).to.equal(200);
      expect((await gateway.get('acme', '/download/A')).status).to.equal(200);
      expect((await gateway.get('acme', '/download/B')).status, 'the limit of 1 counted in Redis').to.equal(429);
    } finally {
      await gateway.close();
      client.disconnect();
      await redis?.stop();
      await fixture.cleanup();
    }
  });
});

describe('GET /ready while storage goes away and comes back (Azurite stopped and restarted)', function () {
  this.timeout(60_000);

  it('answers 503 naming storage while Azurite is down, and 200 once it is back', async function () {
    const azurite = await startAzurite();
    const port = Number(new URL(azurite.blobEndpoint).port);
    let current = azurite;
    const container = await createTestContainer(azurite.connectionString, 'ready-storage');
    const store = fromConnectionString(azurite.connectionString, container.containerName, { ...FAST_FAILING_PIPELINE, responseTimeoutMs: 2000 });
    const gateway = await startGateway({ store, clients: [acme], env: { READY_CACHE_SECONDS: '0' } });
    try {
      expect((await gateway.request('GET', '/ready')).status).to.equal(200);

      await azurite.stop();
      const down = await gateway.request('GET', '/ready');
      expect(down.status).to.equal(503);
      expect(jsonOf<{ reasons: string[] }>(down).reasons).to.deep.equal(['storage']);
      // Liveness does not depend on storage.
      expect((await gateway.request('GET', '/health')).status).to.equal(200);

      current = await startAzurite({ port });
      // Azurite kept nothing: the vendor's container is created again.
      await new ContainerClient(current.connectionString, container.containerName).create();
      expect((await gateway.request('GET', '/ready')).status).to.equal(200);
    } finally {
      await gateway.close();
      await current.stop();
    }
  });
});
