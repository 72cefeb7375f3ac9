/**
 * `npm run bench -- --only listing`: does a big listing hold other requests? A subscriber of a
 * `--listing-rows` (1,000,000) row index, every file on disk (local folder store, S3_API=on),
 * lists the whole bucket through S3's ListObjectsV2 in a loop for `--listing-seconds` (60), from a
 * process of its own; meanwhile this process asks `GET /health` every 20 ms and times each answer
 * from when it was due (a stalled gateway delays every request due in the stall, not just one).
 * The anchor, in the same run and gateway, is the same `/health` sampling with nothing else going
 * on. `--listing-cache-seconds` is the gateway's LIST_CACHE_SECONDS: 5 (the default) makes the loop
 * span re-reads of which files exist (and the path order rebuilt for each); 3600 keeps the first.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { runClientsCli } from '../src/app/clients-command.js';
import { indexCsv, registryFile, seedFiles, type ScaleDependencies, type ScaleRow } from './scale.js';

export interface ListingOptions {
  readonly rows: number;
  readonly seconds: number;
  /** LIST_CACHE_SECONDS of the gateway: 5 (the default) re-reads which files exist during the loop, 3600 keeps the first answer. */
  readonly cacheSeconds: number;
  readonly workDir: string;
  /** The TOKEN_SIGNING_KEY the bench's gateways run with: S3 secrets are derived from it. */
  readonly signingKey: string;
}

/** What the lister child reports. */
interface ListerReport {
  readonly passes: number;
  readonly pages: number;
  readonly keys: number;
  /** Seconds of each full pass over the bucket. */
  readonly passSeconds: number[];
}

interface ListerSpec {
  readonly endpoint: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly bucket: string;
  /** Keep listing until this many seconds have passed (0: one call of one key, the cold start). */
  readonly seconds: number;
}

const sampleEveryMs = 20;
const anchorSeconds = 20;

const fmt = (value: number, unit: string): string => `${value.toFixed(value >= 100 ? 0 : 2)} ${unit}`;

/** Latencies of `GET /health` due every 20 ms, each timed from when it was due, until `stop` resolves. */
async function sampleHealth(port: number, stop: Promise<unknown>): Promise<number[]> {
  // A connection per request: a kept-alive one the gateway closes as idle races the next request (ECONNRESET).
  const latencies: number[] = [];
  const inFlight: Promise<void>[] = [];
  const started = performance.now();
  let due = 0;
  let stopped = false;
  void stop.finally(() => (stopped = true));
  while (!stopped) {
    const dueAt = started + due * sampleEveryMs;
    due += 1;
    inFlight.push(
      new Promise<void>((resolve, reject) => {
        const request = httpRequest({ host: '127.0.0.1', port, path: '/health', agent: false }, (response) => {
          response.resume();
          response.on('end', () => {
            if (response.statusCode !== 200) reject(new Error(`/health: ${response.statusCode}`));
            latencies.push(performance.now() - dueAt);
            resolve();
          });
        });
        request.on('error', reject);
        request.end();
      }),
    );
    const wait = started + due * sampleEveryMs - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  await Promise.all(inFlight);
  return latencies.sort((a, b) => a - b);
}

const quantile = (sorted: readonly number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/** Runs the lister in a child process (its XML parsing must not delay this process's sampling). */
function runLister(spec: ListerSpec): Promise<ListerReport> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), 'list', JSON.stringify(spec)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(output) as ListerReport) : reject(new Error(`the lister exited with ${code}`))));
  });
}

/** Lists the bucket whole, page after page, pass after pass, until `seconds` have passed. */
async function list(spec: ListerSpec): Promise<ListerReport> {
  const s3 = new S3Client({
    endpoint: spec.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: spec.accessKeyId, secretAccessKey: spec.secretAccessKey },
    maxAttempts: 1,
  });
  const report = { passes: 0, pages: 0, keys: 0, passSeconds: [] as number[] };
  if (spec.seconds === 0) {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: spec.bucket, MaxKeys: 1 }));
    return { ...report, pages: 1, keys: page.KeyCount ?? 0 };
  }
  const until = performance.now() + spec.seconds * 1000;
  while (performance.now() < until) {
    const passStarted = performance.now();
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: spec.bucket, MaxKeys: 1000, ...(token !== undefined && { ContinuationToken: token }) }));
      report.pages += 1;
      report.keys += page.KeyCount ?? 0;
      token = page.NextContinuationToken;
    } while (token !== undefined && performance.now() < until);
    if (token === undefined) {
      report.passes += 1;
      report.passSeconds.push((performance.now() - passStarted) / 1000);
    }
  }
  return report;
}

