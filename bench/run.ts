/**
 * `npm run bench`: the gateway measured beside anchors, in one run on this machine, over loopback.
 * Each figure is printed next to an anchor that does the same work without the gateway (a direct
 * SAS download from Azurite, a minimal Node reverse proxy, nginx when installed, a bare
 * `createReadStream` server, bare Express), and the ratio between them: only ratios compare across
 * machines and runs. Prints a markdown table and writes it, with the machine and the command, to
 * BENCHMARKS.md (unless `--no-write`).
 *
 * The gateway runs built (`dist/`), in a child process of its own, with LOG_LEVEL=info as in
 * production; its CPU time comes from /proc. Options: `--big-mib 512` (size of the large file),
 * `--runs 3` (medians of), `--profile` (writes V8 CPU profiles of the gateway to bench/profiles/),
 * `--gateway-node-options '--max-semi-space-size=16'` (Node options of the gateway process, to measure one),
 * `--gateway-node <path>` (the Node binary of the gateway and of the Node anchors, e.g. production's Node 24).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { get as httpGet, type OutgoingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BlobSASPermissions, type ContainerClient } from '@azure/storage-blob';
import { runClientsCli } from '../src/app/clients-command.js';
import { packageRoot } from '../src/app/package-root.js';
import { createTestContainer, startAzurite, type RunningAzurite } from '../test/support/azurite.js';
import { buildIndexCsv, buildIndexRow } from '../test/support/index-csv-builder.js';
import { freePort } from '../test/support/redis.js';
import { presignedUrl } from '../test/support/s3-signing.js';
import { STREAMING_ENV, startAnchor, startNginx } from './anchors.js';
import { generateLoad, loadGenerator } from './load.js';
import { runChangesBench } from './changes.js';
import { runListingBench } from './listing.js';
import { benchTable, runScaleBench, type ScaleRow } from './scale.js';
import { runTimingRatios } from './timing-ratios.js';

const { values: options } = parseArgs({
  options: {
    'big-mib': { type: 'string', default: '512' },
    runs: { type: 'string', default: '3' },
    profile: { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    only: { type: 'string' },
    'gateway-node-options': { type: 'string', default: '' },
    /** The Node binary that runs the gateway and the Node anchors (default: the bench's own), e.g. production's Node 24. */
    'gateway-node': { type: 'string' },
    'scale-rows': { type: 'string', default: '1000,10000,100000,1000000' },
    'scale-clients': { type: 'string', default: '10,1000,10000' },
    'scale-fleet': { type: 'string', default: '2000x5000' },
    'scale-cache-mb': { type: 'string', default: '256' },
    /** The fleet gateway's --max-old-space-size; CATALOG_CACHE_MB + 256 (the docs' advice) unless given. */
    'scale-fleet-heap-mb': { type: 'string' },
    /** Files of the Azure catalog whose first /count is measured beside the raw List Blobs (bench/scale-azure.ts); 0 skips it. */
    'scale-azure-files': { type: 'string', default: '100000' },
    /** `--only listing`: rows (and files) of the subscriber listed through S3, and how long it lists (bench/listing.ts). */
    'listing-rows': { type: 'string', default: '1000000' },
    'listing-seconds': { type: 'string', default: '60' },
    'listing-cache-seconds': { type: 'string', default: '5' },
    /** `--only changes`: the change scanner's cost and the feed's delay (bench/changes.ts). */
    'changes-blobs': { type: 'string', default: '100000' },
    'changes-clients': { type: 'string', default: '1000' },
    'changes-changed': { type: 'string', default: '100' },
    'changes-runs': { type: 'string', default: '3' },
    'changes-delay-runs': { type: 'string', default: '10' },
    /** Blobs of the same scan on Azurite (0 skips it): seeding 100,000 takes about a minute and a half. */
    'changes-azure-blobs': { type: 'string', default: '100000' },
  },
});
/**
 * `--only ratios`: the timing ratios the test suite counts as work instead (bench/timing-ratios.ts);
 * `--only downloads|concurrent|local|small`: one section, for profiling; `--only scale`: the scale
 * bench alone (bench/scale.ts); `--only listing`: `/health` during a big S3 listing (bench/listing.ts);
 * `--only changes`: the change scanner's storage calls beside a raw listing, and the feed's delay (bench/changes.ts).
 */
const section = (name: string): boolean => options.only === undefined || options.only === name;
const MiB = 1024 * 1024;
const BIG = Number(options['big-mib']) * MiB;
const RUNS = Number(options.runs);
const CATALOG_FILES = 500;
const RANGE = 32 * MiB;
/** Seconds of each request-rate sample (bench/load.ts), taken RUNS times for each target in turn. */
const RATE_SECONDS = 3;
const client = { clientId: 'bench', secret: 'bench-secret-0123456789abcdef' };
const BENCH_SIGNING_KEY = 'bench-signing-key-0123456789abcdefghij';

