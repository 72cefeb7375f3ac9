import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { createClient, type ChangeEvent, type ChangeReport, type GatewayClient } from '../../client/src/index.js';
import { MemoryChangeLog } from '../../src/adapters/changes/memory-change-log.js';
import { originZeroClock } from '../support/change-log-origin.js';
import { MemoryChecksumStore } from '../../src/adapters/changes/memory-checksum-store.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { packageRoot } from '../../src/app/package-root.js';
import type { FileChangeType } from '../../src/domain/changes.js';
import { deadline } from '../support/deadlines.js';
import { changeStoresWith, startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';

/*
 * The client library's feed (`gateway.changes()`), the SHA-256 check of `sync`, and `sync --watch`
 * (library and `dfg` child process) against the real gateway wired with the memory change log,
 * into which each test appends the events a scanner would.
 */

const CLIENT = { clientId: 'acme', secret: 'acme-secret-acme-secret' };
const exists = (path: string): Promise<boolean> => access(path).then(() => true, () => false);
const sha256Of = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

interface Fixture {
  readonly store: MemoryBlobStore;
  readonly log: MemoryChangeLog;
  readonly checksums: MemoryChecksumStore;
  readonly gateway: TestGateway;
  /** Files the index lists, by symbol. */
  readonly index: Map<string, string>;
  /** Stores `bytes` at `path` (listed in the index under `symbol`), records its SHA-256 (or `sha256`), and logs the event. */
  publish(symbol: string, path: string, bytes: Buffer, options?: { readonly type?: FileChangeType; readonly sha256?: string; readonly log?: boolean }): Promise<void>;
  /** Removes the file from storage and the index, and logs its withdrawal. */
  withdraw(symbol: string, path: string): Promise<void>;
  close(): Promise<void>;
}

async function startFixture(): Promise<Fixture> {
  const store = new MemoryBlobStore();
  const log = new MemoryChangeLog({ clock: originZeroClock });
  const checksums = new MemoryChecksumStore();
  const index = new Map<string, string>();
  const writeIndex = (): void => store.put('indexes/acme.csv', buildIndexCsv([...index].map(([symbol, path]) => buildIndexRow({ Symbol: symbol, FileName: path }))));
  writeIndex();
  const gateway = await startGateway({
    store,
    changeStores: changeStoresWith({ log, checksums }),
    clients: [CLIENT, { clientId: 'other', secret: 'other-secret-other-secret' }],
    // The index is kept as in production (INDEX_REFRESH_SECONDS=60): a file released by a row added to it
    // must be served as soon as its event is out (a refusal checks the stored index again).
    env: { LIST_CACHE_SECONDS: '0' },
    changesPollMs: 20,
  });
  const fileOf = async (symbol: string, path: string) => {
    const properties = await store.getProperties(path);
    if (properties === undefined) throw new Error(`${path} is not stored`);
    return { symbol, fileName: path, size: properties.size, etag: properties.etag, uploaded: properties.lastModified };
  };
  return {
    store,
    log,
    checksums,
    gateway,
    index,
    async publish(symbol, path, bytes, options = {}) {
      store.put(path, bytes);
      index.set(symbol, path);
      writeIndex();
      const file = await fileOf(symbol, path);
      await checksums.record({ path, etag: file.etag }, options.sha256 ?? sha256Of(bytes));
      if (options.log !== false) await log.append([{ clientId: 'acme', type: options.type ?? 'file.released', time: new Date(), file }]);
    },
    async withdraw(symbol, path) {
      const file = await fileOf(symbol, path);
      store.delete(path);
      index.delete(symbol);
      writeIndex();
      await log.append([{ clientId: 'acme', type: 'file.withdrawn', time: new Date(), file }]);
    },
    close: () => gateway.close(),
  };
}

/** Resolves with the first value `match` accepts among those pushed, within a deadline. */
function collector<T>(): { push: (value: T) => void; fail: (error: unknown) => void; next: (match: (value: T) => boolean) => Promise<T>; readonly all: T[] } {
  const all: T[] = [];
  const waiters: Array<{ match: (value: T) => boolean; resolve: (value: T) => void; reject: (error: unknown) => void }> = [];
  let failure: unknown;
  return {
    all,
    fail: (error) => {
      failure = error;
      for (const waiter of waiters.splice(0)) waiter.reject(error);
    },
    push: (value) => {
      all.push(value);
      for (const waiter of [...waiters]) {
        if (waiter.match(value)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(value);
        }
      }
    },
    next: (match) =>
      new Promise((resolve, reject) => {
        const found = all.find(match);
        if (found !== undefined) return resolve(found);
        if (failure !== undefined) return reject(failure);
        const timer = setTimeout(() => reject(new Error(`nothing matched within ${deadline(15_000)} ms; got ${JSON.stringify(all)}`)), deadline(15_000));
        waiters.push({
          match,
          resolve: (value) => {
            clearTimeout(timer);
            resolve(value);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        });
      }),
  };
}

describe('the client library and the change feed', function () {
  this.timeout(60_000);
  let fixture: Fixture;
  let dir: string;
  let downloads: string[];
  let client: GatewayClient;

  beforeEach(async function () {
    fixture = await startFixture();
    dir = await mkdtemp(join(tmpdir(), 'dfg-feed-'));
    downloads = [];
    client = createClient({
      baseUrl: fixture.gateway.baseUrl,
      clientId: CLIENT.clientId,
      clientSecret: CLIENT.secret,
      retry: { baseDelayMs: 20, maxDelayMs: 200 },
      fetch: (request) => {
        if (new URL(request.url).pathname.startsWith('/download/')) downloads.push(new URL(request.url).pathname);
        return fetch(request);
      },
    });
  });

  afterEach(async function () {
    await fixture?.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe('gateway.changes()', function () {
    it('follows nextCursor page by page, yields only the caller’s events, ends when caught up, and resumes from its cursor', async function () {
      for (let i = 0; i < 5; i += 1) await fixture.publish(`S${i}`, `data/${i}.csv`, Buffer.from(`${i}\n`));
      await fixture.log.append([{ clientId: 'other', type: 'file.released', time: new Date(), file: { symbol: 'X', fileName: 'theirs.csv', size: 1, etag: '"x"', uploaded: new Date() } }]);
      const stream = client.changes({ limit: 2 });
      const seen: ChangeEvent[] = [];
      for await (const event of stream) seen.push(event);
      expect(seen.map((event) => event.file.fileName)).to.deep.equal(['data/0.csv', 'data/1.csv', 'data/2.csv', 'data/3.csv', 'data/4.csv']);
      expect(seen[0]?.file.sha256).to.equal(sha256Of(Buffer.from('0\n')));
      await fixture.publish('S5', 'data/5.csv', Buffer.from('5\n'));
      const later: string[] = [];
      for await (const event of client.changes({ cursor: stream.cursor })) later.push(event.file.fileName);
      expect(later).to.deep.equal(['data/5.csv']);
    });

    it('with wait, yields an event appended while it waits', async function () {
      const stop = new AbortController();
      const stream = client.changes({ wait: 20, signal: stop.signal })[Symbol.asyncIterator]();
      const first = stream.next();
      await fixture.publish('LATE', 'data/late.csv', Buffer.from('late\n'));
      const { value } = await first;
      expect((value as ChangeEvent).file.fileName).to.equal('data/late.csv');
      stop.abort();
    });

    it('starts from the changesCursor of a listing and misses nothing after it', async function () {
      await fixture.publish('OLD', 'data/old.csv', Buffer.from('old\n'));
      const listing = await client.list();
      await fixture.publish('NEW', 'data/new.csv', Buffer.from('new\n'));
      const seen: string[] = [];
      for await (const event of client.changes({ cursor: listing.changesCursor })) seen.push(event.file.fileName);
      expect(seen).to.deep.equal(['data/new.csv']);
    });
  });

  describe('sync and SHA-256', function () {
    it('verifies the listed SHA-256 and mirrors a file whose digest is right', async function () {
      await fixture.publish('A', 'data/a.bin', randomBytes(5000), { log: false });
      const report = await client.sync({ dir });
      expect(report.downloaded).to.equal(1);
      expect(downloads).to.have.length(1);
    });

    it('refetches a file whose SHA-256 differs once, then fails it with an error naming the file', async function () {
      await fixture.publish('A', 'data/a.bin', randomBytes(5000), { log: false, sha256: 'ab'.repeat(32) });
      await fixture.publish('B', 'data/b.bin', randomBytes(3000), { log: false });
      const report = await client.sync({ dir });
      const failed = report.files.find((file) => file.path === 'data/a.bin');
      expect(failed?.outcome).to.equal('failed');
      expect(failed?.error?.code).to.equal('integrity_failed');
      expect(failed?.error?.message).to.include('data/a.bin').and.to.include('SHA-256');
      expect(downloads.filter((path) => path === '/download/A'), 'fetched, then fetched once more').to.have.length(2);
      expect(await exists(join(dir, 'data', 'a.bin')), 'never moved into place').to.equal(false);
      expect(report.files.find((file) => file.path === 'data/b.bin')?.outcome).to.equal('downloaded');
    });
  });

  describe('gateway.watch() (sync --watch)', function () {
    /** The library, each request answered by `fetch` unless `failed` says the gateway is down for it; retries spent fast. */
    const clientDownWhen = (failed: (path: string) => boolean): GatewayClient =>
      createClient({
        baseUrl: fixture.gateway.baseUrl,
        clientId: CLIENT.clientId,
        clientSecret: CLIENT.secret,
        retry: { maxRetries: 1, baseDelayMs: 5, maxDelayMs: 10 },
        fetch: (request) => (failed(new URL(request.url).pathname) ? Promise.reject(new TypeError('fetch failed')) : fetch(request)),
      });

    it('takes again an event whose download failed because the gateway went down, once the gateway is back', async function () {
      let down = false;
      let tripped = false;
      const flaky = clientDownWhen((path) => {
        // The (first) download of B meets the outage first; the feed meets it right after.
        if (path === '/download/B' && !tripped) {
          tripped = true;
          down = true;
        }
        return down && (path === '/download/B' || path === '/changes');
      });
      const stop = new AbortController();
      const changes = collector<ChangeReport>();
      const mirrored = collector<boolean>();
      const outages = collector<number>();
      const watching = flaky.watch({ dir, signal: stop.signal, waitSeconds: 1, outageWaitMs: 20, onChange: changes.push, onMirrored: () => mirrored.push(true), onOutage: (_error, ms) => outages.push(ms) });
      watching.catch((error: unknown) => changes.fail(error));
      await mirrored.next(() => true);
      const b = randomBytes(200);
      await fixture.publish('B', 'data/b.bin', b);
      await outages.next(() => true);
      down = false;
      expect(await changes.next((report) => report.path === 'data/b.bin' && report.outcome === 'downloaded')).to.include({ type: 'file.released' });
      expect(changes.all.filter((report) => report.outcome === 'failed'), 'never reported failed and passed over').to.deep.equal([]);
      expect((await readFile(join(dir, 'data', 'b.bin'))).equals(b)).to.equal(true);
      stop.abort();
      await watching;
    });

    it('waits out an outage of the gateway (its feed unreachable past the client\'s retries) and goes on from its cursor', async function () {
      let down = false;
      const flaky = clientDownWhen((path) => down && path === '/changes');
      const stop = new AbortController();
      const changes = collector<ChangeReport>();
      const mirrored = collector<boolean>();
      const outages = collector<number>();
      const watching = flaky.watch({
        dir,
        signal: stop.signal,
        waitSeconds: 1,
        outageWaitMs: 20,
        onChange: changes.push,
        onMirrored: () => mirrored.push(true),
        onOutage: (_error, retryInMs) => outages.push(retryInMs),
      });
      watching.catch((error: unknown) => changes.fail(error));
      await mirrored.next(() => true);
      down = true;
      const b = randomBytes(300);
      await fixture.publish('B', 'data/b.bin', b);
      // Two outages in a row: the second wait is twice the first.
      await outages.next((ms) => ms === 40);
      down = false;
      expect(await changes.next((report) => report.path === 'data/b.bin')).to.include({ type: 'file.released', outcome: 'downloaded' });
      expect((await readFile(join(dir, 'data', 'b.bin'))).equals(b)).to.equal(true);
      expect(mirrored.all, 'followed on from its cursor, no second mirror').to.have.length(1);
      stop.abort();
      await watching;
    });


    it('mirrors, then downloads a released file, replaces an updated one, and keeps a withdrawn one without delete', async function () {
      const a = randomBytes(4000);
      await fixture.publish('A', 'data/a.bin', a, { log: false });
      const stop = new AbortController();
      const changes = collector<ChangeReport>();
      const mirrored = collector<boolean>();
      const watching = client.watch({ dir, signal: stop.signal, waitSeconds: 5, onChange: changes.push, onMirrored: () => mirrored.push(true) });
      watching.catch((error: unknown) => changes.fail(error));
      // Published once the mirror is done: the event is then the feed's to bring.
      await mirrored.next(() => true);
      const b = randomBytes(3000);
      await fixture.publish('B', 'data/b.bin', b);
      expect(await changes.next((report) => report.path === 'data/b.bin')).to.include({ type: 'file.released', outcome: 'downloaded' });
      expect((await readFile(join(dir, 'data', 'b.bin'))).equals(b)).to.equal(true);
      const a2 = randomBytes(4100);
      await fixture.publish('A', 'data/a.bin', a2, { type: 'file.updated' });
      expect(await changes.next((report) => report.type === 'file.updated')).to.include({ path: 'data/a.bin', outcome: 'downloaded' });
      expect((await readFile(join(dir, 'data', 'a.bin'))).equals(a2)).to.equal(true);
      await fixture.withdraw('B', 'data/b.bin');
      expect(await changes.next((report) => report.type === 'file.withdrawn')).to.include({ path: 'data/b.bin', outcome: 'kept' });
      expect(await exists(join(dir, 'data', 'b.bin'))).to.equal(true);
      stop.abort();
      await watching;
    });

    it('deletes a withdrawn file the mirror wrote when asked to (delete)', async function () {
      await fixture.publish('A', 'data/a.bin', randomBytes(1000), { log: false });
      const stop = new AbortController();
      const changes = collector<ChangeReport>();
      const mirrored = collector<boolean>();
      const watching = client.watch({ dir, delete: true, signal: stop.signal, waitSeconds: 5, onChange: changes.push, onMirrored: () => mirrored.push(true) });
      watching.catch((error: unknown) => changes.fail(error));
      // Published once the mirror is done: the event is then the feed's to bring.
      await mirrored.next(() => true);
      await fixture.publish('B', 'data/b.bin', randomBytes(10));
      await changes.next((report) => report.path === 'data/b.bin');
      await fixture.withdraw('A', 'data/a.bin');
      expect(await changes.next((report) => report.type === 'file.withdrawn')).to.include({ path: 'data/a.bin', outcome: 'deleted' });
      expect(await exists(join(dir, 'data', 'a.bin'))).to.equal(false);
      stop.abort();
      await watching;
    });
  });

  describe('dfg sync --watch', function () {
    it('mirrors, prints one JSON line per event off a terminal (a new file downloaded), and exits 130 on Ctrl-C', async function () {
      await fixture.publish('A', 'data/a.bin', randomBytes(2000), { log: false });
      const tsx = pathToFileURL(createRequire(join(packageRoot(), 'package.json')).resolve('tsx')).href;
      const child: ChildProcess = spawn(process.execPath, ['--import', tsx, join(packageRoot(), 'client', 'src', 'cli', 'dfg.ts'), 'sync', dir, '--watch', '--quiet'], {
        cwd: packageRoot(),
        env: { PATH: process.env['PATH'] ?? '', HOME: dir, DFG_URL: fixture.gateway.baseUrl, DFG_CLIENT_ID: CLIENT.clientId, DFG_CLIENT_SECRET: CLIENT.secret },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const killer = setTimeout(() => child.kill('SIGKILL'), deadline(30_000));
      const lines = collector<Record<string, unknown>>();
      let stderr = '';
      let buffered = '';
      child.stdout?.setEncoding('utf8').on('data', (text: string) => {
        buffered += text;
        const complete = buffered.split('\n');
        buffered = complete.pop() ?? '';
        for (const line of complete) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      });
      child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      try {
        // The mirror is done once a.bin is on disk; then a new file is published.
        const mirrored = async (): Promise<void> => {
          for (let waited = 0; !(await exists(join(dir, 'data', 'a.bin'))); waited += 50) {
            if (waited > deadline(15_000)) throw new Error(`the mirror never wrote data/a.bin; stderr: ${stderr}`);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        };
        await mirrored();
        const fresh = randomBytes(1234);
        await fixture.publish('NEW', 'data/new.bin', fresh);
        const line = await lines.next((value) => value['path'] === 'data/new.bin');
        expect(line).to.include({ type: 'change', event: 'file.released', outcome: 'downloaded', bytes: 1234 });
        expect((await readFile(join(dir, 'data', 'new.bin'))).equals(fresh)).to.equal(true);
        child.kill('SIGINT');
        expect(await exited, stderr).to.equal(130);
      } finally {
        clearTimeout(killer);
        child.kill('SIGKILL');
      }
    });
  });
});
