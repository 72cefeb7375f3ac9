/**
 * `npm run bench -- --only changes`: what the change feed costs and how late it is (issue 27).
 *
 * Scan cost: a local folder store of `--changes-blobs` (100,000) files and `--changes-clients`
 * (1,000) clients whose indexes spread over them (each file in two indexes), scanned by the real
 * `ChangeScanner` over the real `LocalFolderBlobStore`, `BlobIndexSource` and folder change stores
 * (log, checksums, scan state: what a gateway on the local folder store uses). A first scan records
 * what exists; then, `--changes-runs` (3) times, `--changes-changed` (100) files change (new
 * versions, uploads of files an index already lists, one deletion) and the scanner scans again.
 * Each such scan is measured at the `BlobStore` port (listings, property reads, content reads and
 * their bytes), in wall time and in this process's CPU time, beside its anchor in the same round: a
 * raw listing of the same store (`list('')` iterated whole, nothing else). Then the same on Azure
 * Blob (Azurite, `--changes-azure-blobs` blobs, 100,000; 0 skips it), each HTTP call counted by the
 * scale bench's proxy as Azure bills it. The background hashing of
 * versions stored before the first scan is off here (its rate is a budget of its own, not the
 * cost of a change).
 *
 * Feed delay: a gateway (`dist/`, a process of its own) on the same folder and clients plus one
 * watcher, with CHANGES_SCAN_SECONDS at the configuration's minimum (5). The watcher long-polls
 * `GET /changes?wait=60`; the bench writes a file its index lists but storage did not hold, at a
 * random moment of the scan interval, and times from the write to the event's arrival,
 * `--changes-delay-runs` (10) times. The bound is the scan interval plus the scan's own time plus
 * the feed's poll of the log's head (1 s).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { dirname, join } from 'node:path';
import { folderChangeStores } from '../src/adapters/changes/change-stores.js';
import { NodeContentHasher } from '../src/adapters/changes/node-content-hasher.js';
import { InMemoryClientRegistry } from '../src/adapters/clients/in-memory-client-registry.js';
import { hashSecret } from '../src/adapters/clients/secret-hash.js';
import { BlobIndexSource } from '../src/adapters/index/blob-index-source.js';
import { fromConnectionString } from '../src/adapters/storage/azure-blob-store.js';
import { LocalFolderBlobStore } from '../src/adapters/storage/local-folder-blob-store.js';
import { ChangeScanner, type ScanReport } from '../src/application/change-scanner.js';
import { packageRoot } from '../src/app/package-root.js';
import type { BlobContent, BlobReadOptions, BlobStore, BlobSummary, ClientRecord, Clock } from '../src/domain/ports.js';
import { ROWS_PER_SLICE } from '../src/domain/slices.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, createTestContainer, startAzurite } from '../test/support/azurite.js';
import { benchTable, type ScaleDependencies, type ScaleRow } from './scale.js';
import { CallCounts, countingProxy } from './scale-azure.js';

export interface ChangesOptions {
  readonly blobs: number;
  readonly clients: number;
  readonly changed: number;
  readonly runs: number;
  readonly delayRuns: number;
  /** Blobs of the same scan on Azure Blob (Azurite), storage calls counted by a proxy; 0 skips it. */
  readonly azureBlobs: number;
  readonly workDir: string;
  readonly write: boolean;
}

const secret = 'changes-secret-0123456789abcdef';
const filesPerFolder = 1000;
/** CHANGES_SCAN_SECONDS of the delay's gateway: the configuration's minimum. */
const scanSeconds = 5;
const clock: Clock = { now: () => new Date() };
/** The scanner's and the local store's turns of the event loop, as the gateway gives them. */
const slices = { yieldToLoop: () => new Promise<void>((resolve) => setImmediate(resolve)), stepsPerSlice: ROWS_PER_SLICE };

const fmt = (value: number, unit: string): string => `${value.toFixed(value >= 100 ? 0 : 2)} ${unit}`;
const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const loadAverage = async (): Promise<string> => (await readFile('/proc/loadavg', 'utf8').catch(() => '?')).split(' ').slice(0, 3).join(' ');
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const dataPath = (i: number): string => `data/${Math.floor(i / filesPerFolder)}/f${i}.csv`;
/** Files an index lists before storage holds them: one per client. */
const pendingPath = (c: number): string => `pending/p${c}.csv`;

