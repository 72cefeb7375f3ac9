import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { HttpResponse } from '../support/contract.js';
import { hashTestSecret, startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody } from '../support/json.js';
import { s3Failure, secretAccessKeyOf } from '../support/s3-sdk.js';

const ACCESS_KEY = 'DFGKACMEACMEACMEACME';
const PATHS = ['data/a.csv', 'data/b.csv', 'data/c.csv'];

interface TemporaryCredentials {
  readonly AccessKeyId: string;
  readonly SecretAccessKey: string;
  readonly SessionToken: string;
}

/**
 * One signer, a key per purpose: whatever the gateway signed for one purpose (an access token, a
 * download link, an S3 session token, a `/list` cursor, an S3 continuation token) is refused, with
 * that door's own error, when presented for another.
 */
describe('signed things presented for another purpose', function () {
  let gateway: TestGateway;
  let accessToken: string;
  let linkToken: string;
  let temporary: TemporaryCredentials;
  let listCursor: string;
  let continuationToken: string;
  const clients: S3Client[] = [];

  const s3Client = (credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }): S3Client => {
    const client = new S3Client({ endpoint: gateway.baseUrl, region: 'us-east-1', forcePathStyle: true, credentials, maxAttempts: 1 });
    clients.push(client);
    return client;
  };
  const withBearer = (token: string): Promise<HttpResponse> => gateway.request('GET', '/catalog', { headers: { authorization: `Bearer ${token}` } });
  const asLink = (token: string): Promise<HttpResponse> => gateway.request('GET', `/download/signed/a.csv?token=${token}`);

  before(async function () {
    const store = new MemoryBlobStore();
    for (const path of PATHS) store.put(path, `${path}\n`);
    store.put('indexes/acme.csv', buildIndexCsv(PATHS.map((path, i) => buildIndexRow({ Symbol: `S${i}`, FileName: path }))));
    const registry = new InMemoryClientRegistry([
      { clientId: 'acme', secretHash: await hashTestSecret('acme-secret-0123456789'), indexPath: 'indexes/acme.csv', enabled: true, accessKeyIds: [ACCESS_KEY] },
    ]);
    gateway = await startGateway({
      store,
      registry,
      clients: [{ clientId: 'acme', secret: 'acme-secret-0123456789' }],
      env: { S3_API: 'on', DOWNLOAD_LINKS: 'on', DOWNLOAD_RATE_LIMIT: '1000' },
    });
    accessToken = await gateway.tokenFor('acme');
    const bearer = { authorization: `Bearer ${accessToken}` };
    const link = await gateway.request('GET', '/link/S0', { headers: bearer });
    expect(link.status, link.body.toString()).to.equal(200);
    linkToken = new URL(jsonOf<{ url: string }>(link).url).searchParams.get('token') ?? '';
    const issued = await gateway.request('POST', '/oauth/s3-credentials', { headers: bearer });
    expect(issued.status).to.equal(200);
    temporary = jsonOf<TemporaryCredentials>(issued);
    const page = await gateway.request('GET', '/list?limit=1', { headers: bearer });
    listCursor = jsonOf<{ nextCursor?: string }>(page).nextCursor ?? '';
    const listed = await s3Client({ accessKeyId: ACCESS_KEY, secretAccessKey: secretAccessKeyOf(ACCESS_KEY) }).send(
      new ListObjectsV2Command({ Bucket: 'data', MaxKeys: 1 }),
    );
    continuationToken = listed.NextContinuationToken ?? '';
    expect(listCursor).to.not.equal('');
    expect(continuationToken).to.not.equal('');
  });

  after(async function () {
    for (const client of clients) client.destroy();
    await gateway?.close();
  });

  describe('as a bearer token', function () {
    it('accepts the access token itself (the baseline)', async function () {
      expect((await withBearer(accessToken)).status).to.equal(200);
    });

    for (const [what, token] of [
      ['a download link', () => linkToken],
      ['an S3 session token', () => temporary.SessionToken],
    ] as const) {
      it(`refuses ${what} with 401 invalid_token`, async function () {
        const response = await withBearer(token());
        expect(response.status).to.equal(401);
        expect(jsonOf<ErrorBody>(response).code).to.equal('invalid_token');
      });
    }
  });

  describe('as a download link', function () {
    it('accepts the link itself (the baseline)', async function () {
      expect((await asLink(linkToken)).status).to.equal(200);
    });

    for (const [what, token] of [
      ['an access token', () => accessToken],
      ['an S3 session token', () => temporary.SessionToken],
    ] as const) {
      it(`refuses ${what} with 403 invalid_link`, async function () {
        const response = await asLink(token());
        expect(response.status).to.equal(403);
        expect(jsonOf<ErrorBody>(response).code).to.equal('invalid_link');
      });
    }
  });

  describe('as an S3 session token', function () {
    it('accepts the session token itself (the baseline)', async function () {
      const listed = await s3Client({ accessKeyId: temporary.AccessKeyId, secretAccessKey: temporary.SecretAccessKey, sessionToken: temporary.SessionToken }).send(
        new ListObjectsV2Command({ Bucket: 'data' }),
      );
      expect(listed.KeyCount).to.equal(PATHS.length);
    });

    for (const [what, token] of [
      ['an access token', () => accessToken],
      ['a download link', () => linkToken],
    ] as const) {
      it(`refuses ${what} with InvalidToken`, async function () {
        const client = s3Client({ accessKeyId: temporary.AccessKeyId, secretAccessKey: temporary.SecretAccessKey, sessionToken: token() });
        const failure = await s3Failure(client.send(new ListObjectsV2Command({ Bucket: 'data' })));
        expect(failure.name).to.equal('InvalidToken');
      });
    }
  });

  describe('paging positions', function () {
    it('refuses an S3 continuation token as a /list cursor with 400 invalid_request', async function () {
      const response = await gateway.request('GET', `/list?limit=1&cursor=${encodeURIComponent(continuationToken)}`, {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      expect(response.status).to.equal(400);
      expect(jsonOf<ErrorBody>(response).code).to.equal('invalid_request');
    });

    it('refuses a /list cursor as an S3 continuation token with InvalidArgument (400)', async function () {
      const client = s3Client({ accessKeyId: ACCESS_KEY, secretAccessKey: secretAccessKeyOf(ACCESS_KEY) });
      const failure = await s3Failure(client.send(new ListObjectsV2Command({ Bucket: 'data', ContinuationToken: listCursor })));
      expect(failure.name).to.equal('InvalidArgument');
      expect(failure.$metadata.httpStatusCode).to.equal(400);
    });

    it('refuses a continuation token whose MAC is a /list cursor\'s over the same payload', async function () {
      // Same shape (`payload.mac`), so only the purposes' keys tell them apart.
      const [payload] = continuationToken.split('.');
      const [, cursorMac] = listCursor.split('.');
      const client = s3Client({ accessKeyId: ACCESS_KEY, secretAccessKey: secretAccessKeyOf(ACCESS_KEY) });
      const failure = await s3Failure(client.send(new ListObjectsV2Command({ Bucket: 'data', ContinuationToken: `${payload}.${cursorMac}` })));
      expect(failure.name).to.equal('InvalidArgument');
    });
  });
});
