import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { ClientRecord } from '../../src/domain/ports.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { hashTestSecret, startGateway, type TestGateway } from '../support/gateway.js';
import { jsonOf, type ErrorBody } from '../support/json.js';
import { s3ClientWithKey, s3Failure } from '../support/s3-sdk.js';

const ACME_KEY = 'DFGKQUOTAQUOTAQUOTAQ';
const secret = 'acme-secret-0123456789';
const FILES: Record<string, string> = { 'q/four.csv': 'abcd', 'q/five.csv': 'abcde', 'q/six.csv': 'abcdef' };


describe('S3 API (S3_API=on): the monthly byte quota and the subscription term', function () {
  let gateway: TestGateway;
  let registry: InMemoryClientRegistry;
  let s3: S3Client;
  let acme: ClientRecord;

  beforeEach(async function () {
    const store = new MemoryBlobStore();
    for (const [path, text] of Object.entries(FILES)) store.put(path, text, { contentType: 'text/csv' });
    store.put('indexes/acme.csv', buildIndexCsv(Object.keys(FILES).map((path, i) => buildIndexRow({ Symbol: `Q${i}`, FileName: path }))));
    acme = { clientId: 'acme', secretHash: await hashTestSecret(secret), indexPath: 'indexes/acme.csv', enabled: true, accessKeyIds: [ACME_KEY], monthlyBytes: 10 };
    registry = new InMemoryClientRegistry([acme]);
    gateway = await startGateway({ store, registry, clients: [{ clientId: 'acme', secret }], env: { S3_API: 'on' } });
    s3 = s3ClientWithKey(gateway.baseUrl, ACME_KEY, 'eu-west-1');
  });

  afterEach(async function () {
    s3.destroy();
    await gateway.close();
  });

  const get = (key: string, range?: string) => s3.send(new GetObjectCommand({ Bucket: 'data', Key: key, ...(range !== undefined && { Range: range }) }));

  it('counts GetObject by its body (a range by its length), HeadObject not at all, and refuses what does not fit with AccessDenied naming the quota', async function () {
    expect(await (await get('q/four.csv')).Body?.transformToString()).to.equal('abcd');
    await s3.send(new HeadObjectCommand({ Bucket: 'data', Key: 'q/six.csv' }));
    expect(await (await get('q/six.csv', 'bytes=0-1')).Body?.transformToString()).to.equal('ab');
    const refused = await s3Failure(get('q/five.csv'));
    expect(refused.name).to.equal('AccessDenied');
    expect(refused.$metadata.httpStatusCode).to.equal(403);
    expect(refused.message).to.include('monthly byte quota').and.include('4 bytes remain');
    expect(await (await get('q/four.csv')).Body?.transformToString()).to.equal('abcd');
  });

  it('draws native downloads and S3 GetObject from the one quota', async function () {
    expect((await gateway.get('acme', '/download/Q2')).status).to.equal(200);
    const refused = await s3Failure(get('q/five.csv'));
    expect(refused.name).to.equal('AccessDenied');
    const native = await gateway.get('acme', '/download/Q1');
    expect(native.status).to.equal(429);
    expect(jsonOf<ErrorBody>(native).code).to.equal('quota_exceeded');
  });

  it('refuses an access key with AccessDenied saying when the term ended, once its client is outside its term', async function () {
    registry.add({ ...acme, validUntil: new Date(Date.now() - 1000) });
    const refused = await s3Failure(get('q/four.csv'));
    expect(refused.name).to.equal('AccessDenied');
    expect(refused.message).to.include('The subscription is not active: it ended at');
  });
});