/** What the scanner asked of storage, counted at the `BlobStore` port. */
class CountingStore implements BlobStore {
  lists = 0;
  listed = 0;
  properties = 0;
  existenceChecks = 0;
  reads = 0;
  readBytes = 0;
  constructor(readonly inner: BlobStore) {}
  reset(): void {
    this.lists = this.listed = this.properties = this.existenceChecks = this.reads = this.readBytes = 0;
  }
  getProperties(path: string) {
    this.properties += 1;
    return this.inner.getProperties(path);
  }
  async *list(prefix: string): AsyncIterable<BlobSummary> {
    this.lists += 1;
    for await (const blob of this.inner.list(prefix)) {
      this.listed += 1;
      yield blob;
    }
  }
  existing(paths: readonly string[]) {
    this.existenceChecks += 1;
    return this.inner.existing(paths);
  }
  probe(signal?: AbortSignal) {
    return this.inner.probe(signal);
  }
  async read(path: string, options: BlobReadOptions): Promise<BlobContent> {
    this.reads += 1;
    const content = await this.inner.read(path, options);
    const counter = this;
    return (async function* () {
      for await (const chunk of content) {
        counter.readBytes += chunk.length;
        yield chunk;
      }
    })();
  }
}

function indexCsv(c: number, clients: number, blobs: number): string {
  // Each client lists its own share of the files and its neighbour's (every file in two indexes), and one file not stored yet.
  const share = Math.floor(blobs / clients);
  const lines = ['Symbol,ShortDescriptionPt,ShortDescription,FileName'];
  for (const owner of [c, (c + 1) % clients]) {
    for (let i = owner * share; i < (owner + 1) * share; i += 1) lines.push(`S${i}-${c},Arquivo ${i},File ${i},${dataPath(i)}`);
  }
  lines.push(`P${c},Pendente ${c},Pending ${c},${pendingPath(c)}`);
  return `${lines.join('\r\n')}\r\n`;
}

/** A container the scanner is measured on: its store, how the bench writes to it, and (Azure) a proxy's count of HTTP calls. */
interface Container {
  readonly name: string;
  readonly store: BlobStore;
  put(path: string, text: string): Promise<void>;
  remove(path: string): Promise<void>;
  readonly calls?: CallCounts;
}

/** Uploads in flight while seeding (Azurite takes about 1 ms of its CPU per small blob). */
const seedConcurrency = 64;

async function seed(container: Container, blobs: number, clients: number): Promise<void> {
  const work: Array<() => Promise<void>> = [];
  for (let i = 0; i < blobs; i += 1) work.push(() => container.put(dataPath(i), `v1 ${i}\n`));
  for (let c = 0; c < clients; c += 1) work.push(() => container.put(`indexes/c${c}.csv`, indexCsv(c, clients, blobs)));
  let next = 0;
  await Promise.all(
    Array.from({ length: seedConcurrency }, async () => {
      while (next < work.length) {
        const one = work[next] as () => Promise<void>;
        next += 1;
        await one();
      }
    }),
  );
}

function folderContainer(root: string): Container {
  const made = new Set<string>();
  return {
    name: 'local folder store',
    store: new LocalFolderBlobStore(root, slices),
    put: async (path, text) => {
      const folder = dirname(join(root, path));
      if (!made.has(folder)) {
        await mkdir(folder, { recursive: true });
        made.add(folder);
      }
      await writeFile(join(root, path), text);
    },
    remove: (path) => rm(join(root, path)),
  };
}

interface Round {
  readonly report: ScanReport;
  readonly ms: number;
  readonly cpuMs: number;
  readonly lists: number;
  readonly listed: number;
  readonly properties: number;
  readonly existing: number;
  readonly reads: number;
  readonly readBytes: number;
  readonly rawMs: number;
  readonly rawCpuMs: number;
  readonly rawListed: number;
  /** HTTP calls by kind (Azure), of the raw listing and of the scan. */
  readonly rawCalls: string;
  readonly scanCalls: string;
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await work();
  const ms = performance.now() - started;
  const spent = process.cpuUsage(cpu);
  return { value, ms, cpuMs: (spent.user + spent.system) / 1000 };
}

