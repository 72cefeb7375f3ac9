import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { connectRedis } from '../../src/adapters/redis/redis-client.js';
import { RedisQuotaLedger } from '../../src/adapters/redis/redis-quota-ledger.js';
import type { AzureBlobStore } from '../../src/adapters/storage/azure-blob-store.js';
import { quietLogger, startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody } from '../support/json.js';
import { sharedRedisUrl, uniqueKeyPrefix } from '../support/redis.js';
import { azuriteFixture } from '../support/store-fixtures.js';
import { s3ClientWithKey, s3Failure } from '../support/s3-sdk.js';
import { MovableClock } from '../support/movable-clock.js';


const ACCESS_KEY = 'DFGKWINDOWSWINDOWSWI';

interface CatalogBody {
  readonly files: ReadonlyArray<{ readonly Symbol: string; readonly AvailableFrom?: string; readonly AvailableUntil?: string }>;
}
interface ListBody {
  readonly files: ReadonlyArray<{ readonly symbol: string; readonly availableFrom?: string; readonly availableUntil?: string }>;
  readonly nextCursor?: string;
}


/**
 * Issue 19's release windows over HTTP and S3 on Azure Blob Storage (Azurite), two instances
 * sharing one Redis: a file whose AvailableFrom passes during the test appears, and one whose
 * AvailableUntil passes disappears, on both instances, without any change of the index.
 */
