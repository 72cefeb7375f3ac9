import type { Readable } from 'node:stream';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { connectRedis } from '../../src/adapters/redis/redis-client.js';
import { RedisQuotaLedger } from '../../src/adapters/redis/redis-quota-ledger.js';
import type { AzureBlobStore } from '../../src/adapters/storage/azure-blob-store.js';
import { quotaPeriodOf } from '../../src/domain/monthly-quota.js';
import type { ClientRecord } from '../../src/domain/ports.js';
import { capturedAudit } from '../support/audit-capture.js';
import { abortAfterFirstBytes, quietLogger, startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody } from '../support/json.js';
import { sharedRedisUrl, uniqueKeyPrefix } from '../support/redis.js';
import { azuriteFixture } from '../support/store-fixtures.js';
import { MovableClock } from '../support/movable-clock.js';
import { s3ClientWithKey, s3Failure } from '../support/s3-sdk.js';
import { deadline } from '../support/deadlines.js';

const MiB = 1024 * 1024;
const SIX_MIB = Buffer.alloc(6 * MiB, 0x5a);


function remainingOf(field: string | string[] | undefined): number | undefined {
  const text = Array.isArray(field) ? field.join(', ') : (field ?? '');
  const item = text.split(/,\s*/).find((part) => part.startsWith('"monthly-bytes"'));
  const match = item === undefined ? null : /;r=(\d+)/.exec(item);
  return match === null ? undefined : Number(match[1]);
}

/**
 * Issue 19 over HTTP on Azure Blob Storage (Azurite) with two gateway instances sharing one Redis
 * (as REDIS_URL wires them): the monthly byte quota is counted fleet-wide, over the native API and
 * the S3 API alike.
 */
