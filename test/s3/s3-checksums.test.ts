import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { MemoryChecksumStore } from '../../src/adapters/changes/memory-checksum-store.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { deadline } from '../support/deadlines.js';
import { changeStoresWith, startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { secretAccessKeyOf } from '../support/s3-sdk.js';
import { signedRaw } from '../support/s3-signing.js';

/*
 * The SHA-256 of a version through the S3 API: `x-amz-checksum-sha256` on HeadObject and on a
 * whole-object GetObject when the request says `x-amz-checksum-mode: ENABLED`, which boto3 (1.36
 * and later) asks for and verifies the body against. Run with the machine's `python3` and its
 * boto3; skipped, saying why, where it has none.
 */

const KEY = 'DFGKCHECKSUMS0000001';
const CONTENT = Buffer.from('date,price\n2026-11-20,10.5\n');
const SHA256 = createHash('sha256').update(CONTENT).digest('hex');

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(file: string, args: readonly string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env, timeout: deadline(60_000) }, (error, stdout, stderr) => {
      const code = error === null ? 0 : (error as NodeJS.ErrnoException & { code?: unknown }).code;
      if (error !== null && typeof code !== 'number') return reject(error);
      resolve({ code: typeof code === 'number' ? code : 0, stdout: stdout.toString(), stderr: stderr.toString() });
    });
  });
}

/** The interpreter behind `python3` on the PATH, if it has boto3 (1.36 or later validates checksums), or why not. */
async function pythonWithBoto3(): Promise<{ readonly python: string } | { readonly missing: string }> {
  const probe = await run('python3', ['-c', 'import sys, boto3; print(sys.executable); print(boto3.__version__)'], { ...process.env } as Record<string, string>).catch(
    (error: unknown) => ({ code: 1, stdout: '', stderr: String(error) }),
  );
  if (probe.code !== 0) return { missing: `python3 with boto3 is not available: ${probe.stderr.trim().split('\n').at(-1) ?? ''}` };
  const [python = '', version = ''] = probe.stdout.trim().split('\n');
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major < 1 || (major === 1 && minor < 36)) return { missing: `boto3 ${version} does not validate response checksums (1.36 and later do)` };
  return { python };
}

describe('S3 checksum mode (x-amz-checksum-sha256)', function () {
  this.timeout(120_000);
  let checksums: MemoryChecksumStore;
  let store: MemoryBlobStore;
  let gateway: TestGateway;
  let home: string;
  let etag: string;

  before(async function () {
    store = new MemoryBlobStore();
    store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'PX', FileName: 'prices/px.csv' })]));
    store.put('prices/px.csv', CONTENT);
    etag = (await store.getProperties('prices/px.csv'))?.etag ?? '';
    checksums = new MemoryChecksumStore();
    gateway = await startGateway({
      store,
      changeStores: changeStoresWith({ checksums }),
      clients: [{ clientId: 'acme', secret: 'acme-secret-acme-secret', accessKeyIds: [KEY] }],
      env: { S3_API: 'on' },
    });
    home = await mkdtemp(join(tmpdir(), 's3-checksums-'));
  });

  after(async function () {
    await gateway?.close();
    if (home !== undefined) await rm(home, { recursive: true, force: true });
  });

  beforeEach(async function () {
    await checksums.record({ path: 'prices/px.csv', etag }, SHA256);
  });

  const key = { accessKeyId: KEY, secretAccessKey: secretAccessKeyOf(KEY) };
  const base64 = (hex: string): string => Buffer.from(hex, 'hex').toString('base64');

  describe('over the wire', function () {
    it('sends the base64 digest on GetObject and HeadObject of the whole object in checksum mode', async function () {
      for (const method of ['GET', 'HEAD']) {
        const response = await signedRaw(gateway, method, '/data/prices/px.csv', key, new Date(), { 'x-amz-checksum-mode': 'ENABLED' });
        expect(response.status, method).to.equal(200);
        expect(response.headers['x-amz-checksum-sha256'], method).to.equal(base64(SHA256));
      }
    });

    it('sends none without checksum mode, for a range, or before the digest is known', async function () {
      const plain = await signedRaw(gateway, 'GET', '/data/prices/px.csv', key, new Date());
      expect(plain.headers).to.not.have.property('x-amz-checksum-sha256');
      const range = await signedRaw(gateway, 'GET', '/data/prices/px.csv', key, new Date(), { 'x-amz-checksum-mode': 'ENABLED', range: 'bytes=0-3' });
      expect(range.status).to.equal(206);
      expect(range.headers).to.not.have.property('x-amz-checksum-sha256');
      await checksums.record({ path: 'prices/px.csv', etag: '"another-version"' }, 'f'.repeat(64));
      const unknown = await signedRaw(gateway, 'GET', '/data/prices/px.csv', key, new Date(), { 'x-amz-checksum-mode': 'ENABLED' });
      expect(unknown.status).to.equal(200);
      expect(unknown.headers, 'a digest of another version is never sent').to.not.have.property('x-amz-checksum-sha256');
    });
  });

  describe('with boto3', function () {
    let python: string;
    before(async function () {
      const found = await pythonWithBoto3();
      if ('missing' in found) {
        this.test?.parent?.tests.forEach((test) => (test.title += ` (skipped: ${found.missing})`));
        return this.skip();
      }
      python = found.python;
    });

    const script = `
import boto3, json, os
from botocore.config import Config
s3 = boto3.client('s3', endpoint_url=os.environ['ENDPOINT'], region_name='us-east-1',
                  config=Config(s3={'addressing_style': 'path'}, response_checksum_validation='when_required'))
head = s3.head_object(Bucket='data', Key='prices/px.csv', ChecksumMode='ENABLED')
try:
    body = s3.get_object(Bucket='data', Key='prices/px.csv', ChecksumMode='ENABLED')['Body'].read()
    print(json.dumps({'head': head.get('ChecksumSHA256'), 'body': body.decode()}))
except Exception as error:
    print(json.dumps({'head': head.get('ChecksumSHA256'), 'error': type(error).__name__ + ': ' + str(error)}))
`;
    const boto3 = (): Promise<Run> =>
      run(python, ['-c', script], {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: home,
        LANG: 'C.UTF-8',
        ENDPOINT: gateway.baseUrl,
        AWS_ACCESS_KEY_ID: key.accessKeyId,
        AWS_SECRET_ACCESS_KEY: key.secretAccessKey,
        AWS_CONFIG_FILE: join(home, 'none'),
        AWS_SHARED_CREDENTIALS_FILE: join(home, 'none'),
      });

    it('downloads a file whose SHA-256 is right, having verified it', async function () {
      const result = await boto3();
      expect(result.code, result.stderr).to.equal(0);
      expect(JSON.parse(result.stdout)).to.deep.equal({ head: base64(SHA256), body: CONTENT.toString() });
    });

    it('fails the download when the SHA-256 it is given is wrong', async function () {
      await checksums.record({ path: 'prices/px.csv', etag }, createHash('sha256').update('something else').digest('hex'));
      const result = await boto3();
      expect(result.code, result.stderr).to.equal(0);
      const answer = JSON.parse(result.stdout) as { error?: string };
      expect(answer.error).to.match(/^FlexibleChecksumError: Expected checksum .* did not match calculated checksum/);
    });
  });
});
