import { execFile } from 'node:child_process';
import { expect } from 'chai';
import { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { BlobContent, BlobProperties, BlobReadOptions } from '../../src/domain/ports.js';
import { capturedAudit } from '../support/audit-capture.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { sendRaw, startGateway, type TestGateway } from '../support/gateway.js';
import { signedRaw } from '../support/s3-signing.js';
import { expectS3Shape } from '../support/s3-shapes.js';
import { secretAccessKeyOf } from '../support/s3-sdk.js';

/*
 * The read-path behaviours that ceph/s3-tests (s3tests/functional/test_s3.py) checks of an S3
 * service, as issue 25 lists them, written for this gateway's one read-only bucket: boto3 (the
 * client the suite drives) where a client shows the behaviour, raw signed or unsigned HTTP where a
 * client hides the wire. The suite itself is not run: it creates buckets and writes objects.
 */

const ACME_KEY = 'DFGKACMEACMEACMEACME';
const acmeKey = { accessKeyId: ACME_KEY, secretAccessKey: secretAccessKeyOf(ACME_KEY) };
const MODIFIED = new Date('2024-03-01T10:00:00Z');
const PYTHON_TIMEOUT_MS = 60_000;

const FILES: Record<string, string> = {
  'big/01/a.csv': 'a',
  'big/01/b.csv': 'b',
  'big/02/a.csv': 'c',
  'big/02/b.csv': 'd',
  'big/03/a.csv': 'e',
  'testobj': 'testcontent',
  'empty.csv': '',
  // A file whose top folder is the bucket's name: still the native API's `GET /data/inside.csv`.
  'data/inside.csv': 'inside\n',
};
const ACME_PATHS = Object.keys(FILES);

/** A memory store that remembers every path it was asked about, to show a refusal never reached it. */
class WatchedStore extends MemoryBlobStore {
  readonly asked: string[] = [];
  override async getProperties(path: string): Promise<BlobProperties | undefined> {
    this.asked.push(path);
    return super.getProperties(path);
  }
  override async read(path: string, options: BlobReadOptions): Promise<BlobContent> {
    this.asked.push(path);
    return super.read(path, options);
  }
}

function seededStore(): WatchedStore {
  const store = new WatchedStore();
  for (const [path, text] of Object.entries(FILES)) store.put(path, text, { contentType: 'text/csv', lastModified: MODIFIED });
  store.put('indexes/acme.csv', buildIndexCsv(ACME_PATHS.map((path, i) => buildIndexRow({ Symbol: `A${i}`, FileName: path }))));
  return store;
}

interface PythonRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function runPython(script: string, env: Record<string, string>): Promise<PythonRun> {
  return new Promise((resolve, reject) => {
    execFile('python3', ['-c', script], { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp', LANG: 'C.UTF-8', ...env }, timeout: PYTHON_TIMEOUT_MS }, (error, stdout, stderr) => {
      const code = error === null ? 0 : (error as NodeJS.ErrnoException).code;
      if (error !== null && typeof code !== 'number') return reject(error);
      resolve({ code: typeof code === 'number' ? code : 0, stdout: stdout.toString(), stderr: stderr.toString() });
    });
  });
}

/** What every boto3 script starts with: a signed client `s3`, an unsigned one `anon`, and `failure(...)`. */
const PRELUDE = `
import json, os
import boto3
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError
def _config(**extra):
    return Config(s3={'addressing_style': 'path'}, retries={'max_attempts': 1}, **extra)
s3 = boto3.client('s3', endpoint_url=os.environ['ENDPOINT'], region_name='us-east-1',
                  aws_access_key_id=os.environ['KEY_ID'], aws_secret_access_key=os.environ['SECRET'], config=_config())
anon = boto3.client('s3', endpoint_url=os.environ['ENDPOINT'], region_name='us-east-1', config=_config(signature_version=UNSIGNED))
def failure(call, **params):
    try:
        call(**params)
    except ClientError as error:
        return {'status': error.response['ResponseMetadata']['HTTPStatusCode'], 'code': error.response['Error'].get('Code'),
                'message': error.response['Error'].get('Message'), 'headers': error.response['ResponseMetadata'].get('HTTPHeaders', {})}
    return None
def keys(response):
    return [entry['Key'] for entry in response.get('Contents', [])]
def prefixes(response):
    return [entry['Prefix'] for entry in response.get('CommonPrefixes', [])]
def out(value):
    print(json.dumps(value, default=str))
`;

describe('S3 API behaviours that ceph/s3-tests checks (issue 25)', function () {
  this.timeout(PYTHON_TIMEOUT_MS * 2);
  let gateway: TestGateway;
  let store: WatchedStore;
  let registry: InMemoryClientRegistry;
  let audit: ReturnType<typeof capturedAudit>;
  let boto3Missing: string | undefined;

  before(async function () {
    const probe = await runPython('import boto3', {});
    boto3Missing = probe.code === 0 ? undefined : `python3 cannot import boto3: ${probe.stderr.trim().split('\n').at(-1) ?? ''}`;
    store = seededStore();
    audit = capturedAudit();
    gateway = await startGateway({
      store,
      audit: audit.audit,
      clients: [{ clientId: 'acme', secret: 'acme-secret-0123456789', accessKeyIds: [ACME_KEY] }],
      env: { S3_API: 'on' },
    });
    registry = gateway.registry as InMemoryClientRegistry;
  });
  after(async function () {
    await gateway?.close();
  });

  /** Runs a boto3 script (after PRELUDE) against the gateway and returns what it printed as JSON. */
  async function boto3<T>(context: Mocha.Context, script: string): Promise<T> {
    if (boto3Missing !== undefined) {
      if (context.test !== undefined) context.test.title += ` (skipped: ${boto3Missing})`;
      context.skip();
    }
    const result = await runPython(PRELUDE + script, { ENDPOINT: gateway.baseUrl, KEY_ID: acmeKey.accessKeyId, SECRET: acmeKey.secretAccessKey });
    expect(result.code, result.stderr).to.equal(0);
    return JSON.parse(result.stdout) as T;
  }

  const signed = (method: string, pathAndQuery: string, unsigned: Readonly<Record<string, string>> = {}) => signedRaw(gateway, method, pathAndQuery, acmeKey, new Date(), unsigned);
  const xmlValues = (body: Buffer, element: string): string[] => [...body.toString().matchAll(new RegExp(`<${element}>([^<]*)</${element}>`, 'g'))].map((match) => match[1] ?? '');

  describe('ListObjects (v1) with a delimiter, continued from its own NextMarker', function () {
    it('boto3\'s list_objects paginator at max-keys=1 returns each common prefix once, and ends', async function () {
      const answer = await boto3<{ prefixes: string[]; pages: number; error: string | null }>(this, `
seen, pages, error = [], 0, None
try:
    for page in s3.get_paginator('list_objects').paginate(Bucket='data', Prefix='big/', Delimiter='/', PaginationConfig={'PageSize': 1}):
        pages += 1
        seen += prefixes(page)
        if pages > 20:
            error = 'never ends'
            break
except Exception as failed:
    error = repr(failed)
out({'prefixes': seen, 'pages': pages, 'error': error})
`);
      expect(answer).to.deep.equal({ prefixes: ['big/01/', 'big/02/', 'big/03/'], pages: 3, error: null });
    });

    it('a marker equal to a common prefix continues after every key under it; any other marker means "after this string"', async function () {
      const continued = await signed('GET', '/data?prefix=big%2F&delimiter=%2F&marker=big%2F01%2F&max-keys=1');
      expect(xmlValues(continued.body, 'Prefix')).to.deep.equal(['big/', 'big/02/']);
      expect(xmlValues(continued.body, 'NextMarker')).to.deep.equal(['big/02/']);
      expect(xmlValues(continued.body, 'IsTruncated')).to.deep.equal(['true']);
      // "big/01" is no common prefix: big/01/ sorts after it and is listed.
      const plain = await signed('GET', '/data?prefix=big%2F&delimiter=%2F&marker=big%2F01');
      expect(xmlValues(plain.body, 'Prefix')).to.deep.equal(['big/', 'big/01/', 'big/02/', 'big/03/']);
      // A key under a common prefix, as a marker: the rest of that prefix rolls up into it, which does not sort after the marker.
      const inside = await signed('GET', '/data?prefix=big%2F&delimiter=%2F&marker=big%2F01%2Fa.csv');
      expect(xmlValues(inside.body, 'Prefix')).to.deep.equal(['big/', 'big/02/', 'big/03/']);
      // Without a delimiter nothing rolls up: keys after the string.
      const flat = await signed('GET', '/data?prefix=big%2F&marker=big%2F01%2F');
      expect(xmlValues(flat.body, 'Key')).to.deep.equal(['big/01/a.csv', 'big/01/b.csv', 'big/02/a.csv', 'big/02/b.csv', 'big/03/a.csv']);
    });

    it('ListObjectsV2\'s start-after equal to a common prefix skips that prefix too', async function () {
      const response = await signed('GET', '/data?list-type=2&prefix=big%2F&delimiter=%2F&start-after=big%2F02%2F');
      expect(xmlValues(response.body, 'Prefix')).to.deep.equal(['big/', 'big/03/']);
      expect(xmlValues(response.body, 'StartAfter')).to.deep.equal(['big/02/']);
    });
  });

  describe('max-keys=0', function () {
    it('answers no keys with IsTruncated false, in v1 and v2', async function () {
      const answer = await boto3<unknown>(this, `
v1 = s3.list_objects(Bucket='data', MaxKeys=0)
v2 = s3.list_objects_v2(Bucket='data', MaxKeys=0)
out([[v1['IsTruncated'], keys(v1), 'NextMarker' in v1], [v2['IsTruncated'], keys(v2), v2['KeyCount'], 'NextContinuationToken' in v2]])
`);
      expect(answer).to.deep.equal([[false, [], false], [false, [], 0, false]]);
    });
  });

  describe('an empty continuation-token', function () {
    it('is a listing from the start, echoed as empty', async function () {
      const answer = await boto3<unknown>(this, `
response = s3.list_objects_v2(Bucket='data', Prefix='big/', ContinuationToken='')
out([response.get('ContinuationToken'), response['IsTruncated'], keys(response)])
`);
      expect(answer).to.deep.equal(['', false, ['big/01/a.csv', 'big/01/b.csv', 'big/02/a.csv', 'big/02/b.csv', 'big/03/a.csv']]);
    });
  });

  describe('fetch-owner', function () {
    it('=true gives each Contents an Owner (ID and DisplayName: the client id); v2 without it gives none; v1 always does, as S3\'s', async function () {
      const answer = await boto3<unknown>(this, `
owners = lambda response: [entry.get('Owner') for entry in response.get('Contents', [])]
out([owners(s3.list_objects_v2(Bucket='data', Prefix='big/01/', FetchOwner=True)),
     owners(s3.list_objects_v2(Bucket='data', Prefix='big/01/')),
     owners(s3.list_objects_v2(Bucket='data', Prefix='big/01/', FetchOwner=False)),
     owners(s3.list_objects(Bucket='data', Prefix='big/01/'))])
`);
      const owner = { ID: 'acme', DisplayName: 'acme' };
      expect(answer).to.deep.equal([[owner, owner], [null, null], [null, null], [owner, owner]]);
      expectS3Shape('ListBucketResult', (await signed('GET', '/data?list-type=2&fetch-owner=true')).body.toString());
    });
  });

  describe('unsigned requests', function () {
    it('a listing, PUT or DELETE on the bucket\'s paths answer S3\'s XML 403 AccessDenied; the native API keeps its routes and files', async function () {
      const answer = await boto3<Array<{ status: number; code: string } | null>>(this, `
out([failure(anon.list_objects, Bucket='data'), failure(anon.list_objects_v2, Bucket='data', Prefix='big/'),
     failure(anon.put_object, Bucket='data', Key='big/new.csv', Body=b'x'), failure(anon.delete_object, Bucket='data', Key='testobj'),
     failure(anon.delete_bucket, Bucket='data'), failure(anon.create_bucket, Bucket='data')])
`);
      expect(answer.map((failure) => failure && [failure.status, failure.code])).to.deep.equal(Array(6).fill([403, 'AccessDenied']));
      for (const [method, path] of [['GET', '/data?list-type=2'], ['GET', '/data/?prefix=big%2F'], ['PUT', '/data/big/new.csv'], ['DELETE', '/data'], ['POST', '/data?delete']] as const) {
        const response = await sendRaw(gateway.port, method, path, {});
        expect([method, path, response.status, response.headers['content-type']]).to.deep.equal([method, path, 403, 'application/xml']);
        expectS3Shape('Error', response.body.toString());
      }
      expect(await store.getProperties('big/new.csv')).to.equal(undefined);
      // An unsigned object GET is the native API's GET /<storage path>: a bearer token is required.
      const object = await gateway.request('GET', '/data/inside.csv');
      expect([object.status, object.headers['content-type']]).to.deep.equal([401, 'application/json; charset=utf-8']);
      expect((await gateway.request('GET', '/catalog')).status).to.equal(401);
      const native = await gateway.get('acme', '/data/inside.csv');
      expect([native.status, native.body.toString()]).to.deep.equal([200, 'inside\n']);
    });
  });

  describe('OPTIONS', function () {
    it('without an Origin answers 400, signed or not; with one, 403 (the bucket has no CORS rules)', async function () {
      for (const response of [await signed('OPTIONS', '/data/testobj'), await sendRaw(gateway.port, 'OPTIONS', '/data/testobj', {})]) {
        expect(response.status).to.equal(400);
        expectS3Shape('Error', response.body.toString());
        expect(response.body.toString()).to.include('Origin');
      }
      const preflight = await sendRaw(gateway.port, 'OPTIONS', '/data/testobj', { origin: 'https://example.com', 'access-control-request-method': 'GET' });
      expect(preflight.status).to.equal(403);
      expect(preflight.headers['access-control-allow-origin']).to.equal(undefined);
    });
  });

  describe('a request naming another bucket', function () {
    it('answers 404 NoSuchBucket to reads and writes alike', async function () {
      const answer = await boto3<Array<{ status: number; code: string } | null>>(this, `
out([failure(s3.list_objects_v2, Bucket='elsewhere'), failure(s3.get_object, Bucket='elsewhere', Key='testobj'),
     failure(s3.put_object, Bucket='elsewhere', Key='testobj', Body=b'x'), failure(s3.delete_object, Bucket='elsewhere', Key='testobj'),
     failure(s3.delete_bucket, Bucket='elsewhere')])
`);
      expect(answer.map((failure) => failure && [failure.status, failure.code])).to.deep.equal(Array(5).fill([404, 'NoSuchBucket']));
    });
  });

  describe('a key longer than 1,024 bytes of UTF-8', function () {
    it('answers 400 KeyTooLongError without asking storage or writing an audit record; 1,024 bytes is still a key', async function () {
      const longest = `big/${'€'.repeat(340)}`;
      const tooLong = `${longest}x`;
      expect([Buffer.byteLength(longest), tooLong.length]).to.deep.equal([1024, 345]);
      const before = audit.downloads().length;
      const asked = store.asked.length;
      const answer = await boto3<Array<{ status: number; code: string } | null>>(this, `
out([failure(s3.get_object, Bucket='data', Key=${JSON.stringify(tooLong)}), failure(s3.head_object, Bucket='data', Key=${JSON.stringify(tooLong)}),
     failure(s3.put_object, Bucket='data', Key='k' * 14000, Body=b'x'), failure(s3.get_object, Bucket='data', Key='k' * 14000)])
`);
      expect(answer.map((failure) => failure && [failure.status, failure.code])).to.deep.equal([
        [400, 'KeyTooLongError'],
        [400, '400'],
        [400, 'KeyTooLongError'],
        [400, 'KeyTooLongError'],
      ]);
      expect(audit.downloads().length).to.equal(before);
      expect(store.asked.slice(asked)).to.deep.equal([]);
      const atLimit = await signed('GET', `/data/${encodeURIComponent(longest).replace(/%2F/g, '/')}`);
      expect(xmlValues(atLimit.body, 'Code')).to.deep.equal(['AccessDenied']);
    });
  });

  describe('temporary credentials of a client outside its term', function () {
    it('answer 403 AccessDenied naming when the term ended', async function () {
      const token = await gateway.tokenFor('acme');
      const issued = await gateway.request('POST', '/oauth/s3-credentials', { headers: { authorization: `Bearer ${token}` } });
      const credentials = JSON.parse(issued.body.toString()) as { AccessKeyId: string; SecretAccessKey: string; SessionToken: string };
      const key = { accessKeyId: credentials.AccessKeyId, secretAccessKey: credentials.SecretAccessKey, sessionToken: credentials.SessionToken };
      expect((await signedRaw(gateway, 'GET', '/data?list-type=2', key, new Date())).status).to.equal(200);
      const client = (await registry.find('acme'))!;
      const ended = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
      registry.add({ ...client, validUntil: ended });
      try {
        const refused = await signedRaw(gateway, 'GET', '/data?list-type=2', key, new Date());
        expect(refused.status).to.equal(403);
        expect(xmlValues(refused.body, 'Code')).to.deep.equal(['AccessDenied']);
        expect(xmlValues(refused.body, 'Message')[0]).to.include(ended.toISOString());
      } finally {
        registry.add(client);
      }
    });
  });

  describe('read paths the suite also checks (conditionals, ranges, presigned URLs, HeadBucket, ListBuckets)', function () {
    it('GetObject and HeadObject decide If-Match, If-None-Match, If-Modified-Since and If-Unmodified-Since as S3 does', async function () {
      const answer = await boto3<Record<string, unknown>>(this, `
etag = s3.head_object(Bucket='data', Key='testobj')['ETag']
old, future = 'Sat, 29 Oct 1994 19:43:31 GMT', 'Sat, 29 Oct 2100 19:43:31 GMT'
after = 'Fri, 01 Mar 2024 10:00:01 GMT'
body = lambda **extra: s3.get_object(Bucket='data', Key='testobj', **extra)['Body'].read().decode()
short = lambda failed: failed and [failed['status'], failed['code'], failed['headers'].get('etag')]
result = {'etag': etag,
  'ifmatch_good': body(IfMatch=etag), 'ifmatch_failed': short(failure(s3.get_object, Bucket='data', Key='testobj', IfMatch='"ABCORZ"')),
  'ifnonematch_good': short(failure(s3.get_object, Bucket='data', Key='testobj', IfNoneMatch=etag)), 'ifnonematch_failed': body(IfNoneMatch='ABCORZ'),
  'ifmodifiedsince_good': body(IfModifiedSince=old), 'ifmodifiedsince_failed': short(failure(s3.get_object, Bucket='data', Key='testobj', IfModifiedSince=after)),
  'ifunmodifiedsince_good': short(failure(s3.get_object, Bucket='data', Key='testobj', IfUnmodifiedSince=old)), 'ifunmodifiedsince_failed': body(IfUnmodifiedSince=future),
  'head_ifmatch_failed': short(failure(s3.head_object, Bucket='data', Key='testobj', IfMatch='"ABCORZ"')),
  'head_ifnonematch': short(failure(s3.head_object, Bucket='data', Key='testobj', IfNoneMatch=etag)),
  'head_ifunmodifiedsince': short(failure(s3.head_object, Bucket='data', Key='testobj', IfUnmodifiedSince=old)),
  'head_ifmodifiedsince': short(failure(s3.head_object, Bucket='data', Key='testobj', IfModifiedSince=after))}
out(result)
`);
      const etag = answer['etag'];
      expect(answer).to.deep.equal({
        etag,
        ifmatch_good: 'testcontent',
        ifmatch_failed: [412, 'PreconditionFailed', null],
        ifnonematch_good: [304, '304', etag],
        ifnonematch_failed: 'testcontent',
        ifmodifiedsince_good: 'testcontent',
        ifmodifiedsince_failed: [304, '304', etag],
        ifunmodifiedsince_good: [412, 'PreconditionFailed', null],
        ifunmodifiedsince_failed: 'testcontent',
        head_ifmatch_failed: [412, '412', null],
        head_ifnonematch: [304, '304', etag],
        head_ifunmodifiedsince: [412, '412', null],
        head_ifmodifiedsince: [304, '304', etag],
      });
    });

    it('GetObject serves Range, an open and a suffix range with 206, and InvalidRange (416) past the end, an empty object included', async function () {
      const answer = await boto3<unknown>(this, `
def ranged(key, value):
    try:
        got = s3.get_object(Bucket='data', Key=key, Range=value)
        return [got['ResponseMetadata']['HTTPStatusCode'], got['ContentRange'], got['Body'].read().decode()]
    except ClientError as error:
        return [error.response['ResponseMetadata']['HTTPStatusCode'], error.response['Error']['Code']]
out([ranged('testobj', 'bytes=4-7'), ranged('testobj', 'bytes=4-'), ranged('testobj', 'bytes=-7'), ranged('testobj', 'bytes=40-50'), ranged('empty.csv', 'bytes=40-50')])
`);
      expect(answer).to.deep.equal([
        [206, 'bytes 4-7/11', 'cont'],
        [206, 'bytes 4-10/11', 'content'],
        [206, 'bytes 4-10/11', 'content'],
        [416, 'InvalidRange'],
        [416, 'InvalidRange'],
      ]);
    });

    it('serves a boto3 presigned URL (Signature Version 4); HeadBucket is 200 for the bucket and 404 for another; ListBuckets shows the bucket and its owner', async function () {
      const answer = await boto3<{ url: string; head: number; other: unknown; buckets: string[]; owner: unknown }>(this, `
v4 = boto3.client('s3', endpoint_url=os.environ['ENDPOINT'], region_name='us-east-1', aws_access_key_id=os.environ['KEY_ID'],
                  aws_secret_access_key=os.environ['SECRET'], config=_config(signature_version='s3v4'))
url = v4.generate_presigned_url('get_object', Params={'Bucket': 'data', 'Key': 'testobj'}, ExpiresIn=60)
listed = s3.list_buckets()
out({'url': url, 'head': s3.head_bucket(Bucket='data')['ResponseMetadata']['HTTPStatusCode'],
     'other': (lambda failed: failed and failed['status'])(failure(s3.head_bucket, Bucket='elsewhere')),
     'buckets': [bucket['Name'] for bucket in listed['Buckets']], 'owner': listed.get('Owner')})
`);
      expect([answer.head, answer.other, answer.buckets, answer.owner]).to.deep.equal([200, 404, ['data'], { ID: 'acme', DisplayName: 'acme' }]);
      const fetched = await fetch(answer.url);
      expect([fetched.status, await fetched.text()]).to.deep.equal([200, 'testcontent']);
    });

    it('answers a Signature Version 2 request (boto3\'s default presigned URL) with S3\'s 400 InvalidRequest, not the native API\'s 401', async function () {
      const { url } = await boto3<{ url: string }>(this, `
out({'url': s3.generate_presigned_url('get_object', Params={'Bucket': 'data', 'Key': 'testobj'}, ExpiresIn=60)})
`);
      expect(url).to.include('AWSAccessKeyId=');
      const fetched = await fetch(url);
      const body = await fetched.text();
      expect([fetched.status, xmlValues(Buffer.from(body), 'Code')]).to.deep.equal([400, ['InvalidRequest']]);
      expect(body).to.include('AWS4-HMAC-SHA256');
      const header = await sendRaw(gateway.port, 'GET', '/data?prefix=big%2F', { authorization: `AWS ${ACME_KEY}:c2lnbmF0dXJl`, date: new Date().toUTCString() });
      expect([header.status, xmlValues(header.body, 'Code')]).to.deep.equal([400, ['InvalidRequest']]);
    });
  });
});