export async function runListingBench(deps: ScaleDependencies, options: ListingOptions): Promise<ScaleRow[]> {
  const rows: ScaleRow[] = [];
  const record = (row: ScaleRow): void => {
    console.log(`${row.measure}: ${row.gateway} | ${row.anchor} | ${row.ratio} | ${row.goal}`);
    rows.push(row);
  };
  const root = join(options.workDir, 'listing-data');
  await mkdir(join(root, 'indexes'), { recursive: true });
  console.log(`Preparing: a ${options.rows.toLocaleString('en')}-row index and as many files on disk`);
  await writeFile(join(root, 'indexes/lister.csv'), indexCsv('L', options.rows));
  await seedFiles(root, options.rows);
  const clientsFile = join(options.workDir, 'listing-clients.json');
  await registryFile(clientsFile, [{ id: 'lister', indexPath: 'indexes/lister.csv' }]);
  let keyLines = '';
  const quiet = { write: () => true };
  await runClientsCli(['s3-key', 'add', 'lister'], { env: { CLIENTS_FILE: clientsFile, TOKEN_SIGNING_KEY: options.signingKey }, stdout: { write: (text: string) => (keyLines += text) }, stderr: quiet });
  const gateway = await deps.startGateway(
    {
      DATA_DIR: root,
      CLIENTS_FILE: clientsFile,
      S3_API: 'on',
      CATALOG_CACHE_MB: '1024',
      INDEX_MAX_MB: '512',
      DOWNLOAD_RATE_LIMIT: '1000000',
      REQUEST_RATE_LIMIT: '1000000',
      LIST_CACHE_SECONDS: String(options.cacheSeconds),
    },
    'listing',
  );
  try {
    const spec = (seconds: number): ListerSpec => ({
      endpoint: `http://127.0.0.1:${gateway.port}`,
      accessKeyId: /^access_key_id: (\S+)$/m.exec(keyLines)?.[1] ?? '',
      secretAccessKey: /^secret_access_key: (\S+)$/m.exec(keyLines)?.[1] ?? '',
      bucket: 'data',
      seconds,
    });
    const load = async (): Promise<string> => (await readFile('/proc/loadavg', 'utf8').catch(() => '?')).split(' ').slice(0, 3).join(' ');
    const alone = await sampleHealth(gateway.port, new Promise((resolve) => setTimeout(resolve, anchorSeconds * 1000)));
    const aloneText = `GET /health alone, ${alone.length} samples: p99 ${fmt(quantile(alone, 0.99), 'ms')} (p50 ${fmt(quantile(alone, 0.5), 'ms')}, max ${fmt(alone.at(-1) ?? Number.NaN, 'ms')})`;
    console.log(`${aloneText}; load average ${await load()}`);

    // The first listing: the index parsed, a million files stat'ed, the path order built.
    const coldStarted = performance.now();
    const cold = runLister(spec(0));
    const duringCold = await sampleHealth(gateway.port, cold);
    const coldSeconds = (performance.now() - coldStarted) / 1000;
    if ((await cold).keys !== 1) throw new Error('the first listing returned no key');
    record({
      measure: `first ListObjectsV2 of a ${options.rows.toLocaleString('en')}-file subscriber (index parsed, files stat'ed, path order built: ${fmt(coldSeconds, 's')}): GET /health p99 (p50, max) during it`,
      gateway: `${fmt(quantile(duringCold, 0.99), 'ms')} (${fmt(quantile(duringCold, 0.5), 'ms')}, ${fmt(duringCold.at(-1) ?? Number.NaN, 'ms')}), ${duringCold.length} samples`,
      anchor: aloneText,
      ratio: `${(quantile(duringCold, 0.99) / quantile(alone, 0.99)).toFixed(2)}x`,
      goal: '-',
    });

    const listing = runLister(spec(options.seconds));
    const during = await sampleHealth(gateway.port, listing);
    const report = await listing;
    const passes = report.passSeconds.length === 0 ? 'no full pass' : `full passes of ${report.passSeconds.map((s) => fmt(s, 's')).join(', ')}`;
    record({
      measure: `the same subscriber listing the whole bucket through ListObjectsV2 in a loop for ${options.seconds} s (${report.pages} pages, ${report.keys.toLocaleString('en')} keys; ${passes}; LIST_CACHE_SECONDS=${options.cacheSeconds}): GET /health p99 (p50, max) meanwhile`,
      gateway: `${fmt(quantile(during, 0.99), 'ms')} (${fmt(quantile(during, 0.5), 'ms')}, ${fmt(during.at(-1) ?? Number.NaN, 'ms')}), ${during.length} samples`,
      anchor: aloneText,
      ratio: `${(quantile(during, 0.99) / quantile(alone, 0.99)).toFixed(2)}x`,
      goal: 'p99 < 100 ms',
    });
    console.log(`load average ${await load()}`);
  } finally {
    await gateway.stop();
  }
  return rows;
}

// `node --import tsx bench/listing.ts list '<spec as JSON>'`: the lister, in a process of its own.
if (process.argv[2] === 'list') {
  process.stdout.write(JSON.stringify(await list(JSON.parse(process.argv[3] ?? '{}') as ListerSpec)));
}
