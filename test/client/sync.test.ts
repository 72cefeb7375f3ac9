import { lstat, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createClient, type ClientOptions, type GatewayClient, type RetryEvent, type SyncEvent } from '../../client/src/index.js';
import { startMirrorGateway, publishedFiles, type MirrorGateway, type PublishedFile } from '../support/mirror-gateway.js';
import { endlessBody, flipByteAt, stallAfter, startTamperingProxy, truncateTo, type TamperingProxy } from '../support/tampering-proxy.js';
import { deadline } from '../support/deadlines.js';

/*
 * The library's sync against the real gateway on Azurite, through a recording proxy (which only
 * corrupts, stalls or cuts answers where a test says so).
 */

const localFile = (dir: string, file: PublishedFile): string => join(dir, ...file.path.split('/'));

async function expectMirrored(dir: string, files: readonly PublishedFile[]): Promise<void> {
  for (const file of files) {
    const bytes = await readFile(localFile(dir, file));
    expect(bytes.equals(file.bytes), `${file.path} is byte for byte the published file`).to.equal(true);
  }
}

async function partFilesIn(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.filter((entry) => entry.endsWith('.part'));
}

/** Waits for an event the sync emits, with a deadline. */
function eventWaiter(): { onEvent: (event: SyncEvent) => void; next: (match: (event: SyncEvent) => boolean) => Promise<SyncEvent> } {
  const waiters: Array<{ match: (event: SyncEvent) => boolean; resolve: (event: SyncEvent) => void }> = [];
  return {
    onEvent: (event) => {
      for (const waiter of [...waiters]) {
        if (waiter.match(event)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(event);
        }
      }
    },
    next: (match) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no such sync event within ${deadline(15_000)} ms`)), deadline(15_000));
        waiters.push({ match, resolve: (event) => { clearTimeout(timer); resolve(event); } });
      }),
  };
}

describe('sync (library) against the gateway on Azurite', function () {
  let dir: string;

  beforeEach(async function () {
    dir = await mkdtemp(join(tmpdir(), 'dfg-sync-'));
  });

  afterEach(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  const clientFor = (mirror: MirrorGateway, proxy: TamperingProxy, extra: Partial<ClientOptions> = {}): GatewayClient =>
    createClient({ baseUrl: proxy.url, clientId: mirror.clientId, clientSecret: mirror.secret, retry: { baseDelayMs: 20, maxDelayMs: 200 }, ...extra });

  describe('with a catalog of eight files', function () {
    const files = publishedFiles(8);
    let mirror: MirrorGateway;
    let proxy: TamperingProxy;

    before(async function () {
      mirror = await startMirrorGateway(files);
      proxy = await startTamperingProxy(mirror.gateway.port);
    });

    after(async function () {
      await proxy.close();
      await mirror.close();
    });

    it('when the folder is empty, mirrors every file byte for byte and records each ETag and MD5 in the manifest', async function () {
      const report = await clientFor(mirror, proxy).sync({ dir });

      expect(report.downloaded).to.equal(files.length);
      expect(report.failed).to.equal(0);
      expect(report.bytesTransferred).to.equal(files.reduce((sum, file) => sum + file.bytes.length, 0));
      await expectMirrored(dir, files);
      const manifest = JSON.parse(await readFile(join(dir, '.dfg-manifest.json'), 'utf8')) as { files: Record<string, { etag: string; md5: string; size: number }> };
      expect(Object.keys(manifest.files).sort()).to.deep.equal(files.map((file) => file.path).sort());
      expect(await partFilesIn(dir)).to.deep.equal([]);
    });

    it('when run a second time, transfers 0 bytes and sends no download request', async function () {
      const client = clientFor(mirror, proxy);
      await client.sync({ dir });
      const downloadsBefore = proxy.downloads().length;

      const report = await client.sync({ dir });

      expect(report.bytesTransferred).to.equal(0);
      expect(report.unchanged).to.equal(files.length);
      expect(proxy.downloads().length - downloadsBefore).to.equal(0);
    });

    it('when the manifest knows a file under another ETag, asks with If-None-Match and downloads the current version', async function () {
      const client = clientFor(mirror, proxy);
      await client.sync({ dir });
      const manifestPath = join(dir, '.dfg-manifest.json');
      const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { files: Record<string, { etag: string }> };
      const first = files[0] as PublishedFile;
      const entry = manifest.files[first.path];
      if (entry === undefined) throw new Error('no manifest entry');
      entry.etag = '"0xOLDVERSION"';
      await writeFile(manifestPath, JSON.stringify(manifest));
      const downloadsBefore = proxy.downloads().length;

      const report = await client.sync({ dir });

      const asked = proxy.downloads().slice(downloadsBefore);
      expect(asked.map((exchange) => [exchange.requestHeaders['if-none-match'], exchange.status])).to.deep.equal([['"0xOLDVERSION"', 200]]);
      expect(report.downloaded).to.equal(1);
      await expectMirrored(dir, files);
    });

    it('when include and exclude globs are given, mirrors only the matching paths', async function () {
      const report = await clientFor(mirror, proxy).sync({ dir, include: ['data/even/**'], exclude: ['**/file-4.bin'] });

      const expected = files.filter((file) => file.path.startsWith('data/even/') && !file.path.endsWith('file-4.bin'));
      expect(report.files.map((file) => file.path).sort()).to.deep.equal(expected.map((file) => file.path).sort());
      await expectMirrored(dir, expected);
    });

    it('when --modified-since is after every upload, lists nothing and downloads nothing; before them, everything', async function () {
      const client = clientFor(mirror, proxy);

      const later = await client.sync({ dir, modifiedSince: new Date(Date.now() + 3_600_000) });
      const earlier = await client.sync({ dir, modifiedSince: '2000-01-01T00:00:00Z' });

      expect(later.files).to.deep.equal([]);
      expect(earlier.downloaded).to.equal(files.length);
      const asked = proxy.exchanges.filter((exchange) => exchange.path.startsWith('/list?')).slice(-2).map((exchange) => new URL(exchange.path, 'http://x').searchParams.get('modifiedSince'));
      expect(asked[1]).to.equal('2000-01-01T00:00:00Z');
    });

    it('when --dry-run, reports what it would download and writes nothing', async function () {
      const report = await clientFor(mirror, proxy).sync({ dir, dryRun: true });

      expect(report.files.map((file) => file.outcome)).to.deep.equal(files.map(() => 'would_download'));
      expect(await readdir(dir)).to.deep.equal([]);
    });

    it('when If-None-Match names the current version, download answers 304 with no bytes', async function () {
      const client = clientFor(mirror, proxy);
      const info = await client.info('SYM1');

      const result = await client.download('SYM1', { ifNoneMatch: info.etag });

      expect(result.status).to.equal(304);
      const chunks: Buffer[] = [];
      for await (const chunk of result.body) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).length).to.equal(0);
    });
  });

  describe('when a transfer is interrupted mid-file', function () {
    const files = publishedFiles(1, { size: 1_500_000 });
    const file = files[0] as PublishedFile;
    let mirror: MirrorGateway;

    beforeEach(async function () {
      mirror = await startMirrorGateway(files);
    });

    afterEach(async function () {
      await mirror.close();
    });

    /** Runs a sync whose first download stalls after 300 000 bytes, and stops it once bytes are on disk. */
    async function interruptedSync(): Promise<number> {
      const stalling = await startTamperingProxy(mirror.gateway.port, (exchange) =>
        exchange.path.startsWith('/download/') ? { body: stallAfter(300_000) } : undefined,
      );
      try {
        const stop = new AbortController();
        const events = eventWaiter();
        const running = clientFor(mirror, stalling).sync({ dir, signal: stop.signal, onEvent: events.onEvent });
        await events.next((event) => event.type === 'file-progress' && event.received > 0);
        stop.abort();
        const report = await running;
        expect(report.interrupted).to.equal(true);
        expect(report.files.map((entry) => entry.outcome)).to.deep.equal(['interrupted']);
      } finally {
        await stalling.close();
      }
      const partSize = (await stat(`${localFile(dir, file)}.part`)).size;
      expect(partSize).to.be.greaterThan(0).and.at.most(300_000);
      return partSize;
    }

    it('resumes from the .part offset with Range and If-Range, and the result is byte-identical', async function () {
      const partSize = await interruptedSync();
      const proxy = await startTamperingProxy(mirror.gateway.port);
      try {
        const report = await clientFor(mirror, proxy).sync({ dir });

        const [download] = proxy.downloads();
        expect(download?.requestHeaders['range']).to.equal(`bytes=${partSize}-`);
        expect(download?.requestHeaders['if-range']).to.equal(download?.responseHeaders['etag']);
        expect(download?.status).to.equal(206);
        expect(report.files[0]?.resumedFrom).to.equal(partSize);
        expect(report.bytesTransferred).to.equal(file.bytes.length - partSize);
        await expectMirrored(dir, files);
        expect(await partFilesIn(dir)).to.deep.equal([]);
      } finally {
        await proxy.close();
      }
    });

    it('when the file changed in between, discards the old .part and fetches the new version whole', async function () {
      await interruptedSync();
      const changed = Buffer.from(file.bytes);
      changed.fill(0x5a, 0, 500_000);
      await mirror.publish(file.path, changed);
      const proxy = await startTamperingProxy(mirror.gateway.port);
      try {
        const report = await clientFor(mirror, proxy).sync({ dir });

        const [download] = proxy.downloads();
        expect(download?.requestHeaders['if-range'], 'the resume still names the old version').to.be.a('string');
        expect(download?.status, 'If-Range failed: the whole new file').to.equal(200);
        expect(report.bytesTransferred).to.equal(changed.length);
        expect((await readFile(localFile(dir, file))).equals(changed)).to.equal(true);
      } finally {
        await proxy.close();
      }
    });

    it('when the connection is cut mid-body, the same run resumes from what arrived', async function () {
      const proxy = await startTamperingProxy(mirror.gateway.port, (exchange) =>
        exchange.path.startsWith('/download/') && exchange.requestHeaders['range'] === undefined ? { cutAfter: 200_000 } : undefined,
      );
      try {
        const retries: SyncEvent[] = [];
        const report = await clientFor(mirror, proxy).sync({ dir, onEvent: (event) => event.type === 'file-retry' && retries.push(event) });

        expect(report.failed, JSON.stringify(report.files)).to.equal(0);
        const ranges = proxy.downloads().map((exchange) => exchange.requestHeaders['range']);
        expect(ranges[0]).to.equal(undefined);
        expect(ranges[1]).to.match(/^bytes=\d+-$/);
        expect(Number(/\d+/.exec(ranges[1] ?? '')?.[0])).to.be.greaterThan(0).and.at.most(200_000);
        expect(retries).to.have.length(1);
        await expectMirrored(dir, files);
      } finally {
        await proxy.close();
      }
    });
  });

  describe('when a byte of a transfer is corrupted', function () {
    const files = publishedFiles(2, { size: 100_000 });
    let mirror: MirrorGateway;

    before(async function () {
      mirror = await startMirrorGateway(files);
    });

    after(async function () {
      await mirror.close();
    });

    it('detects the MD5 mismatch, discards the part and downloads the file again', async function () {
      let corrupted = 0;
      const proxy = await startTamperingProxy(mirror.gateway.port, (exchange) => {
        if (!exchange.path.startsWith('/download/SYM0') || corrupted > 0) return undefined;
        corrupted += 1;
        return { body: flipByteAt(12_345) };
      });
      try {
        const retries: SyncEvent[] = [];
        const report = await clientFor(mirror, proxy).sync({ dir, onEvent: (event) => event.type === 'file-retry' && retries.push(event) });

        expect(corrupted).to.equal(1);
        expect(retries.map((event) => event.type === 'file-retry' && event.code)).to.deep.equal(['integrity_failed']);
        expect(report.failed).to.equal(0);
        await expectMirrored(dir, files);
      } finally {
        await proxy.close();
      }
    });

    it('detects a body one byte short of the listed size and downloads the file again', async function () {
      let shortened = 0;
      const proxy = await startTamperingProxy(mirror.gateway.port, (exchange) => {
        if (!exchange.path.startsWith('/download/SYM1') || shortened > 0) return undefined;
        shortened += 1;
        const length = Number(exchange.responseHeaders['content-length']) - 1;
        return { headers: { 'content-length': String(length) }, body: truncateTo(length) };
      });
      try {
        const retries: SyncEvent[] = [];
        const report = await clientFor(mirror, proxy).sync({ dir, onEvent: (event) => event.type === 'file-retry' && retries.push(event) });

        expect(shortened).to.equal(1);
        expect(retries.map((event) => event.type === 'file-retry' && event.code)).to.deep.equal(['integrity_failed']);
        expect(report.failed).to.equal(0);
        await expectMirrored(dir, files);
      } finally {
        await proxy.close();
      }
    });
  });

  describe('when several symbols name one storage path', function () {
    const files = publishedFiles(2, { size: 200_000 });
    let mirror: MirrorGateway;
    let proxy: TamperingProxy;

    before(async function () {
      mirror = await startMirrorGateway(files);
      await mirror.setIndex([...files, { symbol: 'ALIAS0', path: (files[0] as PublishedFile).path }, { symbol: 'ALIAS1', path: (files[0] as PublishedFile).path }]);
      proxy = await startTamperingProxy(mirror.gateway.port);
    });

    after(async function () {
      await proxy.close();
      await mirror.close();
    });

    it('fetches that file once, never twice into one .part', async function () {
      const report = await clientFor(mirror, proxy).sync({ dir });

      expect(proxy.downloads()).to.have.length(files.length);
      expect(report.downloaded).to.equal(files.length);
      expect(report.failed).to.equal(0);
      await expectMirrored(dir, files);
    });
  });

  describe('when the mirror holds symbolic links', function () {
    const files = publishedFiles(2, { size: 3_000 });
    const file = files[0] as PublishedFile;
    let mirror: MirrorGateway;
    let proxy: TamperingProxy;
    let outside: string;

    before(async function () {
      mirror = await startMirrorGateway(files);
      proxy = await startTamperingProxy(mirror.gateway.port);
    });

    after(async function () {
      await proxy.close();
      await mirror.close();
    });

    beforeEach(async function () {
      outside = await mkdtemp(join(tmpdir(), 'dfg-outside-'));
    });

    afterEach(async function () {
      await rm(outside, { recursive: true, force: true });
    });

    it('when a folder of the mirror is a link to another folder, writes nothing through it and fails those files with unsafe_path', async function () {
      await symlink(outside, join(dir, 'data'));

      const report = await clientFor(mirror, proxy).sync({ dir });

      expect(report.files.map((entry) => [entry.outcome, entry.error?.code])).to.deep.equal(files.map(() => ['failed', 'unsafe_path']));
      expect(await readdir(outside, { recursive: true })).to.deep.equal([]);
    });

    it('when a .part is a link to a file elsewhere, leaves that file alone and mirrors the file', async function () {
      const victim = join(outside, 'precious');
      await writeFile(victim, 'precious');
      const { etag } = await clientFor(mirror, proxy).info(file.symbol);
      await mkdir(join(dir, 'data', 'even'), { recursive: true });
      await symlink(victim, `${localFile(dir, file)}.part`);
      await writeFile(`${localFile(dir, file)}.part.json`, JSON.stringify({ etag, size: file.bytes.length }));

      const report = await clientFor(mirror, proxy).sync({ dir });

      expect(await readFile(victim, 'utf8')).to.equal('precious');
      expect(report.failed).to.equal(0);
      await expectMirrored(dir, files);
    });

    it('when a mirrored file was replaced by a link, never counts the link\'s target as the file: downloads it again in place of the link', async function () {
      const client = clientFor(mirror, proxy);
      await client.sync({ dir });
      const victim = join(outside, 'same-size');
      await writeFile(victim, Buffer.alloc(file.bytes.length, 1));
      await rm(localFile(dir, file));
      await symlink(victim, localFile(dir, file));

      const report = await client.sync({ dir });

      expect(report.downloaded).to.equal(1);
      expect((await lstat(localFile(dir, file))).isSymbolicLink()).to.equal(false);
      expect((await readFile(victim)).equals(Buffer.alloc(file.bytes.length, 1))).to.equal(true);
      await expectMirrored(dir, files);
    });
  });

  describe('when a body goes on past the size of a 1,400-byte file', function () {
    const files = publishedFiles(1, { size: 1400 });
    const file = files[0] as PublishedFile;
    /** The proxy's buffers and the client's stream buffers together hold far less than this. */
    const PRODUCED_BOUND = 16 * 1024 * 1024;
    let mirror: MirrorGateway;

    before(async function () {
      mirror = await startMirrorGateway(files);
    });

    after(async function () {
      await mirror.close();
    });

    const largestProgress = (events: readonly SyncEvent[]): number =>
      Math.max(0, ...events.map((event) => (event.type === 'file-progress' ? event.received : 0)));

    it('when a resumed 206 (Content-Range .../1400) has an endless body, stops at the size, and the next attempt fetches the file whole', async function () {
      const bodies: Array<ReturnType<typeof endlessBody>> = [];
      const proxy = await startTamperingProxy(mirror.gateway.port, (exchange) => {
        if (!exchange.path.startsWith('/download/') || exchange.requestHeaders['range'] === undefined) return undefined;
        const body = endlessBody();
        bodies.push(body);
        return { replaceBody: body.stream };
      });
      try {
        const client = clientFor(mirror, proxy);
        const { etag } = await client.info(file.symbol);
        // What an earlier, interrupted run left: half the file and the version it belongs to.
        await mkdir(join(dir, 'data', 'even'), { recursive: true });
        await writeFile(`${localFile(dir, file)}.part`, file.bytes.subarray(0, 700));
        await writeFile(`${localFile(dir, file)}.part.json`, JSON.stringify({ etag, size: file.bytes.length }));
        const events: SyncEvent[] = [];

        const report = await client.sync({ dir, onEvent: (event) => events.push(event) });

        expect(proxy.downloads().map((exchange) => exchange.status)).to.deep.equal([206, 200]);
        const retries = events.filter((event) => event.type === 'file-retry');
        expect(retries.map((event) => event.type === 'file-retry' && event.code)).to.deep.equal(['integrity_failed']);
        expect(retries[0]?.type === 'file-retry' && retries[0].message).to.contain('more than the 1400 bytes');
        expect(largestProgress(events), 'bytes ever in the .part').to.be.at.most(file.bytes.length);
        expect(bodies[0]?.produced()).to.be.below(PRODUCED_BOUND);
        expect(report.failed).to.equal(0);
        await expectMirrored(dir, files);
      } finally {
        await proxy.close();
      }
    });

    it('when every 200 announces a huge Content-Length and never ends, stops each at the listed size and fails the file', async function () {
      const bodies: Array<ReturnType<typeof endlessBody>> = [];
      const proxy = await startTamperingProxy(mirror.gateway.port, (exchange) => {
        if (!exchange.path.startsWith('/download/')) return undefined;
        const body = endlessBody();
        bodies.push(body);
        return { headers: { 'content-length': String(2 ** 40) }, replaceBody: body.stream };
      });
      try {
        const events: SyncEvent[] = [];

        const report = await clientFor(mirror, proxy).sync({ dir, onEvent: (event) => events.push(event) });

        expect(report.failed).to.equal(1);
        expect(report.files[0]?.error?.code).to.equal('integrity_failed');
        expect(report.files[0]?.error?.message).to.contain('more than the 1400 bytes');
        expect(bodies).to.have.length(3);
        expect(largestProgress(events), 'bytes ever in the .part').to.be.at.most(file.bytes.length);
        for (const body of bodies) expect(body.produced()).to.be.below(PRODUCED_BOUND);
        expect(await partFilesIn(dir)).to.deep.equal([]);
      } finally {
        await proxy.close();
      }
    });
  });

  describe('with a download limit of 3 per window', function () {
    const files = publishedFiles(10, { size: 5_000 });
    let mirror: MirrorGateway;
    let proxy: TamperingProxy;

    before(async function () {
      mirror = await startMirrorGateway(files, { env: { DOWNLOAD_RATE_LIMIT: '3', DOWNLOAD_RATE_WINDOW_SECONDS: '1' } });
      proxy = await startTamperingProxy(mirror.gateway.port);
    });

    after(async function () {
      await proxy.close();
      await mirror.close();
    });

    it('a sync of 10 files waits as Retry-After says, halves its concurrency, and completes', async function () {
      const retries: RetryEvent[] = [];
      const throttled: SyncEvent[] = [];
      const client = clientFor(mirror, proxy, { onRetry: (event) => retries.push(event) });

      const report = await client.sync({ dir, onEvent: (event) => event.type === 'throttled' && throttled.push(event) });

      expect(report.failed).to.equal(0);
      expect(report.downloaded).to.equal(10);
      await expectMirrored(dir, files);
      const refused = proxy.downloads().filter((exchange) => exchange.status === 429);
      expect(refused.length, 'the gateway refused some downloads').to.be.greaterThan(0);
      const rateLimited = retries.filter((event) => event.status === 429);
      expect(rateLimited).to.have.length(refused.length);
      for (const event of rateLimited) {
        expect(event.retryAfterMs, 'Retry-After was read').to.be.a('number');
        expect(event.delayMs).to.be.at.least(event.retryAfterMs ?? Infinity);
      }
      expect(throttled[0]?.type === 'throttled' && throttled[0].concurrency).to.equal(2);
    });
  });
});

