import { createHash } from 'node:crypto';
import {
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { expect } from 'chai';
import { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { hashTestSecret, startGateway, type TestGateway } from '../support/gateway.js';
import { presignedUrl, signedRaw } from '../support/s3-signing.js';
import { capturedAudit } from '../support/audit-capture.js';
import { parsePrometheusText, sampleValue } from '../support/prometheus.js';
import { expectS3Shape } from '../support/s3-shapes.js';
import { s3Failure, secretAccessKeyOf } from '../support/s3-sdk.js';

const ACME_KEY = 'DFGKACMEACMEACMEACME';
const OTHER_KEY = 'DFGKOTHEROTHEROTHERX';
const acmeSecret = secretAccessKeyOf(ACME_KEY);
const otherSecret = secretAccessKeyOf(OTHER_KEY);
const acmeKey = { accessKeyId: ACME_KEY, secretAccessKey: acmeSecret };

const md5Hex = (bytes: string | Buffer): string => createHash('md5').update(bytes).digest('hex');

const FILES: Record<string, string> = {
  'funds/2024/a.csv': 'a,1\n',
  'funds/2024/b.csv': 'b,22\n',
  'funds/2025/c.csv': 'c,333\n',
  'funds/top.csv': 'top\n',
  'rates/r.csv': 'rate\n',
  'reports/daily report.csv': 'date,value\n2024-01-02,1\n',
  // Storage has it, but only the other client is entitled to it.
  'secret/other.csv': 'not for acme\n',
  'funds/2026/other-only.csv': 'other\n',
};
const ACME_PATHS = ['funds/2024/a.csv', 'funds/2024/b.csv', 'funds/2025/c.csv', 'funds/top.csv', 'rates/r.csv', 'reports/daily report.csv'];

function seededStore(): MemoryBlobStore {
  const store = new MemoryBlobStore();
  for (const [path, text] of Object.entries(FILES)) store.put(path, text, { contentType: 'text/csv' });
  const acmeRows = [...ACME_PATHS, 'funds/missing.csv'].map((path, i) => buildIndexRow({ Symbol: `A${i}`, FileName: path }));
  store.put('indexes/acme.csv', buildIndexCsv(acmeRows));
  store.put('indexes/other.csv', buildIndexCsv(['secret/other.csv', 'funds/2026/other-only.csv'].map((path, i) => buildIndexRow({ Symbol: `O${i}`, FileName: path }))));
  return store;
}

async function registry(): Promise<InMemoryClientRegistry> {
  return new InMemoryClientRegistry([
    { clientId: 'acme', secretHash: await hashTestSecret('acme-secret-0123456789'), indexPath: 'indexes/acme.csv', enabled: true, accessKeyIds: [ACME_KEY] },
    { clientId: 'other', secretHash: await hashTestSecret('other-secret-0123456789'), indexPath: 'indexes/other.csv', enabled: true, accessKeyIds: [OTHER_KEY] },
  ]);
}

function s3ClientFor(gateway: TestGateway, credentials: NonNullable<S3ClientConfig['credentials']>, extra: Partial<S3ClientConfig> = {}): S3Client {
  return new S3Client({ endpoint: gateway.baseUrl, region: 'eu-west-1', forcePathStyle: true, credentials, maxAttempts: 1, ...extra });
}


describe('S3-compatible API (S3_API=on) with @aws-sdk/client-s3', function () {
  let gateway: TestGateway;
  let store: MemoryBlobStore;
  let acme: S3Client;

  before(async function () {
    store = seededStore();
    gateway = await startGateway({ store, registry: await registry(), env: { S3_API: 'on' } });
    acme = s3ClientFor(gateway, { accessKeyId: ACME_KEY, secretAccessKey: acmeSecret });
  });
  after(async function () {
    acme.destroy();
    await gateway.close();
  });

  describe('ListBuckets', function () {
    it('lists the one virtual bucket, named by S3_BUCKET (default data)', async function () {
      const result = await acme.send(new ListBucketsCommand({}));
      expect(result.Buckets?.map((bucket) => bucket.Name)).to.deep.equal(['data']);
    });
  });

  describe('HeadBucket', function () {
    it('answers 200 for the bucket and NoSuchBucket (404) for any other', async function () {
      await acme.send(new HeadBucketCommand({ Bucket: 'data' }));
      const failure = await s3Failure(acme.send(new HeadBucketCommand({ Bucket: 'elsewhere' })));
      expect(failure.$metadata.httpStatusCode).to.equal(404);
    });
  });

  describe('ListObjectsV2', function () {
    it('lists exactly the client\'s entitled keys that storage has, in byte order, with MD5 ETags', async function () {
      const result = await acme.send(new ListObjectsV2Command({ Bucket: 'data' }));
      expect(result.Contents?.map((object) => object.Key)).to.deep.equal([...ACME_PATHS].sort());
      const top = result.Contents?.find((object) => object.Key === 'funds/top.csv');
      expect(top?.ETag).to.equal(`"${md5Hex('top\n')}"`);
      expect(top?.Size).to.equal(4);
      expect(result.KeyCount).to.equal(ACME_PATHS.length);
      expect(result.IsTruncated).to.equal(false);
    });

    it('rolls keys up into common prefixes with a delimiter, and never shows a prefix only others\' files make', async function () {
      const result = await acme.send(new ListObjectsV2Command({ Bucket: 'data', Prefix: 'funds/', Delimiter: '/' }));
      expect(result.CommonPrefixes?.map((common) => common.Prefix)).to.deep.equal(['funds/2024/', 'funds/2025/']);
      expect(result.Contents?.map((object) => object.Key)).to.deep.equal(['funds/top.csv']);
    });

    it('pages with max-keys and continuation tokens through every key exactly once', async function () {
      const seen: string[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const page = await acme.send(new ListObjectsV2Command({ Bucket: 'data', MaxKeys: 2, ...(token !== undefined && { ContinuationToken: token }) }));
        seen.push(...(page.Contents ?? []).map((object) => object.Key ?? ''));
        token = page.NextContinuationToken;
        pages += 1;
        expect(page.IsTruncated).to.equal(token !== undefined);
      } while (token !== undefined);
      expect(seen).to.deep.equal([...ACME_PATHS].sort());
      expect(pages).to.equal(3);
    });

    it('pages common prefixes too, starting after start-after', async function () {
      const first = await acme.send(new ListObjectsV2Command({ Bucket: 'data', Delimiter: '/', MaxKeys: 1, StartAfter: 'a' }));
      expect(first.CommonPrefixes?.map((common) => common.Prefix)).to.deep.equal(['funds/']);
      const second = await acme.send(new ListObjectsV2Command({ Bucket: 'data', Delimiter: '/', MaxKeys: 5, ContinuationToken: first.NextContinuationToken }));
      expect(second.CommonPrefixes?.map((common) => common.Prefix)).to.deep.equal(['rates/', 'reports/']);
    });

    it('refuses a continuation token that was altered, with InvalidArgument (400)', async function () {
      const first = await acme.send(new ListObjectsV2Command({ Bucket: 'data', MaxKeys: 1 }));
      const forged = `${Buffer.from(JSON.stringify({ a: 'secret/', p: false })).toString('base64url')}.${(first.NextContinuationToken ?? '').split('.')[1]}`;
      const failure = await s3Failure(acme.send(new ListObjectsV2Command({ Bucket: 'data', ContinuationToken: forged })));
      expect(failure.name).to.equal('InvalidArgument');
      expect(failure.$metadata.httpStatusCode).to.equal(400);
    });

    it('shows a second client none of the first one\'s files', async function () {
      const other = s3ClientFor(gateway, { accessKeyId: OTHER_KEY, secretAccessKey: otherSecret });
      const result = await other.send(new ListObjectsV2Command({ Bucket: 'data' }));
      expect(result.Contents?.map((object) => object.Key)).to.deep.equal(['funds/2026/other-only.csv', 'secret/other.csv']);
      other.destroy();
    });
  });

  describe('ListObjects (v1)', function () {
    it('pages with marker', async function () {
      const first = await acme.send(new ListObjectsCommand({ Bucket: 'data', MaxKeys: 4 }));
      expect(first.IsTruncated).to.equal(true);
      const last = first.Contents?.at(-1)?.Key;
      const second = await acme.send(new ListObjectsCommand({ Bucket: 'data', Marker: last }));
      expect([...(first.Contents ?? []), ...(second.Contents ?? [])].map((object) => object.Key)).to.deep.equal([...ACME_PATHS].sort());
    });
  });

  describe('GetObject and HeadObject', function () {
    it('serves the bytes with the same size, Last-Modified and ETag as the listing and HEAD', async function () {
      const listed = (await acme.send(new ListObjectsV2Command({ Bucket: 'data', Prefix: 'reports/' }))).Contents?.[0];
      const head = await acme.send(new HeadObjectCommand({ Bucket: 'data', Key: 'reports/daily report.csv' }));
      const got = await acme.send(new GetObjectCommand({ Bucket: 'data', Key: 'reports/daily report.csv' }));
      const body = await got.Body?.transformToString();
      expect(body).to.equal(FILES['reports/daily report.csv']);
      expect([head.ETag, got.ETag]).to.deep.equal([listed?.ETag, listed?.ETag]);
      expect([head.ContentLength, got.ContentLength]).to.deep.equal([listed?.Size, listed?.Size]);
      expect(head.LastModified?.getTime()).to.equal(Math.floor((listed?.LastModified?.getTime() ?? 0) / 1000) * 1000);
      expect(got.ContentType).to.equal('text/csv');
    });

    it('serves a Range with 206 and its Content-Range', async function () {
      const got = await acme.send(new GetObjectCommand({ Bucket: 'data', Key: 'funds/2025/c.csv', Range: 'bytes=2-4' }));
      expect(got.$metadata.httpStatusCode).to.equal(206);
      expect(got.ContentRange).to.equal('bytes 2-4/6');
      expect(await got.Body?.transformToString()).to.equal('333');
    });

    it('answers 304 to If-None-Match with the MD5 ETag, and PreconditionFailed (412) to an If-Match with another', async function () {
      const etag = `"${md5Hex('top\n')}"`;
      const notModified = await s3Failure(acme.send(new GetObjectCommand({ Bucket: 'data', Key: 'funds/top.csv', IfNoneMatch: etag })));
      expect(notModified.$metadata.httpStatusCode).to.equal(304);
      const failed = await s3Failure(acme.send(new GetObjectCommand({ Bucket: 'data', Key: 'funds/top.csv', IfMatch: '"0123"' })));
      expect(failed.$metadata.httpStatusCode).to.equal(412);
      expect(failed.name).to.equal('PreconditionFailed');
      const matched = await acme.send(new GetObjectCommand({ Bucket: 'data', Key: 'funds/top.csv', IfMatch: etag }));
      expect(await matched.Body?.transformToString()).to.equal('top\n');
    });

    it('answers InvalidRange (416) to a range past the end', async function () {
      const failure = await s3Failure(acme.send(new GetObjectCommand({ Bucket: 'data', Key: 'funds/top.csv', Range: 'bytes=100-200' })));
      expect(failure.name).to.equal('InvalidRange');
      expect(failure.$metadata.httpStatusCode).to.equal(416);
    });

    it('sets Content-Disposition from response-content-disposition', async function () {
      const got = await acme.send(new GetObjectCommand({ Bucket: 'data', Key: 'funds/top.csv', ResponseContentDisposition: 'attachment; filename="t.csv"' }));
      expect(got.ContentDisposition).to.equal('attachment; filename="t.csv"');
      await got.Body?.transformToString();
    });

    it('answers AccessDenied (403) for a key storage has but the client is not entitled to, NoSuchKey (404) for an entitled one storage lacks', async function () {
      const denied = await s3Failure(acme.send(new GetObjectCommand({ Bucket: 'data', Key: 'secret/other.csv' })));
      expect([denied.name, denied.$metadata.httpStatusCode]).to.deep.equal(['AccessDenied', 403]);
      const missing = await s3Failure(acme.send(new GetObjectCommand({ Bucket: 'data', Key: 'funds/missing.csv' })));
      expect([missing.name, missing.$metadata.httpStatusCode]).to.deep.equal(['NoSuchKey', 404]);
    });

    it('works with the SDK\'s checksum validation on (x-amz-checksum-mode: ENABLED)', async function () {
      const checked = s3ClientFor(gateway, { accessKeyId: ACME_KEY, secretAccessKey: acmeSecret }, { responseChecksumValidation: 'WHEN_SUPPORTED', requestChecksumCalculation: 'WHEN_SUPPORTED' });
      const got = await checked.send(new GetObjectCommand({ Bucket: 'data', Key: 'funds/top.csv', ChecksumMode: 'ENABLED' }));
      expect(await got.Body?.transformToString()).to.equal('top\n');
      checked.destroy();
    });
  });

  describe('credentials and signatures', function () {
    it('answers SignatureDoesNotMatch (403) to a wrong secret', async function () {
      const wrong = s3ClientFor(gateway, { accessKeyId: ACME_KEY, secretAccessKey: `${acmeSecret}x` });
      const failure = await s3Failure(wrong.send(new ListObjectsV2Command({ Bucket: 'data' })));
      expect([failure.name, failure.$metadata.httpStatusCode]).to.deep.equal(['SignatureDoesNotMatch', 403]);
      wrong.destroy();
    });

    it('answers InvalidAccessKeyId (403) to a key no client holds', async function () {
      const unknown = s3ClientFor(gateway, { accessKeyId: 'DFGKNOSUCHKEYNOSUCHK', secretAccessKey: secretAccessKeyOf('DFGKNOSUCHKEYNOSUCHK') });
      const failure = await s3Failure(unknown.send(new ListObjectsV2Command({ Bucket: 'data' })));
      expect([failure.name, failure.$metadata.httpStatusCode]).to.deep.equal(['InvalidAccessKeyId', 403]);
      unknown.destroy();
    });

    it('answers RequestTimeTooSkewed (403) to a request signed more than 15 minutes off', async function () {
      const response = await signedRaw(gateway, 'GET', '/data', acmeKey, new Date(Date.now() - 16 * 60 * 1000));
      expect(response.status).to.equal(403);
      expectS3Shape('Error', response.body.toString());
      expect(response.body.toString()).to.include('<Code>RequestTimeTooSkewed</Code>');
    });

    it('refuses a PutObject with AccessDenied (403) and leaves storage untouched', async function () {
      const failure = await s3Failure(acme.send(new PutObjectCommand({ Bucket: 'data', Key: 'funds/new.csv', Body: 'x'.repeat(100) })));
      expect([failure.name, failure.$metadata.httpStatusCode]).to.deep.equal(['AccessDenied', 403]);
      expect(await store.getProperties('funds/new.csv')).to.equal(undefined);
    });

    it('serves a presigned GetObject URL until it expires, then AccessDenied', async function () {
      const valid = await presignedUrl(gateway, '/data/funds/top.csv', acmeKey, new Date(), 60);
      const ok = await fetch(valid);
      expect([ok.status, await ok.text()]).to.deep.equal([200, 'top\n']);
      const expired = await presignedUrl(gateway, '/data/funds/top.csv', acmeKey, new Date(Date.now() - 120_000), 60);
      const refused = await fetch(expired);
      const body = await refused.text();
      expect(refused.status).to.equal(403);
      expect(body).to.include('<Code>AccessDenied</Code>');
      expectS3Shape('Error', body);
    });
  });

  describe('XML bodies', function () {
    it('match the S3 API\'s shapes: ListAllMyBucketsResult, ListBucketResult (v1, v2), LocationConstraint, Error', async function () {
      const send = (path: string) => signedRaw(gateway, 'GET', path, acmeKey, new Date());
      expectS3Shape('ListAllMyBucketsResult', (await send('/')).body.toString());
      expectS3Shape('ListBucketResult', (await send('/data?list-type=2&delimiter=%2F&encoding-type=url&max-keys=2')).body.toString());
      expectS3Shape('ListBucketResult', (await send('/data?marker=a&max-keys=2')).body.toString());
      expectS3Shape('LocationConstraint', (await send('/data?location')).body.toString());
      const missing = await send('/data/funds/missing.csv');
      expectS3Shape('Error', missing.body.toString());
    });

    it('are checked strictly: a body missing a required element or with an unknown one fails the check', function () {
      const declaration = '<?xml version="1.0" encoding="UTF-8"?>\n';
      expect(() => expectS3Shape('Error', `${declaration}<Error><Code>NoSuchKey</Code><RequestId>1</RequestId></Error>`)).to.throw(/Message is required/);
      expect(() => expectS3Shape('Error', `${declaration}<Error><Code>A</Code><Message>m</Message><RequestId>1</RequestId><Extra/></Error>`)).to.throw(/Extra is not in the shape/);
    });

    it('url-encodes keys with encoding-type=url (a space as +)', async function () {
      const response = await signedRaw(gateway, 'GET', '/data?list-type=2&prefix=reports%2F&encoding-type=url', acmeKey, new Date());
      expect(response.body.toString()).to.include('<Key>reports/daily+report.csv</Key>');
    });
  });

  describe('temporary credentials (POST /oauth/s3-credentials)', function () {
    it('issues credentials in the credential_process format that list and get as the token\'s client', async function () {
      const withSecrets = await startGateway({ store, env: { S3_API: 'on' }, clients: [{ clientId: 'acme', secret: 'acme-secret-0123456789' }] });
      try {
        const token = await withSecrets.tokenFor('acme');
        const response = await withSecrets.request('POST', '/oauth/s3-credentials', { headers: { authorization: `Bearer ${token}` } });
        expect(response.status).to.equal(200);
        const credentials = JSON.parse(response.body.toString()) as { Version: number; AccessKeyId: string; SecretAccessKey: string; SessionToken: string; Expiration: string };
        expect(credentials.Version).to.equal(1);
        const temporary = s3ClientFor(withSecrets, {
          accessKeyId: credentials.AccessKeyId,
          secretAccessKey: credentials.SecretAccessKey,
          sessionToken: credentials.SessionToken,
          expiration: new Date(credentials.Expiration),
        });
        const listed = await temporary.send(new ListObjectsV2Command({ Bucket: 'data' }));
        expect(listed.Contents?.map((object) => object.Key)).to.deep.equal([...ACME_PATHS].sort());
        const tampered = s3ClientFor(withSecrets, { accessKeyId: credentials.AccessKeyId, secretAccessKey: credentials.SecretAccessKey, sessionToken: `${credentials.SessionToken}x` });
        const failure = await s3Failure(tampered.send(new ListObjectsV2Command({ Bucket: 'data' })));
        expect(failure.name).to.equal('InvalidToken');
        temporary.destroy();
        tampered.destroy();
      } finally {
        await withSecrets.close();
      }
    });

    it('answers 401 without a bearer token', async function () {
      const response = await gateway.request('POST', '/oauth/s3-credentials');
      expect(response.status).to.equal(401);
    });
  });
});

describe('S3-compatible API: limits, audit, refusals and revocation', function () {
  it('counts S3 GetObjects and native downloads against one budget per client (every whole object; the ranges of one version once), answering SlowDown (503) with Retry-After past it, audited and measured as S3 downloads', async function () {
    const audited = capturedAudit();
    const gateway = await startGateway({
      store: seededStore(),
      clients: [{ clientId: 'acme', secret: 'acme-secret-0123456789' }],
      registry: await registry(),
      audit: audited.audit,
      env: { S3_API: 'on', DOWNLOAD_RATE_LIMIT: '3', DOWNLOAD_RATE_WINDOW_SECONDS: '600', METRICS_TOKEN: 'metrics-token-0123456789abcdef' },
    });
    try {
      const token = (await gateway.request('POST', '/oauth/token', { unchecked: true, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&client_id=acme&client_secret=acme-secret-0123456789' })).body;
      const bearer = (JSON.parse(token.toString()) as { access_token: string }).access_token;
      const native = await gateway.request('GET', '/funds/top.csv', { headers: { authorization: `Bearer ${bearer}` } });
      expect(native.status).to.equal(200);
      expect((await signedRaw(gateway, 'GET', '/data/rates/r.csv', acmeKey, new Date(), { range: 'bytes=0-0' })).status).to.equal(206);
      expect((await signedRaw(gateway, 'GET', '/data/rates/r.csv', acmeKey, new Date())).status).to.equal(200);
      const refused = await signedRaw(gateway, 'GET', '/data/funds/2024/a.csv', acmeKey, new Date());
      expect(refused.status).to.equal(503);
      expect(Number(refused.headers['retry-after'])).to.be.greaterThan(0);
      expect(refused.body.toString()).to.include('<Code>SlowDown</Code>');
      expectS3Shape('Error', refused.body.toString());
      // As natively: the ranges of a version already counted are served; a whole object is a download of its own.
      expect((await signedRaw(gateway, 'GET', '/data/rates/r.csv', acmeKey, new Date(), { range: 'bytes=1-1' })).status).to.equal(206);
      expect((await signedRaw(gateway, 'GET', '/data/funds/top.csv', acmeKey, new Date())).status).to.equal(503);
      const s3Records = audited.downloads().filter((record) => 'interface' in record && record.interface === 's3');
      expect(s3Records.map((record) => ['outcome' in record && record.outcome, 'path' in record && record.path])).to.deep.equal([
        ['completed', 'rates/r.csv'],
        ['completed', 'rates/r.csv'],
        ['refused', 'funds/2024/a.csv'],
        ['completed', 'rates/r.csv'],
        ['refused', 'funds/top.csv'],
      ]);
      expect(audited.downloads().filter((record) => 'interface' in record && record.interface === 'native')).to.have.length(1);
      const metrics = parsePrometheusText((await gateway.request('GET', '/metrics', { headers: { authorization: 'Bearer metrics-token-0123456789abcdef' } })).body.toString());
      expect(sampleValue(metrics, 'dfg_rate_limited_total', { operation: 's3:GetObject' })).to.equal(2);
      expect(sampleValue(metrics, 'dfg_http_requests_total', { operation: 's3:GetObject', status: '200' })).to.equal(1);
      expect(sampleValue(metrics, 'dfg_http_requests_total', { operation: 's3:GetObject', status: '206' })).to.equal(2);
    } finally {
      await gateway.close();
    }
  });

  it('stops an operator key, and temporary credentials, as soon as their client is disabled', async function () {
    const clients = await registry();
    const gateway = await startGateway({ store: seededStore(), registry: clients, env: { S3_API: 'on' } });
    try {
      expect((await signedRaw(gateway, 'GET', '/data?list-type=2', acmeKey, new Date())).status).to.equal(200);
      clients.add({ ...((await clients.find('acme'))!), enabled: false });
      const refused = await signedRaw(gateway, 'GET', '/data?list-type=2', acmeKey, new Date());
      expect(refused.status).to.equal(403);
      expect(refused.body.toString()).to.include('<Code>InvalidAccessKeyId</Code>');
    } finally {
      await gateway.close();
    }
  });

  it('answers AccessDenied to DELETE and POST, NotImplemented to other methods and to sub-resources (?acl, ?tagging), and never reaches storage', async function () {
    const store = seededStore();
    const gateway = await startGateway({ store, registry: await registry(), env: { S3_API: 'on' } });
    try {
      for (const method of ['DELETE', 'POST']) {
        const response = await signedRaw(gateway, method, '/data/funds/top.csv', acmeKey, new Date());
        expect([method, response.status]).to.deep.equal([method, 403]);
        expect(response.body.toString()).to.include('<Code>AccessDenied</Code>');
      }
      const patch = await signedRaw(gateway, 'PATCH', '/data/funds/top.csv', acmeKey, new Date());
      expect(patch.status).to.equal(501);
      for (const path of ['/data/funds/top.csv?acl', '/data/funds/top.csv?tagging', '/data?uploads', '/data?versioning']) {
        const response = await signedRaw(gateway, 'GET', path, acmeKey, new Date());
        expect([path, response.status]).to.deep.equal([path, 501]);
        expect(response.body.toString()).to.include('<Code>NotImplemented</Code>');
      }
      expect(await store.getProperties('funds/top.csv')).to.not.equal(undefined);
    } finally {
      await gateway.close();
    }
  });

  it('answers a HEAD that fails with its status and no body', async function () {
    const gateway = await startGateway({ store: seededStore(), registry: await registry(), env: { S3_API: 'on' } });
    try {
      const response = await signedRaw(gateway, 'HEAD', '/data/funds/missing.csv', acmeKey, new Date());
      expect(response.status).to.equal(404);
      expect(response.body.length).to.equal(0);
    } finally {
      await gateway.close();
    }
  });

  it('refuses a presigned URL that claims to live longer than 7 days, with AuthorizationQueryParametersError (400)', async function () {
    const gateway = await startGateway({ store: seededStore(), registry: await registry(), env: { S3_API: 'on' } });
    try {
      const url = (await presignedUrl(gateway, '/data/funds/top.csv', acmeKey, new Date(), 60)).replace('X-Amz-Expires=60', 'X-Amz-Expires=604801');
      const response = await fetch(url);
      expect(response.status).to.equal(400);
      expect(await response.text()).to.include('<Code>AuthorizationQueryParametersError</Code>');
    } finally {
      await gateway.close();
    }
  });

  it('names the bucket after S3_BUCKET', async function () {
    const gateway = await startGateway({ store: seededStore(), registry: await registry(), env: { S3_API: 'on', S3_BUCKET: 'vendor-files' } });
    try {
      expect((await signedRaw(gateway, 'GET', '/vendor-files?list-type=2', acmeKey, new Date())).status).to.equal(200);
      const other = await signedRaw(gateway, 'GET', '/data?list-type=2', acmeKey, new Date());
      expect(other.status).to.equal(404);
      expect(other.body.toString()).to.include('<Code>NoSuchBucket</Code>');
    } finally {
      await gateway.close();
    }
  });
});

describe('S3-compatible API when S3_API is off (the default)', function () {
  it('has no /oauth/s3-credentials route (404) and leaves a signed request to the native API', async function () {
    const gateway = await startGateway({ store: seededStore(), clients: [{ clientId: 'acme', secret: 'acme-secret-0123456789' }] });
    try {
      const token = await gateway.tokenFor('acme');
      const response = await gateway.request('POST', '/oauth/s3-credentials', { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).to.equal(404);
      const signed = await signedRaw(gateway, 'GET', '/funds/top.csv', acmeKey, new Date());
      expect(signed.status).to.equal(401);
      expect(signed.headers['content-type']).to.match(/json/);
    } finally {
      await gateway.close();
    }
  });
});