/** Changes `count` files for round `round`: new versions, uploads of listed files, one deletion. */
async function changeFiles(container: Container, options: ChangesOptions, blobs: number, round: number): Promise<{ versions: number; uploads: number; deletions: number }> {
  const uploads = Math.max(1, Math.floor(options.changed / 10));
  const versions = options.changed - uploads - 1;
  const stride = Math.floor(blobs / options.changed);
  // Spread over the container; each round other files.
  for (let k = 0; k < versions; k += 1) {
    const i = (k * stride + round * 7 + 1) % blobs;
    await container.put(dataPath(i), `v${round + 2} ${i} a new version\n`);
  }
  for (let k = 0; k < uploads; k += 1) await container.put(pendingPath((round * uploads + k) % options.clients), `uploaded ${round} ${k}\n`);
  await container.remove(dataPath((round * 7919 + 3) % blobs));
  return { versions, uploads, deletions: 1 };
}

/** Measures the scans on `container`; returns the median wall time of a scan after the changes. */
async function scanCost(options: ChangesOptions, container: Container, blobs: number, record: (row: ScaleRow) => void): Promise<number> {
  const store = new CountingStore(container.store);
  const calls = container.calls;
  const registry = new InMemoryClientRegistry(
    Array.from({ length: options.clients }, (_, c): ClientRecord => ({ clientId: `c${c}`, secretHash: 'x', indexPath: `indexes/c${c}.csv`, enabled: true })),
  );
  const changesDir = join(options.workDir, `scan-changes-${container.name.replace(/\W+/g, '-')}`);
  const stores = folderChangeStores(changesDir, clock);
  const scanner = new ChangeScanner({
    store,
    indexes: new BlobIndexSource(store, 64 * 1024 * 1024),
    registry,
    log: stores.log,
    checksums: stores.checksums,
    hasher: new NodeContentHasher(),
    state: stores.state,
    clock,
    // The backlog of versions stored before the first scan is hashed at a rate of its own: off here.
    backlogBytesPerSecond: 0,
    slices,
    // The bench measures what a scan costs at its sizes, not the production budget (CHANGES_SCANNER_MB).
    maxBytes: 4 * 1024 * 1024 * 1024,
  });
  calls?.reset();
  const first = await timed(() => scanner.scan());
  console.log(`first scan: ${fmt(first.ms, 'ms')} (${fmt(first.cpuMs, 'ms')} CPU), ${first.value.listed} listed, ${first.value.indexesRead} indexes read, ${store.reads} reads`);
  record({
    measure: `first scan (records what exists, no event): ${blobs.toLocaleString('en')} files + ${options.clients.toLocaleString('en')} indexes, ${container.name}`,
    gateway:
      `${fmt(first.ms, 'ms')} wall, ${fmt(first.cpuMs, 'ms')} CPU; ${store.lists} listing (${store.listed.toLocaleString('en')} entries), ${store.reads} content reads (${(store.readBytes / 1024 / 1024).toFixed(1)} MiB: the indexes), ${store.properties} property reads` +
      (calls === undefined ? '' : `; HTTP: ${calls.describe()}`),
    anchor: '-',
    ratio: '-',
    goal: '-',
  });

  const rounds: Round[] = [];
  let mix = { versions: 0, uploads: 0, deletions: 0 };
  for (let round = 0; round < options.runs; round += 1) {
    mix = await changeFiles(container, options, blobs, round);
    // The anchor first, in the same round: the same store listed whole, nothing else.
    store.reset();
    calls?.reset();
    const raw = await timed(async () => {
      let n = 0;
      for await (const _blob of store.list('')) n += 1;
      return n;
    });
    const rawCalls = calls?.describe() ?? '';
    store.reset();
    calls?.reset();
    const scan = await timed(() => scanner.scan());
    const scanCalls = calls?.describe() ?? '';
    rounds.push({
      report: scan.value,
      ms: scan.ms,
      cpuMs: scan.cpuMs,
      lists: store.lists,
      listed: store.listed,
      properties: store.properties,
      existing: store.existenceChecks,
      reads: store.reads,
      readBytes: store.readBytes,
      rawMs: raw.ms,
      rawCpuMs: raw.cpuMs,
      rawListed: raw.value,
      rawCalls,
      scanCalls,
    });
    const r = scan.value;
    console.log(
      `round ${round + 1}: scan ${fmt(scan.ms, 'ms')} (${fmt(scan.cpuMs, 'ms')} CPU), raw listing ${fmt(raw.ms, 'ms')} (${fmt(raw.cpuMs, 'ms')} CPU); ` +
        `added ${r.added}, changed ${r.changed}, removed ${r.removed}, ${r.changes} changes, ${store.reads} reads, ${store.readBytes} bytes; load ${await loadAverage()}`,
    );
  }
  const last = rounds.at(-1) as Round;
  const state = await stat(join(changesDir, 'scan-state.jsonl')).catch(() => undefined);
  const wall = median(rounds.map((r) => r.ms));
  const cpu = median(rounds.map((r) => r.cpuMs));
  const rawWall = median(rounds.map((r) => r.rawMs));
  const rawCpu = median(rounds.map((r) => r.rawCpuMs));
  const counts = (r: Round): string =>
    `${r.lists} listing (${r.listed.toLocaleString('en')} entries), ${r.properties} property reads, ${r.existing} existence checks, ${r.reads} content reads (${r.readBytes.toLocaleString('en')} bytes)` +
    (calls === undefined ? '' : `; HTTP: ${r.scanCalls}`);
  const same = rounds.every((r) => counts(r) === counts(last) && r.report.changes === last.report.changes && r.rawCalls === last.rawCalls);
  record({
    measure:
      `scan after ${options.changed} files changed (${mix.versions} new versions, ${mix.uploads} uploads of listed files, ${mix.deletions} deletion), ` +
      `${options.clients.toLocaleString('en')} clients, each file in 2 indexes, ${container.name}: storage calls and bytes${same ? ' (the same in every round)' : ' (last round)'}`,
    gateway: `${counts(last)}; ${last.report.changes} events (${last.report.added} added, ${last.report.changed} changed, ${last.report.removed} removed); ${last.report.indexesRead} indexes read`,
    anchor: `raw listing of the same store: 1 listing (${last.rawListed.toLocaleString('en')} entries), nothing read${calls === undefined ? '' : `; HTTP: ${last.rawCalls}`}`,
    ratio: `${(last.listed / last.rawListed).toFixed(2)}x entries listed`,
    goal: 'one listing + the bytes of new versions',
  });
  record({
    measure: `same scan (${container.name}), wall time (median of ${options.runs} rounds${state === undefined ? '' : `; the scan state saved is ${(state.size / 1024 / 1024).toFixed(1)} MiB`})`,
    gateway: `${fmt(wall, 'ms')} (${rounds.map((r) => fmt(r.ms, 'ms')).join(', ')})`,
    anchor: `raw listing: ${fmt(rawWall, 'ms')} (${rounds.map((r) => fmt(r.rawMs, 'ms')).join(', ')})`,
    ratio: `${(wall / rawWall).toFixed(2)}x`,
    goal: '-',
  });
  record({
    measure: `same scan (${container.name}), CPU time of this process${calls === undefined ? '' : ' (Azurite runs in another)'}`,
    gateway: `${fmt(cpu, 'ms')} (${rounds.map((r) => fmt(r.cpuMs, 'ms')).join(', ')})`,
    anchor: `raw listing: ${fmt(rawCpu, 'ms')} (${rounds.map((r) => fmt(r.rawCpuMs, 'ms')).join(', ')})`,
    ratio: `${(cpu / rawCpu).toFixed(2)}x`,
    goal: '-',
  });
  return wall;
}