describe('the monthly byte quota and subscription terms on two instances sharing Azurite and Redis', function () {
  this.timeout(60_000);
  const clock = new MovableClock();
  // Terms that end 50 minutes after the file loads: later than a whole suite run takes before this
  // suite starts, and sooner than the links' hour (DOWNLOAD_LINK_TTL_SECONDS), so a link is capped.
  const termEnd = new Date(Date.now() + 50 * 60_000);
  const clients = [
    { clientId: 'ten', secret: 'ten-secret-ten-secret-ten', monthlyBytes: 10 * MiB },
    { clientId: 'abort', secret: 'abort-secret-abort-secret', monthlyBytes: 100 * MiB },
    { clientId: 'linker', secret: 'linker-secret-linker-secr', monthlyBytes: 10 * MiB },
    { clientId: 'ending', secret: 'ending-secret-ending-secr', validUntil: termEnd },
    // The same through the S3 API, each with its access key.
    { clientId: 's3ten', secret: 's3ten-secret-s3ten-secret', monthlyBytes: 10 * MiB, accessKeyIds: ['DFGKSHAREDQUOTATEN01'] },
    { clientId: 's3abort', secret: 's3abort-secret-s3abort-se', monthlyBytes: 100 * MiB, accessKeyIds: ['DFGKSHAREDQUOTABORT1'] },
    { clientId: 's3ending', secret: 's3ending-secret-s3ending', validUntil: termEnd, accessKeyIds: ['DFGKSHAREDQUOTAEND01'] },
  ];
  /** An S3 client of `clientId`'s access key, against one instance. */
  const s3For = (instance: TestGateway, clientId: string): S3Client => {
    const accessKeyId = clients.find((client) => client.clientId === clientId)?.accessKeyIds?.[0] ?? '';
    const s3 = s3ClientWithKey(instance.baseUrl, accessKeyId);
    s3Clients.push(s3);
    return s3;
  };
  const s3Clients: S3Client[] = [];
  /** The audit record of the download after the first `earlier` ones, once it is written (within 10 s). */
  const abortedDownloadAfter = async (earlier: number): Promise<{ clientId: string; outcome: string; bytesSent: number; interface: string }> => {
    for (let waited = 0; audited.downloads().length === earlier && waited < deadline(1000); waited += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    return audited.downloads()[earlier] as unknown as { clientId: string; outcome: string; bytesSent: number; interface: string };
  };
  /** The client's count in the shared ledger once it has come down to `bytes` (the refund follows the audit record), or as it is after 2 s. */
  const usedOnceRefunded = async (clientId: string, bytes: number): Promise<number> => {
    let used = -1;
    for (let waited = 0; used !== bytes && waited < deadline(200); waited += 1) {
      used = await ledger.used(clientId, quotaPeriodOf(clock.now()).key);
      if (used !== bytes) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return used;
  };
  let fixture: Awaited<ReturnType<typeof azuriteFixture>>;
  const redisClients: Redis[] = [];
  let ledger: RedisQuotaLedger;
  let instanceA: TestGateway;
  let instanceB: TestGateway;
  let audited: ReturnType<typeof capturedAudit>;

  before(async function () {
    fixture = await azuriteFixture('shared-quota');
    const index = buildIndexCsv([
      buildIndexRow({ Symbol: 'ONE', FileName: 'data/one.bin' }),
      buildIndexRow({ Symbol: 'TWO', FileName: 'data/two.bin' }),
    ]);
    for (const client of clients) await fixture.put(`indexes/${client.clientId}.csv`, index);
    await fixture.put('data/one.bin', SIX_MIB);
    await fixture.put('data/two.bin', SIX_MIB);
    const keyPrefix = uniqueKeyPrefix('shared-quota');
    const store = fixture.store as AzureBlobStore;
    audited = capturedAudit();
    const instance = async (): Promise<TestGateway> => {
      const redis = connectRedis({ url: sharedRedisUrl, connectTimeoutMs: 1000, commandTimeoutMs: 1000, logger: quietLogger });
      redisClients.push(redis);
      ledger = new RedisQuotaLedger(redis, keyPrefix);
      return startGateway({
        store,
        clients,
        clock,
        audit: audited.audit,
        quotaLedger: ledger,
        storageLinks: (link) => store.directLink(link),
        env: { DOWNLOAD_LINKS: 'on', DOWNLOAD_LINK_TTL_SECONDS: '3600', S3_API: 'on' },
      });
    };
    instanceA = await instance();
    instanceB = await instance();
  });

  after(async function () {
    for (const s3 of s3Clients) s3.destroy();
    await instanceA?.close();
    await instanceB?.close();
    for (const redis of redisClients) redis.disconnect();
    await fixture?.cleanup();
  });

  it('serves the first 6 MiB file of a 10 MiB quota on A and refuses the second on either instance with 429 quota_exceeded', async function () {
    const first = await instanceA.get('ten', '/download/ONE');
    expect(first.status).to.equal(200);
    expect(first.body.length).to.equal(6 * MiB);
    expect(remainingOf(first.headers['ratelimit'])).to.equal(4 * MiB);
    for (const instance of [instanceB, instanceA]) {
      const refused = await instance.get('ten', '/download/TWO');
      expect(refused.status).to.equal(429);
      const body = jsonOf<ErrorBody>(refused);
      expect(body.code).to.equal('quota_exceeded');
      expect(body.message).to.include(`${4 * MiB} bytes remain`);
      const secondsToReset = Math.ceil((quotaPeriodOf(clock.now()).end.getTime() - clock.now().getTime()) / 1000);
      expect(Number(refused.headers['retry-after'])).to.be.within(secondsToReset - 5, secondsToReset);
    }
    // A range that fits is counted by its length, on the other instance.
    const range = await instanceB.get('ten', '/download/TWO', { range: `bytes=0-${MiB - 1}` });
    expect(range.status).to.equal(206);
    expect(remainingOf(range.headers['ratelimit'])).to.equal(3 * MiB);
    expect(await ledger.used('ten', quotaPeriodOf(clock.now()).key)).to.equal(7 * MiB);
  });

  it('gives back what an aborted download did not send, in the shared count', async function () {
    const token = await instanceB.tokenFor('abort');
    const downloads = audited.downloads().length;
    await abortAfterFirstBytes(instanceB.port, '/download/ONE', token);
    const record = await abortedDownloadAfter(downloads);
    expect(record).to.include({ clientId: 'abort', outcome: 'aborted' });
    expect(await usedOnceRefunded('abort', record.bytesSent)).to.equal(record.bytesSent);
    expect(record.bytesSent).to.be.lessThan(6 * MiB);
  });

  it('hands a client with a monthly quota a gateway-signed link instead of a SAS, charges nothing for it, and meters each use on either instance until the quota ends', async function () {
    const response = await instanceA.get('linker', '/link/ONE');
    expect(response.status).to.equal(200);
    expect(remainingOf(response.headers['ratelimit'])).to.equal(10 * MiB);
    const link = new URL(jsonOf<{ url: string }>(response).url);
    expect(link.pathname).to.match(/^\/download\/signed\//);
    expect(link.searchParams.has('sig'), 'not a SAS').to.equal(false);
    const first = await instanceB.request('GET', `${link.pathname}${link.search}`);
    expect(first.status).to.equal(200);
    expect(first.body.length).to.equal(6 * MiB);
    expect(remainingOf(first.headers['ratelimit'])).to.equal(4 * MiB);
    const refused = await instanceA.request('GET', `${link.pathname}${link.search}`);
    expect(refused.status).to.equal(429);
    expect(jsonOf<ErrorBody>(refused).code).to.equal('quota_exceeded');
    // A redirect is a link too: nothing is charged until it is used.
    const redirect = await instanceB.get('linker', '/download/TWO?redirect=true');
    expect(redirect.status).to.equal(307);
    expect((await instanceA.request('GET', String(redirect.headers['location']).replace(/^https?:\/\/[^/]+/, ''))).status).to.equal(429);
    expect(await ledger.used('linker', quotaPeriodOf(clock.now()).key)).to.equal(6 * MiB);
  });

  it('caps a SAS link at the end of the term, and refuses the live token on both instances once the term has ended', async function () {
    const ending = clients.find((client) => client.clientId === 'ending')?.validUntil as Date;
    const link = jsonOf<{ url: string; expiresAt: string }>(await instanceA.get('ending', '/link/ONE'));
    const cappedAt = new Date(Math.floor(ending.getTime() / 1000) * 1000);
    expect(link.expiresAt).to.equal(cappedAt.toISOString());
    expect(Date.parse(new URL(link.url).searchParams.get('se') ?? '')).to.equal(cappedAt.getTime());
    // Each test instance hashes the secrets of its own registry: a token per instance.
    const tokens = new Map([
      [instanceA, await instanceA.tokenFor('ending')],
      [instanceB, await instanceB.tokenFor('ending')],
    ]);
    // The operator ends the term in a minute (as `clients set --valid-until` does, on every instance's registry).
    const newEnd = new Date(clock.now().getTime() + 60_000);
    for (const instance of [instanceA, instanceB]) {
      const record = (await instance.registry.find('ending')) as ClientRecord;
      (instance.registry as InMemoryClientRegistry).add({ ...record, validUntil: newEnd });
    }
    for (const [instance, token] of tokens) {
      expect((await instance.request('GET', '/count', { headers: { authorization: `Bearer ${token}` } })).status).to.equal(200);
    }
    clock.offsetMs = newEnd.getTime() - Date.now();
    for (const [instance, token] of tokens) {
      const refused = await instance.request('GET', '/catalog', { headers: { authorization: `Bearer ${token}` } });
      expect(refused.status).to.equal(401);
      expect(jsonOf<ErrorBody>(refused).message).to.include('The subscription is not active: it ended at');
    }
    clock.offsetMs = 0;
  });

  describe('through the S3 API (S3_API=on on both instances)', function () {
    const getObject = (s3: S3Client, key: string, range?: string) =>
      s3.send(new GetObjectCommand({ Bucket: 'data', Key: key, ...(range !== undefined && { Range: range }) }));

    it('serves the first 6 MiB object of a 10 MiB quota on A and refuses the second on either instance with AccessDenied naming the quota', async function () {
      const first = await getObject(s3For(instanceA, 's3ten'), 'data/one.bin');
      expect((await first.Body?.transformToByteArray())?.length).to.equal(6 * MiB);
      for (const instance of [instanceB, instanceA]) {
        const refused = await s3Failure(getObject(s3For(instance, 's3ten'), 'data/two.bin'));
        expect(refused.name).to.equal('AccessDenied');
        expect(refused.$metadata.httpStatusCode).to.equal(403);
        expect(refused.message).to.include('monthly byte quota').and.include(`${4 * MiB} bytes remain`);
      }
      const range = await getObject(s3For(instanceB, 's3ten'), 'data/two.bin', `bytes=0-${MiB - 1}`);
      expect((await range.Body?.transformToByteArray())?.length).to.equal(MiB);
      expect(await ledger.used('s3ten', quotaPeriodOf(clock.now()).key)).to.equal(7 * MiB);
    });

    it('gives back what an aborted GetObject did not send, in the shared count', async function () {
      const downloads = audited.downloads().length;
      const object = await getObject(s3For(instanceB, 's3abort'), 'data/one.bin');
      const body = object.Body as Readable;
      await new Promise<void>((resolve) => body.once('data', () => resolve()));
      body.destroy();
      const record = await abortedDownloadAfter(downloads);
      expect(record).to.include({ clientId: 's3abort', outcome: 'aborted', interface: 's3' });
      expect(await usedOnceRefunded('s3abort', record.bytesSent)).to.equal(record.bytesSent);
      expect(record.bytesSent).to.be.lessThan(6 * MiB);
    });

    it('refuses a live access key on both instances once the term has ended', async function () {
      const keys = [s3For(instanceA, 's3ending'), s3For(instanceB, 's3ending')];
      for (const s3 of keys) expect((await (await getObject(s3, 'data/one.bin', 'bytes=0-0')).Body?.transformToByteArray())?.length).to.equal(1);
      const newEnd = new Date(clock.now().getTime() + 60_000);
      for (const instance of [instanceA, instanceB]) {
        const record = (await instance.registry.find('s3ending')) as ClientRecord;
        (instance.registry as InMemoryClientRegistry).add({ ...record, validUntil: newEnd });
      }
      clock.offsetMs = newEnd.getTime() - Date.now();
      try {
        for (const s3 of keys) {
          const refused = await s3Failure(getObject(s3, 'data/one.bin', 'bytes=0-0'));
          expect(refused.name).to.equal('AccessDenied');
          expect(refused.message).to.include('The subscription is not active: it ended at');
        }
      } finally {
        clock.offsetMs = 0;
      }
    });
  });
});
