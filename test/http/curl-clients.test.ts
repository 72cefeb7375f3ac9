import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { BlobFixtureProperties } from '../contract/blob-store-contract.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { azuriteFixture, localFolderFixture, type BlobStoreFixture } from '../support/store-fixtures.js';
import { deadline } from '../support/deadlines.js';

const CURL = '/usr/bin/curl';
const CURL_TIMEOUT_MS = deadline(20_000);

interface CurlResult {
  readonly exitCode: number;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/** Runs curl with an argument array (no shell); a non-zero exit is a result, not an exception. */
function curl(args: readonly string[], cwd?: string): Promise<CurlResult> {
  return new Promise((resolve, reject) => {
    execFile(
      CURL,
      args,
      { encoding: 'buffer', timeout: CURL_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, ...(cwd !== undefined && { cwd }) },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : (error as NodeJS.ErrnoException & { code?: unknown }).code;
        if (error !== null && typeof code !== 'number') return reject(error);
        resolve({ exitCode: typeof code === 'number' ? code : 0, stdout, stderr: stderr.toString('utf8') });
      },
    );
  });
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** 1 MiB and a little, not a multiple of any buffer size; every byte value occurs. */
const BIG = Buffer.from(Array.from({ length: 1024 * 1024 + 4321 }, (_, i) => (i * 7 + (i >>> 10)) & 0xff));

interface SeededFile {
  readonly symbol: string;
  readonly path: string;
  readonly bytes: Buffer;
  readonly props?: BlobFixtureProperties;
}

const RESUMABLE: SeededFile = { symbol: 'BIG', path: 'big/resume.bin', bytes: BIG };
const REPORT: SeededFile = { symbol: 'REPORT', path: 'reports/daily report.csv', bytes: Buffer.from('date,value\n2024-01-02,1\n') };
const VENDOR_NAMED: SeededFile = {
  symbol: 'VENDOR_NAMED',
  path: 'reports/v.csv',
  bytes: Buffer.from('named by the vendor\n'),
  props: { contentDisposition: 'attachment; filename="vendor-name.csv"' },
};
const ACCENTED: SeededFile = { symbol: 'ACCENTED', path: 'funds/relatório diário.csv', bytes: Buffer.from('cota;1,0\n') };

const curlStores: ReadonlyArray<{ readonly name: string; readonly create: () => Promise<BlobStoreFixture> }> = [
  { name: 'local folder store', create: () => localFolderFixture() },
  { name: 'Azure Blob store on Azurite', create: () => azuriteFixture('curl-clients') },
];

describe('real curl as a subscriber', function () {
  before(async function () {
    const version = await curl(['--version']).catch(() => undefined);
    if (version === undefined || version.exitCode !== 0) {
      // Reported as pending: these tests need curl at /usr/bin/curl.
      this.skip();
    }
  });

  for (const { name, create } of curlStores) {
    describe(`against the gateway on the ${name}`, function () {
      let fixture: BlobStoreFixture;
      let gateway: TestGateway;
      let authorization: string;
      let work: string;

      const urlOf = (rawPath: string): string => `${gateway.baseUrl}${rawPath}`;
      const authenticated = (...args: string[]): string[] => ['-sS', '-H', authorization, ...args];

      before(async function () {
        fixture = await create();
        await fixture.put(
          'indexes/acme.csv',
          buildIndexCsv([RESUMABLE, REPORT, VENDOR_NAMED, ACCENTED].map((file) => buildIndexRow({ Symbol: file.symbol, FileName: file.path }))),
        );
        for (const file of [RESUMABLE, REPORT, VENDOR_NAMED, ACCENTED]) await fixture.put(file.path, file.bytes, file.props);
        gateway = await startGateway({
          store: fixture.store,
          clients: [{ clientId: 'acme', secret: 'acme-secret-acme-secret' }],
          env: { DOWNLOAD_RATE_LIMIT: '10000' },
        });
        authorization = `Authorization: Bearer ${await gateway.tokenFor('acme')}`;
      });

      beforeEach(async function () {
        work = await mkdtemp(join(tmpdir(), 'curl-clients-'));
      });

      afterEach(async function () {
        await rm(work, { recursive: true, force: true });
      });

      after(async function () {
        await gateway?.close();
        await fixture?.cleanup();
      });

      describe('curl -C - (resume)', function () {
        it('completes a download started with --range 0-300000 into a byte-identical file', async function () {
          const output = join(work, 'resume.bin');
          const url = urlOf(`/download/${RESUMABLE.symbol}`);
          const first = await curl(authenticated('--fail-with-body', '--range', '0-300000', '-o', output, '-w', '%{http_code}', url));
          expect(first.exitCode, first.stderr).to.equal(0);
          expect(first.stdout.toString()).to.equal('206');
          expect((await stat(output)).size).to.equal(300_001);

          const resumed = await curl(authenticated('--fail-with-body', '-C', '-', '-o', output, '-w', '%{http_code}', url));
          expect(resumed.exitCode, resumed.stderr).to.equal(0);
          expect(resumed.stdout.toString(), 'curl asked for the rest').to.equal('206');
          const result = await readFile(output);
          expect(result.length).to.equal(BIG.length);
          expect(sha256(result)).to.equal(sha256(BIG));
        });

        it('completes a truncated copy, by path, into a byte-identical file', async function () {
          const output = join(work, 'resume.bin');
          await writeFile(output, BIG.subarray(0, 654_321));
          const resumed = await curl(authenticated('--fail-with-body', '-C', '-', '-o', output, '-w', '%{http_code}', urlOf(`/${RESUMABLE.path}`)));
          expect(resumed.exitCode, resumed.stderr).to.equal(0);
          expect(resumed.stdout.toString()).to.equal('206');
          expect(sha256(await readFile(output))).to.equal(sha256(BIG));
        });
      });

      describe('curl --range', function () {
        it('--range 10-19 gives exactly those 10 bytes', async function () {
          const result = await curl(authenticated('--fail-with-body', '--range', '10-19', '-o', '-', urlOf(`/download/${RESUMABLE.symbol}`)));
          expect(result.exitCode, result.stderr).to.equal(0);
          expect(result.stdout.equals(BIG.subarray(10, 20))).to.equal(true);
        });

        it('--range -8 gives the last 8 bytes (a Parquet footer read)', async function () {
          const result = await curl(authenticated('--fail-with-body', '--range', '-8', '-o', '-', urlOf(`/download/${RESUMABLE.symbol}`)));
          expect(result.exitCode, result.stderr).to.equal(0);
          expect(result.stdout.equals(BIG.subarray(BIG.length - 8))).to.equal(true);
        });
      });

      describe('conditional downloads', function () {
        const lastModifiedOf = async (symbol: string): Promise<Date> => {
          const info = await gateway.get('acme', `/info/${symbol}`);
          return new Date(String(info.headers['last-modified']));
        };

        it('curl -z <file> whose mtime is Last-Modified gets 304 and writes nothing', async function () {
          const reference = join(work, 'reference.csv');
          await writeFile(reference, 'cached copy');
          const lastModified = await lastModifiedOf(REPORT.symbol);
          await utimes(reference, lastModified, lastModified);
          const output = join(work, 'out.csv');
          const result = await curl(authenticated('-z', reference, '-o', output, '-w', '%{http_code}', urlOf(`/download/${REPORT.symbol}`)));
          expect(result.exitCode, result.stderr).to.equal(0);
          expect(result.stdout.toString()).to.equal('304');
          const written = await stat(output).catch(() => undefined);
          expect(written?.size ?? 0, 'nothing written').to.equal(0);
        });

        it('curl -z <file> with an older mtime downloads the whole file', async function () {
          const reference = join(work, 'reference.csv');
          await writeFile(reference, 'stale copy');
          const longAgo = new Date('2015-01-01T00:00:00Z');
          await utimes(reference, longAgo, longAgo);
          const result = await curl(authenticated('--fail-with-body', '-z', reference, '-o', '-', urlOf(`/download/${REPORT.symbol}`)));
          expect(result.exitCode, result.stderr).to.equal(0);
          expect(result.stdout.equals(REPORT.bytes)).to.equal(true);
        });

        it('curl -H "If-None-Match: <etag>" gets 304', async function () {
          const etag = String((await gateway.get('acme', `/info/${REPORT.symbol}`)).headers['etag']);
          const output = join(work, 'out.csv');
          const result = await curl(authenticated('-H', `If-None-Match: ${etag}`, '-o', output, '-w', '%{http_code}', urlOf(`/download/${REPORT.symbol}`)));
          expect(result.exitCode, result.stderr).to.equal(0);
          expect(result.stdout.toString()).to.equal('304');
          const written = await stat(output).catch(() => undefined);
          expect(written?.size ?? 0, 'nothing written').to.equal(0);
        });

        it('curl -H "If-None-Match: <stale etag>" gets 200 and the file', async function () {
          const result = await curl(authenticated('--fail-with-body', '-H', 'If-None-Match: "stale"', '-o', '-', urlOf(`/download/${REPORT.symbol}`)));
          expect(result.exitCode, result.stderr).to.equal(0);
          expect(result.stdout.equals(REPORT.bytes)).to.equal(true);
        });
      });

      describe('curl -OJ (save under the Content-Disposition name)', function () {
        it('saves /download/REPORT as "daily report.csv" in the working folder', async function () {
          const result = await curl(authenticated('--fail-with-body', '-OJ', urlOf(`/download/${REPORT.symbol}`)), work);
          expect(result.exitCode, result.stderr).to.equal(0);
          expect(await readdir(work)).to.deep.equal(['daily report.csv']);
          expect((await readFile(join(work, 'daily report.csv'))).equals(REPORT.bytes)).to.equal(true);
        });

        it('saves under the blob\'s own Content-Disposition name where storage keeps one', async function () {
          if (!fixture.capabilities.httpMetadata) this.skip();
          const result = await curl(authenticated('--fail-with-body', '-OJ', urlOf(`/download/${VENDOR_NAMED.symbol}`)), work);
          expect(result.exitCode, result.stderr).to.equal(0);
          expect(await readdir(work)).to.deep.equal(['vendor-name.csv']);
          expect((await readFile(join(work, 'vendor-name.csv'))).equals(VENDOR_NAMED.bytes)).to.equal(true);
        });

        it('saves a non-ASCII name under a valid UTF-8 file name, not raw Latin-1 bytes', async function () {
          const result = await curl(authenticated('--fail-with-body', '-OJ', urlOf(`/download/${ACCENTED.symbol}`)), work);
          expect(result.exitCode, result.stderr).to.equal(0);
          const names = await readdir(work, { encoding: 'buffer' });
          expect(names).to.have.length(1);
          const saved = names[0] ?? Buffer.alloc(0);
          const asUtf8 = (): string => new TextDecoder('utf-8', { fatal: true }).decode(saved);
          expect(asUtf8, `saved as bytes ${saved.toString('hex')}`).to.not.throw();
          expect((await readFile(join(work, asUtf8()))).equals(ACCENTED.bytes)).to.equal(true);
        });
      });
    });
  }
});