const rows: ScaleRow[] = [];

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** GETs `url`, reading and discarding the body. */
function download(url: string, headers: OutgoingHttpHeaders = {}, follow = false): Promise<{ bytes: number; ms: number; status: number }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const request = httpGet(url, { headers, agent: false }, (response) => {
      const status = response.statusCode ?? 0;
      if (follow && status === 307 && response.headers.location !== undefined) {
        response.resume();
        // Cross-origin: the Authorization header is not sent on, as curl and fetch do.
        const { authorization: _dropped, ...rest } = headers;
        void download(new URL(response.headers.location, url).toString(), rest).then(
          (result) => resolve({ ...result, ms: Number(process.hrtime.bigint() - started) / 1e6 }),
          reject,
        );
        return;
      }
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () => resolve({ bytes, ms: Number(process.hrtime.bigint() - started) / 1e6, status }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

interface Candidate {
  readonly url: string;
  readonly headers?: OutgoingHttpHeaders;
  /** Follow a 307 (to another origin, without the Authorization header). */
  readonly follow?: boolean;
  /** The process whose CPU time is counted while this candidate downloads. */
  readonly pid?: number;
}

interface Measured {
  /** Median MiB/s. */
  readonly mibps: number;
  /** CPU seconds of `pid` per GiB moved, over all runs (NaN without a pid). */
  readonly cpuPerGiB: number;
  /** Of which in the kernel (system time: socket and file reads and writes). */
  readonly systemPerGiB: number;
}

/**
 * Downloads the big file from every candidate, RUNS rounds, each round taking the candidates in
 * turn: whatever else loads the machine weighs on all of them alike, so their ratios hold.
 */
async function throughputs(candidates: readonly Candidate[]): Promise<Measured[]> {
  const speeds = candidates.map((): number[] => []);
  const cpu = candidates.map(() => ({ user: 0, system: 0 }));
  for (let run = 0; run < RUNS; run += 1) {
    for (const [index, candidate] of candidates.entries()) {
      const before = candidate.pid === undefined ? undefined : await cpuTimes(candidate.pid);
      const { bytes, ms, status } = await download(candidate.url, candidate.headers ?? {}, candidate.follow ?? false);
      const spent = cpu[index];
      if (candidate.pid !== undefined && before !== undefined && spent !== undefined) {
        const after = await cpuTimes(candidate.pid);
        spent.user += after.user - before.user;
        spent.system += after.system - before.system;
      }
      if (bytes !== BIG) throw new Error(`${candidate.url}: ${bytes} bytes (status ${status}), expected ${BIG}`);
      speeds[index]?.push(bytes / MiB / (ms / 1000));
    }
  }
  const gibPerCandidate = (RUNS * BIG) / (1024 * MiB);
  return candidates.map((candidate, index) => {
    const spent = cpu[index] ?? { user: Number.NaN, system: Number.NaN };
    return {
      mibps: median(speeds[index] ?? []),
      cpuPerGiB: candidate.pid === undefined ? Number.NaN : (spent.user + spent.system) / gibPerCandidate,
      systemPerGiB: candidate.pid === undefined ? Number.NaN : spent.system / gibPerCandidate,
    };
  });
}

/** `count` concurrent 32 MiB range downloads of the big file; aggregate MiB/s. */
async function concurrent(url: string, headers: OutgoingHttpHeaders, count: number): Promise<{ mibps: number; errors: number }> {
  const started = process.hrtime.bigint();
  const results = await Promise.allSettled(
    Array.from({ length: count }, (_, i) => {
      const start = ((i * 7) % Math.max(1, Math.floor((BIG - RANGE) / MiB))) * MiB;
      return download(url, { ...headers, range: `bytes=${start}-${start + RANGE - 1}` });
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  let bytes = 0;
  let errors = 0;
  for (const result of results) {
    if (result.status === 'fulfilled' && result.value.status === 206 && result.value.bytes === RANGE) bytes += result.value.bytes;
    else errors += 1;
  }
  return { mibps: bytes / MiB / seconds, errors };
}

interface Rate {
  /** Median requests per second. */
  readonly perSecond: number;
  /** CPU milliseconds the serving process spent per request (NaN without a pid). */
  readonly cpuMsPerRequest: number;
}

/** Median latency of each target, RUNS x 5 samples taken in turn (so that load elsewhere weighs on all alike). */
async function latencies(targets: ReadonlyArray<{ readonly url: string; readonly headers: OutgoingHttpHeaders }>): Promise<number[]> {
  const times = targets.map((): number[] => []);
  for (let sample = 0; sample < RUNS * 5; sample += 1) {
    for (const [index, target] of targets.entries()) times[index]?.push((await download(target.url, target.headers)).ms);
  }
  return times.map((values) => median(values));
}

/** Requests per second of each target, measured in turn for one second at a time, RUNS times; medians. */
async function ratesInTurn(targets: ReadonlyArray<{ readonly url: string; readonly headers: OutgoingHttpHeaders; readonly pid?: number }>): Promise<Rate[]> {
  const rates = targets.map((): number[] => []);
  const spent = targets.map(() => ({ cpu: 0, requests: 0 }));
  for (let run = 0; run < RUNS; run += 1) {
    for (const [index, target] of targets.entries()) {
      const before = target.pid === undefined ? undefined : await cpuTimes(target.pid);
      const { perSecond, requests } = await generateLoad(target.url, target.headers, 8, RATE_SECONDS);
      rates[index]?.push(perSecond);
      const counted = spent[index];
      if (target.pid !== undefined && before !== undefined && counted !== undefined) {
        const after = await cpuTimes(target.pid);
        counted.cpu += after.user + after.system - before.user - before.system;
        counted.requests += requests;
      }
    }
  }
  return rates.map((values, index) => {
    const counted = spent[index];
    return { perSecond: median(values), cpuMsPerRequest: counted === undefined || counted.requests === 0 ? Number.NaN : (counted.cpu * 1000) / counted.requests };
  });
}

/** User and system CPU seconds of a process so far (utime and stime, fields 14 and 15 of /proc/<pid>/stat). */
async function cpuTimes(pid: number): Promise<{ user: number; system: number }> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
  // Counted after the command name, utime and stime are the 12th and 13th fields.
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1] ?? 0) * 1024;
}

interface GatewayProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly pid: number;
  stop(): Promise<void>;
}

async function startGateway(env: Record<string, string>, profileName: string): Promise<GatewayProcess> {
  const port = await freePort();
  const profileArgs = options.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(packageRoot(), 'bench', 'profiles')}`, `--cpu-prof-name=${profileName}.cpuprofile`] : [];
  const nodeOptions = (options['gateway-node-options'] ?? '').split(' ').filter((option) => option !== '');
  const child = spawn(options['gateway-node'] ?? process.execPath, [...nodeOptions, ...profileArgs, 'dist/src/app/main.js'], {
    cwd: packageRoot(),
    env: { PATH: process.env['PATH'] ?? '', PORT: String(port), LOG_LEVEL: 'info', TOKEN_SIGNING_KEY: BENCH_SIGNING_KEY, DOWNLOAD_RATE_LIMIT: '1000000', REQUEST_RATE_LIMIT: '1000000', TOKEN_ISSUE_LIMIT: '1000000', ...STREAMING_ENV, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  // A gateway that dies during a measure (out of memory, say) says why, instead of the next request's "fetch failed" alone.
  child.once('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGTERM') console.error(`the gateway (${profileName}) exited with ${code ?? signal}:\n${errors.slice(-3000)}`);
  });
  for (let attempt = 0; ; attempt += 1) {
    const ok = await download(`http://127.0.0.1:${port}/health`).then(
      (result) => result.status === 200,
      () => false,
    );
    if (ok) break;
    if (child.exitCode !== null || attempt > 1200) throw new Error(`the gateway did not start: ${errors}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    child,
    port,
    pid: child.pid ?? 0,
    stop: async () => {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      // SIGTERM: the drain ends the process, and --cpu-prof writes its profile on the way out.
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function tokenOf(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret }),
  });
  return ((await response.json()) as { access_token: string }).access_token;
}

function indexCsv(): string {
  return buildIndexCsv([
    ...Array.from({ length: CATALOG_FILES }, (_, i) => buildIndexRow({ Symbol: `Q${i}`, FileName: `quotes/q${i}.parquet`, ShortDescription: `Daily quotes ${i}` })),
    buildIndexRow({ Symbol: 'BIG', FileName: 'big/big.bin' }),
  ]);
}

const fmt = (value: number, unit: string): string => `${value.toFixed(value >= 100 ? 0 : 2)} ${unit}`;
const ratio = (gateway: number, anchor: number): string => `${(gateway / anchor).toFixed(2)}x`;

function row(measure: string, gateway: string, anchor: string, ratioText: string, goal: string): void {
  rows.push({ measure, gateway, anchor, ratio: ratioText, goal });
  console.log(`${measure}: ${gateway} | ${anchor} | ${ratioText} | ${goal}`);
}

async function seedStorage(container: ContainerClient, bigFile: Buffer): Promise<void> {
  await container.getBlockBlobClient('indexes/bench.csv').uploadData(Buffer.from(indexCsv()));
  await container.getBlockBlobClient('big/big.bin').uploadData(bigFile, { blockSize: 8 * MiB, concurrency: 4 });
  for (let i = 0; i < CATALOG_FILES; i += 20) {
    await Promise.all(
      Array.from({ length: 20 }, (_, j) => container.getBlockBlobClient(`quotes/q${i + j}.parquet`).uploadData(Buffer.from(`PAR1 ${i + j} PAR1`))),
    );
  }
}

async function seedFolder(root: string, bigFile: Buffer): Promise<void> {
  await mkdir(join(root, 'indexes'), { recursive: true });
  await mkdir(join(root, 'big'), { recursive: true });
  await mkdir(join(root, 'quotes'), { recursive: true });
  await writeFile(join(root, 'indexes', 'bench.csv'), indexCsv());
  await writeFile(join(root, 'big', 'big.bin'), bigFile);
  for (let i = 0; i < CATALOG_FILES; i += 1) await writeFile(join(root, 'quotes', `q${i}.parquet`), `PAR1 ${i} PAR1`);
  // Into the page cache, so that the first measured read is not a disk read.
  const handle = await open(join(root, 'big', 'big.bin'), 'r');
  await handle.readFile();
  await handle.close();
}

async function scaleOnly(): Promise<void> {
  const workDir = await mkdtemp(join(tmpdir(), 'gateway-bench-scale-'));
  const sizes = (text: string | undefined): number[] => (text ?? '').split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0);
  const [fleetClients = 0, fleetRows = 0] = (options['scale-fleet'] ?? '').split('x').map(Number);
  try {
    await runScaleBench(
      { startGateway: (env, name) => startGateway(env, name), rssOf },
      {
        rows: sizes(options['scale-rows']),
        clients: sizes(options['scale-clients']),
        fleet: { clients: fleetClients, rows: fleetRows },
        cacheMb: Number(options['scale-cache-mb']),
        ...(options['scale-fleet-heap-mb'] === undefined ? {} : { fleetHeapMb: Number(options['scale-fleet-heap-mb']) }),
        azureFiles: Number(options['scale-azure-files']),
        workDir,
        write: !options['no-write'],
      },
    );
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

async function listingOnly(): Promise<void> {
  // A million files on this machine's disk took longer to write than the whole measure; in memory (tmpfs) they take minutes.
  const workDir = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'gateway-bench-listing-'));
  try {
    const measured = await runListingBench(
      { startGateway: (env, name) => startGateway(env, name), rssOf },
      { rows: Number(options['listing-rows']), seconds: Number(options['listing-seconds']), cacheSeconds: Number(options['listing-cache-seconds']), workDir, signingKey: BENCH_SIGNING_KEY },
    );
    console.log(`\n${benchTable(measured)}\n`);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

async function changesOnly(): Promise<void> {
  // 100,000 files written to this machine's disk and scanned: in memory (tmpfs) when there is one, as `--only listing`.
  const workDir = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'gateway-bench-changes-'));
  try {
    await runChangesBench(
      { startGateway: (env, name) => startGateway(env, name), rssOf },
      {
        blobs: Number(options['changes-blobs']),
        clients: Number(options['changes-clients']),
        changed: Number(options['changes-changed']),
        runs: Number(options['changes-runs']),
        delayRuns: Number(options['changes-delay-runs']),
        azureBlobs: Number(options['changes-azure-blobs']),
        workDir,
        write: !options['no-write'],
      },
    );
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/** The timing ratios the suite no longer asserts, each beside its anchor (bench/timing-ratios.ts). */
async function ratiosOnly(): Promise<void> {
  console.log('Timing ratios (the suite counts this work; here it is timed)');
  for (const [measure, gateway, anchor, ratioText, goal] of await runTimingRatios()) row(measure, gateway, anchor, ratioText, goal);
  console.log(`\n${benchTable(rows)}\n`);
}

async function main(): Promise<void> {
  if (options.only === 'ratios') return ratiosOnly();
  if (options.only === 'scale') return scaleOnly();
  if (options.only === 'listing') return listingOnly();
  if (options.only === 'changes') return changesOnly();
  const workDir = await mkdtemp(join(tmpdir(), 'gateway-bench-'));
  const stops: Array<() => Promise<void>> = [];
  let azurite: RunningAzurite | undefined;
  try {
    console.log(`Preparing: a ${BIG / MiB} MiB file and a ${CATALOG_FILES + 1}-entry catalog, in Azurite and in a local folder`);
    const bigFile = randomBytes(BIG);
    azurite = await startAzurite();
    const container = await createTestContainer(azurite.connectionString, 'bench');
    await seedStorage(container, bigFile);
    const root = join(workDir, 'data');
    await seedFolder(root, bigFile);
    const clientsFile = join(workDir, 'clients.json');
    await runClientsCli(['add', client.clientId, '--secret', client.secret], { env: { CLIENTS_FILE: clientsFile }, stdout: { write: () => true }, stderr: { write: () => true } });
    let s3KeyLines = '';
    await runClientsCli(['s3-key', 'add', client.clientId], {
      env: { CLIENTS_FILE: clientsFile, TOKEN_SIGNING_KEY: BENCH_SIGNING_KEY },
      stdout: { write: (text: string) => (s3KeyLines += text) },
      stderr: { write: () => true },
    });
    const s3Key = {
      accessKeyId: /^access_key_id: (\S+)$/m.exec(s3KeyLines)?.[1] ?? '',
      secretAccessKey: /^secret_access_key: (\S+)$/m.exec(s3KeyLines)?.[1] ?? '',
    };

    const azure = await startGateway(
      { AZURE_STORAGE_CONNECTION_STRING: azurite.connectionString, AZURE_STORAGE_CONTAINER: container.containerName, CLIENTS_FILE: clientsFile, DOWNLOAD_LINKS: 'on', S3_API: 'on' },
      'azure',
    );
    stops.push(azure.stop);
    const local = await startGateway({ DATA_DIR: root, CLIENTS_FILE: clientsFile }, 'local');
    stops.push(local.stop);
    const proxy = await startAnchor({ kind: 'proxy', targetPort: Number(new URL(azurite.blobEndpoint).port) }, options['gateway-node']);
    stops.push(proxy.stop);
    const bare = await startAnchor({ kind: 'files', root }, options['gateway-node']);
    stops.push(bare.stop);
    const nginx = await startNginx(workDir, Number(new URL(azurite.blobEndpoint).port), root, [await freePort(), await freePort()]);
    if (nginx !== undefined) stops.push(nginx.stop);

    const bearer = { authorization: `Bearer ${await tokenOf(azure.port)}` };
    const localBearer = { authorization: `Bearer ${await tokenOf(local.port)}` };
    const bigBlob = container.getBlobClient('big/big.bin');
    const sasUrl = await bigBlob.generateSasUrl({ permissions: BlobSASPermissions.parse('r'), expiresOn: new Date(Date.now() + 3600_000) });
    const sasPath = new URL(sasUrl).pathname + new URL(sasUrl).search;

    if (section('downloads')) {
      console.log('\nDownloads (medians of', RUNS, 'runs)');
      // The S3 API's GetObject of the same file, through a presigned URL (valid for the whole run).
      const s3Url = await presignedUrl({ baseUrl: `http://127.0.0.1:${azure.port}`, port: azure.port }, '/data/big/big.bin', s3Key, new Date(), 24 * 3600);
      const [gateway, direct, nodeProxy, redirected, s3, nginxProxy] = await throughputs([
        { url: `http://127.0.0.1:${azure.port}/download/BIG`, headers: bearer, pid: azure.pid },
        { url: sasUrl },
        { url: `http://127.0.0.1:${proxy.port}${sasPath}`, pid: proxy.pid },
        { url: `http://127.0.0.1:${azure.port}/download/BIG?redirect=true`, headers: bearer, follow: true },
        { url: s3Url, pid: azure.pid },
        ...(nginx === undefined ? [] : [{ url: `http://127.0.0.1:${nginx.proxyPort}${sasPath}`, pid: nginx.workerPid }]),
      ]);
      if (gateway === undefined || direct === undefined || nodeProxy === undefined || redirected === undefined || s3 === undefined) throw new Error('a measurement is missing');
      row(`download ${BIG / MiB} MiB through the gateway (Azure)`, fmt(gateway.mibps, 'MiB/s'), `direct SAS from Azurite: ${fmt(direct.mibps, 'MiB/s')}`, ratio(gateway.mibps, direct.mibps), '-');
      row('same download', fmt(gateway.mibps, 'MiB/s'), `minimal Node reverse proxy: ${fmt(nodeProxy.mibps, 'MiB/s')}`, ratio(gateway.mibps, nodeProxy.mibps), nginxProxy === undefined ? '>= 0.9x' : '-');
      if (nginxProxy !== undefined) {
        row('same download', fmt(gateway.mibps, 'MiB/s'), `nginx reverse proxy: ${fmt(nginxProxy.mibps, 'MiB/s')}`, ratio(gateway.mibps, nginxProxy.mibps), '>= 0.9x');
      }
      row(
        'gateway CPU per GiB served (Azure)',
        `${fmt(gateway.cpuPerGiB, 's')} (${fmt(gateway.systemPerGiB, 's')} system)`,
        `minimal Node reverse proxy: ${fmt(nodeProxy.cpuPerGiB, 's')} (${fmt(nodeProxy.systemPerGiB, 's')} system)`,
        ratio(gateway.cpuPerGiB, nodeProxy.cpuPerGiB),
        '<= 0.85 s',
      );
      if (nginxProxy !== undefined) {
        row(
          'same CPU per GiB',
          `${fmt(gateway.cpuPerGiB, 's')} (${fmt(gateway.systemPerGiB, 's')} system)`,
          `nginx reverse proxy: ${fmt(nginxProxy.cpuPerGiB, 's')} (${fmt(nginxProxy.systemPerGiB, 's')} system)`,
          ratio(gateway.cpuPerGiB, nginxProxy.cpuPerGiB),
          '-',
        );
      }
      row('download by direct link (`?redirect=true`, 307 to a SAS URL)', fmt(redirected.mibps, 'MiB/s'), `proxied through the gateway: ${fmt(gateway.mibps, 'MiB/s')}`, ratio(redirected.mibps, gateway.mibps), '-');
      row('same file by S3 GetObject (S3_API=on, presigned URL)', fmt(s3.mibps, 'MiB/s'), `native download: ${fmt(gateway.mibps, 'MiB/s')}`, ratio(s3.mibps, gateway.mibps), '>= 0.95x');
      row(
        'S3 GetObject CPU per GiB',
        `${fmt(s3.cpuPerGiB, 's')} (${fmt(s3.systemPerGiB, 's')} system)`,
        `native download: ${fmt(gateway.cpuPerGiB, 's')} (${fmt(gateway.systemPerGiB, 's')} system)`,
        ratio(s3.cpuPerGiB, gateway.cpuPerGiB),
        '-',
      );
    }

    for (const count of section('concurrent') ? [16, 64] : []) {
      // RUNS rounds, the gateway and its anchors in turn; the RSS peak is the gateway's over all rounds.
      const rssBefore = await rssOf(azure.pid);
      let peak = rssBefore;
      const rounds = { gateway: [] as number[], proxy: [] as number[], direct: [] as number[], errors: 0 };
      for (let run = 0; run < RUNS; run += 1) {
        const sampler = setInterval(() => void rssOf(azure.pid).then((rss) => (peak = Math.max(peak, rss))), 100);
        const gateway = await concurrent(`http://127.0.0.1:${azure.port}/download/BIG`, bearer, count);
        clearInterval(sampler);
        rounds.gateway.push(gateway.mibps);
        rounds.errors += gateway.errors;
        rounds.proxy.push((await concurrent(`http://127.0.0.1:${proxy.port}${sasPath}`, {}, count)).mibps);
        rounds.direct.push((await concurrent(sasUrl, {}, count)).mibps);
      }
      const [gateway, nodeProxy, direct] = [median(rounds.gateway), median(rounds.proxy), median(rounds.direct)];
      row(
        `${count} concurrent 32 MiB range downloads, aggregate`,
        `${fmt(gateway, 'MiB/s')}${rounds.errors > 0 ? `, ${rounds.errors} errors` : ''}`,
        `direct from Azurite: ${fmt(direct, 'MiB/s')}`,
        ratio(gateway, direct),
        count === 64 ? '>= 0.8x, no error' : '-',
      );
      row('same downloads', fmt(gateway, 'MiB/s'), `minimal Node reverse proxy: ${fmt(nodeProxy, 'MiB/s')}`, ratio(gateway, nodeProxy), '-');
      row(`gateway RSS growth during the ${count} downloads`, fmt((peak - rssBefore) / MiB, 'MiB'), '-', '-', count === 64 ? '< 256 MiB' : '-');
    }

    if (section('local')) {
      const [gatewayLocal, bareLocal, sendfile] = await throughputs([
        { url: `http://127.0.0.1:${local.port}/download/BIG`, headers: localBearer, pid: local.pid },
        { url: `http://127.0.0.1:${bare.port}/big/big.bin`, pid: bare.pid },
        ...(nginx === undefined ? [] : [{ url: `http://127.0.0.1:${nginx.staticPort}/big/big.bin`, pid: nginx.workerPid }]),
      ]);
      if (gatewayLocal === undefined || bareLocal === undefined) throw new Error('a measurement is missing');
      row(`download ${BIG / MiB} MiB from the local folder store`, fmt(gatewayLocal.mibps, 'MiB/s'), `bare createReadStream server: ${fmt(bareLocal.mibps, 'MiB/s')}`, ratio(gatewayLocal.mibps, bareLocal.mibps), '>= 0.9x');
      if (sendfile !== undefined) {
        row('same download', fmt(gatewayLocal.mibps, 'MiB/s'), `nginx sendfile: ${fmt(sendfile.mibps, 'MiB/s')}`, ratio(gatewayLocal.mibps, sendfile.mibps), '>= 0.5x');
      }
      row(
        'gateway CPU per GiB served (local folder)',
        `${fmt(gatewayLocal.cpuPerGiB, 's')} (${fmt(gatewayLocal.systemPerGiB, 's')} system)`,
        `bare createReadStream server: ${fmt(bareLocal.cpuPerGiB, 's')} (${fmt(bareLocal.systemPerGiB, 's')} system)`,
        ratio(gatewayLocal.cpuPerGiB, bareLocal.cpuPerGiB),
        '-',
      );
      if (sendfile !== undefined) {
        row(
          'same CPU per GiB',
          `${fmt(gatewayLocal.cpuPerGiB, 's')} (${fmt(gatewayLocal.systemPerGiB, 's')} system)`,
          `nginx sendfile: ${fmt(sendfile.cpuPerGiB, 's')} (${fmt(sendfile.systemPerGiB, 's')} system)`,
          ratio(gatewayLocal.cpuPerGiB, sendfile.cpuPerGiB),
          '-',
        );
      }
    }

    if (section('small')) {
      console.log('\nSmall answers');
      const catalogResponse = await fetch(`http://127.0.0.1:${azure.port}/catalog`, { headers: bearer });
      const catalogFile = join(workDir, 'catalog.json');
      await writeFile(catalogFile, await catalogResponse.text());
      const express = await startAnchor({ kind: 'express', catalogFile, connectionString: azurite.connectionString, container: container.containerName }, options['gateway-node']);
      stops.push(express.stop);
      const none: Rate = { perSecond: Number.NaN, cpuMsPerRequest: Number.NaN };
      const [catalogGateway = none, catalogBare = none, infoGateway = none, infoBare = none] = await ratesInTurn([
        { url: `http://127.0.0.1:${azure.port}/catalog`, headers: bearer, pid: azure.pid },
        { url: `http://127.0.0.1:${express.port}/catalog`, headers: {}, pid: express.pid },
        { url: `http://127.0.0.1:${azure.port}/info/Q7`, headers: bearer, pid: azure.pid },
        { url: `http://127.0.0.1:${express.port}/info/q7.parquet`, headers: {}, pid: express.pid },
      ]);
      row(
        `GET /catalog, ${CATALOG_FILES + 1} entries`,
        fmt(catalogGateway.perSecond, 'req/s'),
        `bare Express answering the same JSON: ${fmt(catalogBare.perSecond, 'req/s')}`,
        ratio(catalogGateway.perSecond, catalogBare.perSecond),
        '>= 1.0x',
      );
      row(
        'same, server CPU per request',
        fmt(catalogGateway.cpuMsPerRequest, 'ms'),
        `bare Express: ${fmt(catalogBare.cpuMsPerRequest, 'ms')}`,
        ratio(catalogGateway.cpuMsPerRequest, catalogBare.cpuMsPerRequest),
        '-',
      );
      row('GET /info', fmt(infoGateway.perSecond, 'req/s'), `bare Express doing the same SDK property read: ${fmt(infoBare.perSecond, 'req/s')}`, ratio(infoGateway.perSecond, infoBare.perSecond), '-');
      row('same, server CPU per request', fmt(infoGateway.cpuMsPerRequest, 'ms'), `bare Express: ${fmt(infoBare.cpuMsPerRequest, 'ms')}`, ratio(infoGateway.cpuMsPerRequest, infoBare.cpuMsPerRequest), '-');

      // /list and /count with the cache off, so every call lists storage; then repeated calls from the cache.
      const uncached = await startGateway(
        {
          AZURE_STORAGE_CONNECTION_STRING: azurite.connectionString,
          AZURE_STORAGE_CONTAINER: container.containerName,
          CLIENTS_FILE: clientsFile,
          LIST_CACHE_SECONDS: '0',
          CLIENTS_FILE_RECHECK_SECONDS: '0',
        },
        'azure-uncached',
      );
      stops.push(uncached.stop);
      const uncachedBearer = { authorization: `Bearer ${await tokenOf(uncached.port)}` };
      const [listGateway = 0, countGateway = 0, listRaw = 0, listCached = 0] = await latencies([
        { url: `http://127.0.0.1:${uncached.port}/list`, headers: uncachedBearer },
        { url: `http://127.0.0.1:${uncached.port}/count`, headers: uncachedBearer },
        { url: `http://127.0.0.1:${express.port}/list`, headers: {} },
        { url: `http://127.0.0.1:${azure.port}/list`, headers: bearer },
      ]);
      row(`GET /list, ${CATALOG_FILES + 1} files (LIST_CACHE_SECONDS=0)`, fmt(listGateway, 'ms'), `the raw List Blobs calls for the same facts: ${fmt(listRaw, 'ms')}`, `${(listGateway / listRaw).toFixed(2)}x cost`, '<= 1.2x');
      row(`GET /count, ${CATALOG_FILES + 1} files (LIST_CACHE_SECONDS=0)`, fmt(countGateway, 'ms'), `the same raw listing: ${fmt(listRaw, 'ms')}`, `${(countGateway / listRaw).toFixed(2)}x cost`, '<= 1.2x');
      row('GET /list repeated within LIST_CACHE_SECONDS', fmt(listCached, 'ms'), `the raw listing: ${fmt(listRaw, 'ms')}`, `${(listCached / listRaw).toFixed(2)}x cost`, '-');

      // What authentication costs a request on the hot path: a 304 of /catalog does nothing else.
      const etagOf = async (port: number, headers: OutgoingHttpHeaders): Promise<string> =>
        (await fetch(`http://127.0.0.1:${port}/catalog`, { headers: headers as Record<string, string> })).headers.get('etag') ?? '';
      const [notModified = none, notModifiedRecheck = none, health = none] = await ratesInTurn([
        { url: `http://127.0.0.1:${azure.port}/catalog`, headers: { ...bearer, 'if-none-match': await etagOf(azure.port, bearer) }, pid: azure.pid },
        { url: `http://127.0.0.1:${uncached.port}/catalog`, headers: { ...uncachedBearer, 'if-none-match': await etagOf(uncached.port, uncachedBearer) }, pid: uncached.pid },
        { url: `http://127.0.0.1:${azure.port}/health`, headers: {}, pid: azure.pid },
      ]);
      const perRequest = (rate: Rate): string => `${fmt(rate.perSecond, 'req/s')}, ${fmt(rate.cpuMsPerRequest, 'ms')} CPU each`;
      row('GET /catalog answered 304 (token and registry checked, nothing else done)', perRequest(notModified), `GET /health, no token: ${perRequest(health)}`, ratio(notModified.perSecond, health.perSecond), '-');
      row(
        "same, registry file re-stat'ed on every request (CLIENTS_FILE_RECHECK_SECONDS=0)",
        perRequest(notModifiedRecheck),
        `GET /health, no token: ${perRequest(health)}`,
        ratio(notModifiedRecheck.perSecond, health.perSecond),
        '-',
      );
    }

    const table = benchTable(rows);
    console.log(`\n${table}\n`);
    if (!options['no-write'] && options.only === undefined) {
      const machine = `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), ${(totalmem() / 1024 ** 3).toFixed(0)} GiB RAM, Node ${process.version}${gatewayNodeVersion()}, ${nginx === undefined ? 'no nginx' : 'nginx 1.22 (Debian)'}, request rates from ${loadGenerator()} (8 connections, ${RATE_SECONDS} s a sample)`;
      await writeBenchmarks(table, machine);
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await azurite?.stop();
    await rm(workDir, { recursive: true, force: true });
  }
}