function getJson(port: number, path: string, token: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${token}` }, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as unknown }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

async function waitFor(what: string, check: () => Promise<boolean>, deadlineMs: number, everyMs = 200): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > deadlineMs) throw new Error(`gave up waiting for ${what}`);
    await sleep(everyMs);
  }
  return performance.now() - started;
}

async function feedDelay(deps: ScaleDependencies, options: ChangesOptions, root: string, scanMs: number, record: (row: ScaleRow) => void): Promise<void> {
  const registryDir = join(options.workDir, 'delay');
  await mkdir(registryDir, { recursive: true });
  const secretHash = await hashSecret(secret);
  const at = new Date().toISOString();
  const clients: Record<string, unknown> = {};
  for (let c = 0; c < options.clients; c += 1) clients[`c${c}`] = { secretHash, indexPath: `indexes/c${c}.csv`, enabled: true, createdAt: at, updatedAt: at };
  clients['watcher'] = { secretHash, indexPath: 'indexes/watcher.csv', enabled: true, createdAt: at, updatedAt: at };
  const clientsFile = join(registryDir, 'clients.json');
  await writeFile(clientsFile, JSON.stringify({ version: 1, clients }));
  const watched = (i: number): string => `watched/w${i}.csv`;
  await mkdir(join(root, 'watched'), { recursive: true });
  const rows = Array.from({ length: options.delayRuns }, (_, i) => `W${i},Vigiado ${i},Watched ${i},${watched(i)}`);
  await writeFile(join(root, 'indexes/watcher.csv'), `${['Symbol,ShortDescriptionPt,ShortDescription,FileName', ...rows].join('\r\n')}\r\n`);

  // Its listing (about 100,000 blobs) and rows (about 200,000) are more than the default CHANGES_SCANNER_MB (64) counts.
  const gateway = await deps.startGateway(
    { DATA_DIR: root, CLIENTS_FILE: clientsFile, CHANGES_SCAN_SECONDS: String(scanSeconds), INDEX_MAX_MB: '64', CHANGES_SCANNER_MB: '1024' },
    'changes',
  );
  try {
    const response = await fetch(`http://127.0.0.1:${gateway.port}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'watcher', client_secret: secret }),
    });
    if (response.status !== 200) throw new Error(`token: ${response.status}`);
    const token = ((await response.json()) as { access_token: string }).access_token;
    // The first scan records what exists (no event); the feed starts from there.
    const stateFile = join(registryDir, 'changes', 'scan-state.jsonl');
    const firstMs = await waitFor('the first scan', async () => existsSync(stateFile), 600_000);
    // Versions stored before the first scan are hashed in the background (16 MiB per second of
    // interval): wait until that is done, so that the scans timed below are the steady ones.
    const checksums = join(registryDir, 'changes', 'checksums.jsonl');
    const backlogMs = await waitFor(
      'the backlog of checksums',
      async () => (await readFile(checksums, 'utf8').catch(() => '')).split('\n').length > options.blobs + options.clients,
      900_000,
      1000,
    );
    console.log(`gateway: first scan done after ${fmt(firstMs / 1000, 's')}, backlog hashed ${fmt(backlogMs / 1000, 's')} later; load ${await loadAverage()}`);

    const delays: number[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < options.delayRuns; i += 1) {
      const poll = getJson(gateway.port, `/changes?wait=60${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, token);
      // A random moment of the scan interval (the poll is in the gateway's hands by then).
      await sleep(200 + Math.random() * scanSeconds * 1000);
      const written = performance.now();
      await writeFile(join(root, watched(i)), `watched ${i}\n`);
      const { status, body } = await poll;
      const arrived = performance.now();
      const page = body as { events: Array<{ type: string; file: { symbol: string } }>; nextCursor: string };
      if (status !== 200 || page.events[0]?.type !== 'file.released' || page.events[0]?.file.symbol !== `W${i}`) {
        throw new Error(`run ${i}: expected file.released W${i}, got ${status} ${JSON.stringify(body)}`);
      }
      cursor = page.nextCursor;
      delays.push(arrived - written);
      console.log(`delay ${i + 1}: ${fmt(arrived - written, 'ms')}`);
    }
    const sorted = [...delays].sort((a, b) => a - b);
    record({
      measure:
        `feed delay: a file written to the local folder store until its \`file.released\` reaches a long poll (\`GET /changes?wait=60\`), ${options.delayRuns} runs at random moments of the interval; ` +
        `the gateway watches ${(options.blobs + options.clients + 1).toLocaleString('en')} blobs and ${(options.clients + 1).toLocaleString('en')} clients`,
      gateway: `min ${fmt((sorted[0] ?? Number.NaN) / 1000, 's')}, median ${fmt(median(delays) / 1000, 's')}, max ${fmt((sorted.at(-1) ?? Number.NaN) / 1000, 's')}`,
      anchor: `CHANGES_SCAN_SECONDS=${scanSeconds} (the minimum the configuration allows)`,
      ratio: `${(median(delays) / 1000 / scanSeconds).toFixed(2)}x (median), ${((sorted.at(-1) ?? Number.NaN) / 1000 / scanSeconds).toFixed(2)}x (max)`,
      goal: `<= interval + scan + 1 s (the feed reads the log's head every second): ${fmt(scanSeconds + scanMs / 1000 + 1, 's')} with the scan measured above`,
    });
  } finally {
    await gateway.stop();
  }
}

