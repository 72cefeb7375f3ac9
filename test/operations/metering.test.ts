import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { connectRedis } from '../../src/adapters/redis/redis-client.js';
import { redisCountedVersions } from '../../src/adapters/redis/redis-counted-versions.js';
import { RedisQuotaLedger } from '../../src/adapters/redis/redis-quota-ledger.js';
import { redisStores } from '../../src/adapters/redis/redis-rate-limit-stores.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { quotaPeriodOf } from '../../src/domain/monthly-quota.js';
import { capturedAudit } from '../support/audit-capture.js';
import { abortAfterFirstBytes, quietLogger, startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody } from '../support/json.js';
import { sharedRedisUrl, uniqueKeyPrefix } from '../support/redis.js';
import { s3ClientWithKey } from '../support/s3-sdk.js';
import { deadline } from '../support/deadlines.js';

const MiB = 1024 * 1024;
const BIG = Buffer.alloc(16 * MiB, 1);
const ONE_MIB = Buffer.alloc(MiB, 2);

/** What each door of the gateway bills, tried from outside as a subscriber would: two instances sharing Redis. */
describe('metering on every door, on two instances sharing Redis (budget, counted versions and quota ledger)', function () {
  this.timeout(120_000);
  const clients = [
    { clientId: 'whole', secret: 'whole-secret-whole-secret' },
    { clientId: 'ranges', secret: 'ranges-secret-ranges-secret' },
    { clientId: 'linker', secret: 'linker-secret-linker-secret' },
    { clientId: 'portal', secret: 'portal-secret-portal-secret', monthlyBytes: 3 * MiB },
    { clientId: 'aborts', secret: 'aborts-secret-aborts-secret', monthlyBytes: 1024 * MiB, accessKeyIds: ['DFGKMETERINGABORTS01'] },
  ];
  const redisClients: Redis[] = [];
  const audited = capturedAudit();
  let ledger: RedisQuotaLedger;
  let instanceA: TestGateway;
  let instanceB: TestGateway;

  before(async function () {
    const store = new MemoryBlobStore();
    const index = buildIndexCsv([
      buildIndexRow({ Symbol: 'BIG', FileName: 'data/big.bin' }),
      buildIndexRow({ Symbol: 'ONE', FileName: 'data/one.bin' }),
      buildIndexRow({ Symbol: 'TWO', FileName: 'data/two.bin' }),
    ]);
    for (const client of clients) store.put(`indexes/${client.clientId}.csv`, index);
    store.put('data/big.bin', BIG);
    store.put('data/one.bin', ONE_MIB);
    store.put('data/two.bin', ONE_MIB);
    const keyPrefix = uniqueKeyPrefix('metering');
    const instance = async (): Promise<TestGateway> => {
      const redis = connectRedis({ url: sharedRedisUrl, connectTimeoutMs: 1000, commandTimeoutMs: 1000, logger: quietLogger });
      redisClients.push(redis);
      ledger = new RedisQuotaLedger(redis, keyPrefix);
      return startGateway({
        store,
        clients,
        audit: audited.audit,
        quotaLedger: ledger,
        rateLimitStores: redisStores(redis, keyPrefix),
        countedVersions: redisCountedVersions(redis, keyPrefix, quietLogger),
        env: { DOWNLOAD_RATE_LIMIT: '3', DOWNLOAD_RATE_WINDOW_SECONDS: '3600', DOWNLOAD_LINKS: 'on', S3_API: 'on' },
      });
    };
    instanceA = await instance();
    instanceB = await instance();
  });

  after(async function () {
    await instanceA?.close();
    await instanceB?.close();
    for (const redis of redisClients) redis.disconnect();
  });

  const used = (clientId: string): Promise<number> => ledger.used(clientId, quotaPeriodOf(new Date()).key);
  const pathOf = (url: string): string => {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  };
  /** The client's audit records, once there are `count` of them (each is written once its download settled). */
  const recordsOf = async (clientId: string, count: number): Promise<Array<{ outcome: string; bytesSent: number; quotaBytes: number; interface: string }>> => {
    const mine = () => audited.downloads().filter((record) => 'clientId' in record && record.clientId === clientId);
    for (let waited = 0; mine().length < count && waited < deadline(1000); waited += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(mine(), `the audit records of ${clientId}`).to.have.length(count);
    return mine() as unknown as Array<{ outcome: string; bytesSent: number; quotaBytes: number; interface: string }>;
  };

  it('counts every whole download: the 4th whole GET of one file through a limit of 3, on either instance, answers 429', async function () {
    expect((await instanceA.get('whole', '/download/ONE')).status).to.equal(200);
    expect((await instanceB.get('whole', '/download/ONE')).status).to.equal(200);
    expect((await instanceA.get('whole', '/data/one.bin')).status).to.equal(200);
    const refused = await instanceB.get('whole', '/download/ONE');
    expect(refused.status).to.equal(429);
    expect(jsonOf<ErrorBody>(refused).code).to.equal('rate_limited');
    expect(Number(refused.headers['retry-after'])).to.be.greaterThan(0);
  });

  it('counts the range reads of one file version once together, on both instances: 30 ranges and 2 whole bodies fit a limit of 3', async function () {
    for (let i = 0; i < 30; i += 1) {
      const instance = i % 2 === 0 ? instanceA : instanceB;
      expect((await instance.get('ranges', '/download/ONE', { range: `bytes=${i}-${i + 9}` })).status, `range ${i + 1}`).to.equal(206);
    }
    expect((await instanceA.get('ranges', '/download/TWO')).status).to.equal(200);
    expect((await instanceB.get('ranges', '/download/TWO')).status).to.equal(200);
    expect((await instanceA.get('ranges', '/download/TWO')).status).to.equal(429);
    // Ranges of the counted version are still served with the budget spent.
    expect((await instanceB.get('ranges', '/download/ONE', { range: 'bytes=0-0' })).status).to.equal(206);
  });

  it('counts each use of one gateway-signed link as a download: the 4th use through a limit of 3 answers 429, on either instance', async function () {
    const link = jsonOf<{ url: string }>(await instanceA.get('linker', '/link/ONE'));
    for (let i = 0; i < 10; i += 1) expect((await instanceB.get('linker', '/link/ONE')).status, 'making a link is free').to.equal(200);
    expect((await instanceA.request('GET', pathOf(link.url))).status).to.equal(200);
    expect((await instanceB.request('GET', pathOf(link.url))).status).to.equal(200);
    expect((await instanceA.request('GET', pathOf(link.url))).status).to.equal(200);
    const refused = await instanceB.request('GET', pathOf(link.url));
    expect(refused.status).to.equal(429);
    expect(refused.headers['retry-after']).to.match(/^\d+$/);
  });

  it('serves a portal link only while the monthly quota lasts: 3 uses of a 1 MiB file fill a 3 MiB quota, the 4th is refused', async function () {
    const link = jsonOf<{ url: string }>(await instanceA.get('portal', '/portal/link/TWO'));
    let received = 0;
    const statuses: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      const response = await (i % 2 === 0 ? instanceA : instanceB).request('GET', pathOf(link.url));
      statuses.push(response.status);
      if (response.status === 200) received += response.body.length;
      else expect(jsonOf<ErrorBody>(response).code).to.be.oneOf(['quota_exceeded', 'rate_limited']);
    }
    expect(statuses.slice(0, 3)).to.deep.equal([200, 200, 200]);
    expect(statuses.slice(3).every((status) => status === 429)).to.equal(true);
    expect(received).to.equal(3 * MiB);
    expect(await used('portal')).to.equal(3 * MiB);
    const records = await recordsOf('portal', 11);
    expect(records.reduce((sum, record) => sum + record.quotaBytes, 0)).to.equal(3 * MiB);
  });

  it('audits ten aborted downloads (native on both instances, and S3) with exactly the bytes the ledger kept', async function () {
    // Open-ended ranges (the whole 16 MiB), so that the download budget of 3 counts the ten as one.
    for (let i = 0; i < 7; i += 1) {
      const instance = i % 2 === 0 ? instanceA : instanceB;
      await abortAfterFirstBytes(instance.port, '/download/BIG', await instance.tokenFor('aborts'), { range: 'bytes=0-' });
    }
    const s3 = s3ClientWithKey(instanceA.baseUrl, 'DFGKMETERINGABORTS01');
    try {
      for (let i = 0; i < 3; i += 1) {
        const object = await s3.send(new GetObjectCommand({ Bucket: 'data', Key: 'data/big.bin', Range: 'bytes=0-' }));
        const body = object.Body as Readable;
        await once(body, 'data');
        body.destroy();
      }
    } finally {
      s3.destroy();
    }
    const records = await recordsOf('aborts', 10);
    expect(records.map((record) => record.outcome)).to.deep.equal(Array(10).fill('aborted'));
    expect(records.filter((record) => record.interface === 's3')).to.have.length(3);
    for (const record of records) {
      expect(record.bytesSent).to.be.greaterThan(0).and.lessThan(BIG.length);
      expect(record.quotaBytes, 'what the ledger kept of this attempt').to.equal(record.bytesSent);
    }
    const billed = records.reduce((sum, record) => sum + record.quotaBytes, 0);
    expect(await used('aborts')).to.equal(billed);
  });
});