describe('release windows on two instances sharing Azurite and Redis', function () {
  this.timeout(60_000);
  const clock = new MovableClock();
  const dayMs = 86_400_000;
  /** The boundary: a minute after the suite starts (not after the file loads: a whole run may come between), in whole seconds. */
  let boundary: Date;
  let fixture: Awaited<ReturnType<typeof azuriteFixture>>;
  const redisClients: Redis[] = [];
  let instanceA: TestGateway;
  let instanceB: TestGateway;
  let s3: S3Client;
  let indexEtag: string | undefined;

  const s3List = async (): Promise<string[]> =>
    ((await s3.send(new ListObjectsV2Command({ Bucket: 'data', Prefix: 'data/' }))).Contents ?? []).map((object) => object.Key ?? '');
  const s3Get = async (key: string): Promise<string> =>
    (await (await s3.send(new GetObjectCommand({ Bucket: 'data', Key: key }))).Body?.transformToString()) ?? '';
  const catalogOf = async (instance: TestGateway): Promise<CatalogBody['files']> => jsonOf<CatalogBody>(await instance.get('acme', '/catalog')).files;
  const listOf = async (instance: TestGateway): Promise<ListBody['files']> => jsonOf<ListBody>(await instance.get('acme', '/list')).files;

  before(async function () {
    boundary = new Date(Math.ceil((Date.now() + 60_000) / 1000) * 1000);
    // Written once, before the boundary, and never again.
    const index = buildIndexCsv([
      buildIndexRow({ Symbol: 'OPEN', FileName: 'data/open.csv' }),
      buildIndexRow({ Symbol: 'SOON', FileName: 'data/soon.csv', AvailableFrom: boundary.toISOString() }),
      buildIndexRow({ Symbol: 'ENDING', FileName: 'data/ending.csv', AvailableUntil: boundary.toISOString().replace('.000Z', 'Z') }),
      buildIndexRow({ Symbol: 'LATER', FileName: 'data/later.csv', AvailableFrom: new Date(boundary.getTime() + dayMs).toISOString().slice(0, 10) }),
      buildIndexRow({ Symbol: 'PAST', FileName: 'data/past.csv', AvailableFrom: '2020-01-01', AvailableUntil: '2021-01-01' }),
    ]);
    fixture = await azuriteFixture('release-windows');
    await fixture.put('indexes/acme.csv', index);
    for (const name of ['open', 'soon', 'ending', 'later', 'past']) await fixture.put(`data/${name}.csv`, `${name}\n`);
    const store = fixture.store as AzureBlobStore;
    indexEtag = (await store.getProperties('indexes/acme.csv'))?.etag;
    const keyPrefix = uniqueKeyPrefix('release-windows');
    const instance = async (sasLinks: boolean): Promise<TestGateway> => {
      const redis = connectRedis({ url: sharedRedisUrl, connectTimeoutMs: 1000, commandTimeoutMs: 1000, logger: quietLogger });
      redisClients.push(redis);
      return startGateway({
        store,
        clients: [{ clientId: 'acme', secret: 'acme-secret-acme-secret-acme', accessKeyIds: [ACCESS_KEY] }],
        clock,
        quotaLedger: new RedisQuotaLedger(redis, keyPrefix),
        ...(sasLinks && { storageLinks: (link) => store.directLink(link) }),
        // The index is not checked again during the test: only the window boundary changes what is served.
        env: { S3_API: 'on', DOWNLOAD_LINKS: 'on', DOWNLOAD_LINK_TTL_SECONDS: '3600', INDEX_REFRESH_SECONDS: '3600', LIST_CACHE_SECONDS: '0' },
      });
    };
    instanceA = await instance(true);
    instanceB = await instance(false);
    s3 = s3ClientWithKey(instanceB.baseUrl, ACCESS_KEY);
  });

  after(async function () {
    s3?.destroy();
    await instanceA?.close();
    await instanceB?.close();
    for (const redis of redisClients) redis.disconnect();
    await fixture?.cleanup();
  });

  describe('before the boundary', function () {
    it('lists only the files within their window, with the windows, on both instances', async function () {
      for (const instance of [instanceA, instanceB]) {
        expect(await catalogOf(instance)).to.deep.equal([
          { Symbol: 'OPEN', Description: 'Descrição de OPEN', FileName: 'data/open.csv' },
          { Symbol: 'ENDING', Description: 'Descrição de ENDING', FileName: 'data/ending.csv', AvailableUntil: boundary.toISOString() },
        ]);
        const listed = await listOf(instance);
        expect(listed.map((file) => [file.symbol, file.availableFrom, file.availableUntil])).to.deep.equal([
          ['OPEN', undefined, undefined],
          ['ENDING', undefined, boundary.toISOString()],
        ]);
        expect(jsonOf<{ count: number }>(await instance.get('acme', '/count')).count).to.equal(2);
      }
      expect(await s3List()).to.deep.equal(['data/ending.csv', 'data/open.csv']);
    });

    it('refuses a file before its AvailableFrom as not entitled, saying from when it is served, on every route', async function () {
      for (const path of ['/info/SOON', '/download/SOON', '/data/soon.csv', '/link/SOON']) {
        const refused = await instanceA.get('acme', path);
        expect(refused.status, path).to.equal(403);
        const body = jsonOf<ErrorBody>(refused);
        expect(body.code).to.equal('not_entitled');
        expect(body.message).to.include(`outside its release window (from ${boundary.toISOString()})`);
      }
      expect((await instanceB.get('acme', '/download/LATER')).status).to.equal(403);
      expect((await instanceB.get('acme', '/download/PAST')).status).to.equal(403);
      const denied = await s3Failure(s3Get('data/soon.csv'));
      expect(denied.name).to.equal('AccessDenied');
    });

    it('caps a link to a file at the end of its window, an Azure SAS and a gateway-signed link alike', async function () {
      for (const instance of [instanceA, instanceB]) {
        const link = await instance.get('acme', '/link/ENDING');
        expect(link.status).to.equal(200);
        expect(jsonOf<{ expiresAt: string }>(link).expiresAt).to.equal(boundary.toISOString());
      }
    });
  });

  describe('once the boundary has passed, with the index unchanged', function () {
    let signedLink: string;
    let cursor: string | undefined;

    before(async function () {
      signedLink = jsonOf<{ url: string }>(await instanceB.get('acme', '/link/ENDING')).url;
      cursor = jsonOf<ListBody>(await instanceA.get('acme', '/list?limit=1')).nextCursor;
      clock.offsetMs = boundary.getTime() - Date.now() + 1000;
    });

    it('serves the file whose AvailableFrom passed and no longer the one whose AvailableUntil passed, on both instances', async function () {
      for (const instance of [instanceA, instanceB]) {
        expect((await catalogOf(instance)).map((entry) => [entry.Symbol, entry.AvailableFrom])).to.deep.equal([
          ['OPEN', undefined],
          ['SOON', boundary.toISOString()],
        ]);
        expect((await listOf(instance)).map((file) => [file.symbol, file.availableFrom])).to.deep.equal([
          ['OPEN', undefined],
          ['SOON', boundary.toISOString()],
        ]);
        expect(jsonOf<{ count: number }>(await instance.get('acme', '/count')).count).to.equal(2);
        const info = await instance.get('acme', '/info/SOON');
        expect(jsonOf<{ availableFrom?: string }>(info).availableFrom).to.equal(boundary.toISOString());
        const download = await instance.get('acme', '/download/SOON');
        expect(download.status).to.equal(200);
        expect(download.body.toString()).to.equal('soon\n');
        const ended = await instance.get('acme', '/download/ENDING');
        expect(ended.status).to.equal(403);
        expect(jsonOf<ErrorBody>(ended).message).to.include(`outside its release window (until ${boundary.toISOString()})`);
      }
      expect((await fixture.store.getProperties('indexes/acme.csv'))?.etag).to.equal(indexEtag);
    });

    it('refuses a gateway-signed link made before the window ended: it expired with the window', async function () {
      const url = new URL(signedLink);
      const refused = await instanceB.request('GET', `${url.pathname}${url.search}`);
      expect(refused.status).to.equal(403);
      expect(jsonOf<ErrorBody>(refused).code).to.equal('invalid_link');
    });

    it('refuses a /list cursor made before the boundary with 410 cursor_expired', async function () {
      expect(cursor).to.be.a('string');
      const refused = await instanceB.get('acme', `/list?cursor=${encodeURIComponent(cursor ?? '')}`);
      expect(refused.status).to.equal(410);
      expect(jsonOf<ErrorBody>(refused).code).to.equal('cursor_expired');
    });

    it('lists and serves the same through the S3 API', async function () {
      expect(await s3List()).to.deep.equal(['data/open.csv', 'data/soon.csv']);
      expect(await s3Get('data/soon.csv')).to.equal('soon\n');
      const denied = await s3Failure(s3Get('data/ending.csv'));
      expect(denied.name).to.equal('AccessDenied');
      expect(denied.message).to.include('outside its release window');
    });
  });
});