export async function runChangesBench(deps: ScaleDependencies, options: ChangesOptions): Promise<string> {
  const started = `${new Date().toISOString().slice(0, 16)}Z, load average ${await loadAverage()}`;
  const rows: ScaleRow[] = [];
  const record = (row: ScaleRow): void => {
    console.log(`${row.measure}: ${row.gateway} | ${row.anchor} | ${row.ratio} | ${row.goal}`);
    rows.push(row);
  };
  const root = join(options.workDir, 'changes-data');
  console.log(`Preparing: ${options.blobs.toLocaleString('en')} files and ${options.clients.toLocaleString('en')} indexes in ${root}`);
  const folder = folderContainer(root);
  const seeded = await timed(() => seed(folder, options.blobs, options.clients));
  console.log(`seeded in ${fmt(seeded.ms / 1000, 's')}`);
  const scanMs = await scanCost(options, folder, options.blobs, record);
  if (options.azureBlobs > 0) await azureScanCost(options, record);
  await feedDelay(deps, options, root, scanMs, record);
  const table = benchTable(rows);
  console.log(`\n${table}\n`);
  if (options.write) await writeChangesSection(table, options, started);
  return table;
}

/** The same scan on Azure Blob (Azurite), through a proxy that counts each HTTP call as Azure bills it. */
async function azureScanCost(options: ChangesOptions, record: (row: ScaleRow) => void): Promise<void> {
  const azurite = await startAzurite();
  const calls = new CallCounts();
  const proxy = await countingProxy(Number(new URL(azurite.blobEndpoint).port), calls);
  try {
    const direct = await createTestContainer(azurite.connectionString, 'changes');
    const connectionString = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};BlobEndpoint=http://127.0.0.1:${proxy.port}/${AZURITE_ACCOUNT};`;
    const container: Container = {
      name: 'Azure Blob (Azurite)',
      // Azurite takes seconds per page of 5,000 blobs: the deadline of a call is not what is measured.
      store: fromConnectionString(connectionString, direct.containerName, { responseTimeoutMs: 600_000 }),
      put: async (path, text) => {
        await direct.getBlockBlobClient(path).uploadData(Buffer.from(text));
      },
      remove: async (path) => {
        await direct.getBlobClient(path).delete();
      },
      calls,
    };
    const seeded = await timed(() => seed(container, options.azureBlobs, options.clients));
    console.log(`seeded Azurite with ${options.azureBlobs} blobs and ${options.clients} indexes in ${fmt(seeded.ms / 1000, 's')}`);
    await scanCost(options, container, options.azureBlobs, record);
  } finally {
    await proxy.close();
    await azurite.stop();
  }
}

async function writeChangesSection(table: string, options: ChangesOptions, started: string): Promise<void> {
  const path = join(packageRoot(), 'BENCHMARKS.md');
  const section = [
    '<!-- bench-changes:start -->',
    `Measured with \`npm run bench -- --only changes --changes-blobs ${options.blobs} --changes-clients ${options.clients} --changes-changed ${options.changed} --changes-runs ${options.runs} --changes-delay-runs ${options.delayRuns} --changes-azure-blobs ${options.azureBlobs}\` ` +
      `(started ${started}; ended ${new Date().toISOString().slice(0, 16)}Z, load average ${await loadAverage()}).`,
    '',
    table,
    '<!-- bench-changes:end -->',
  ].join('\n');
  const text = await readFile(path, 'utf8');
  const start = text.indexOf('<!-- bench-changes:start -->');
  const end = text.indexOf('<!-- bench-changes:end -->');
  const updated = start === -1 || end === -1 ? `${text.trimEnd()}\n\n${section}\n` : `${text.slice(0, start)}${section}${text.slice(end + '<!-- bench-changes:end -->'.length)}`;
  await writeFile(path, updated);
  console.log(`Wrote ${path}`);
}