/** `, the gateway and its Node anchors on Node vX` when `--gateway-node` runs them on another Node than the bench's. */
function gatewayNodeVersion(): string {
  const binary = options['gateway-node'];
  if (binary === undefined) return '';
  return `, the gateway and its Node anchors on Node ${spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.trim()}`;
}

/** Replaces the measured section of BENCHMARKS.md, keeping the analysis written around it. */
async function writeBenchmarks(table: string, machine: string): Promise<void> {
  const path = join(packageRoot(), 'BENCHMARKS.md');
  const section = [
    '<!-- bench:start -->',
    `Measured ${new Date().toISOString().slice(0, 10)} with \`npm run bench\` (medians of ${RUNS} runs, a ${BIG / MiB} MiB file) on ${machine}.`,
    '',
    table,
    '<!-- bench:end -->',
  ].join('\n');
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    text = '# Benchmarks\n\n<!-- bench:start -->\n<!-- bench:end -->\n';
  }
  const start = text.indexOf('<!-- bench:start -->');
  const end = text.indexOf('<!-- bench:end -->');
  const updated = start === -1 || end === -1 ? `${text}\n${section}\n` : `${text.slice(0, start)}${section}${text.slice(end + '<!-- bench:end -->'.length)}`;
  await writeFile(path, updated);
  console.log(`Wrote ${path}`);
}

await main();
