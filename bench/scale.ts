/**
 * `npm run bench -- --only scale`: the gateway at scale, on the local folder store, each figure
 * beside its anchor measured in the same run: indexes of many rows (cold `/catalog` beside
 * fast-csv's own parse of the same file, `/count` beside a bare readdir + stat of the same files,
 * RSS per cached row), registries of many clients (token issue and verification beside the same
 * with 10 clients) and a fleet of many clients' catalogs within CATALOG_CACHE_MB.
 *
 * Sizes: `--scale-rows 1000,10000,100000,1000000`, `--scale-clients 10,1000,10000`,
 * `--scale-fleet 2000x5000`, `--scale-cache-mb 256`, `--scale-fleet-heap-mb` (the fleet gateway's
 * `--max-old-space-size`, CATALOG_CACHE_MB + 256 unless given), `--scale-azure-files 100000` (the
 * Azure catalog of bench/scale-azure.ts, 0 to skip). Small sizes smoke-test the bench.
 */
import { createReadStream } from 'node:fs';
import { mkdir, opendir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'fast-csv';
import { hashSecret } from '../src/adapters/clients/secret-hash.js';
import { runClientsCli } from '../src/app/clients-command.js';
import { packageRoot } from '../src/app/package-root.js';
import { freePort } from '../test/support/redis.js';
import { azureListing } from './scale-azure.js';

export interface ScaleOptions {
  readonly rows: readonly number[];
  readonly clients: readonly number[];
  readonly fleet: { readonly clients: number; readonly rows: number };
  readonly cacheMb: number;
  /** Node's `--max-old-space-size` for the fleet's gateway; docs/operators.md advises CATALOG_CACHE_MB + 256. */
  readonly fleetHeapMb?: number;
  /** Files of the Azure catalog whose first `/count` is measured beside the raw List Blobs (bench/scale-azure.ts); 0 skips it. */
  readonly azureFiles: number;
  readonly workDir: string;
  readonly write: boolean;
}

export interface ScaleGateway {
  readonly port: number;
  readonly pid: number;
  stop(): Promise<void>;
}

export interface ScaleDependencies {
  startGateway(env: Record<string, string>, name: string): Promise<ScaleGateway>;
  rssOf(pid: number): Promise<number>;
}

/** The Markdown table of BENCHMARKS.md's sections: each measure beside its anchor. */
export function benchTable(rows: readonly ScaleRow[]): string {
  return [
    '| measure | gateway | anchor in the same run | ratio | goal |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.measure} | ${r.gateway} | ${r.anchor} | ${r.ratio} | ${r.goal} |`),
  ].join('\n');
}

/** A row of the scale table: a measure beside its anchor. */
export interface ScaleRow {
  readonly measure: string;
  readonly gateway: string;
  readonly anchor: string;
  readonly ratio: string;
  readonly goal: string;
}

const MiB = 1024 * 1024;
const secret = 'scale-secret-0123456789abcdef';
const metricsToken = 'scale-metrics-token-0123456789';
/** Files that exist on disk: the first this many rows of any index (a million files would take the bench longer than the gateway). */
const maxFiles = 100_000;
const filesPerFolder = 1000;

/** Adds a row to the table, and prints it at once (a long run shows its figures as they come). */
function record(rows: ScaleRow[], row: ScaleRow): void {
  console.log(`${row.measure}: ${row.gateway} | ${row.anchor} | ${row.ratio} | ${row.goal}`);
  rows.push(row);
}

const fmt = (value: number, unit: string): string => `${value.toFixed(value >= 100 ? 0 : 2)} ${unit}`;
const elapsed = (started: bigint): number => Number(process.hrtime.bigint() - started) / 1e6;

const symbolOf = (prefix: string, i: number): string => `${prefix}${i}`;
const pathOf = (i: number): string => `m/${Math.floor(i / filesPerFolder)}/S${i}.parquet`;

export function indexCsv(prefix: string, rows: number): string {
  const lines = ['Symbol,ShortDescriptionPt,ShortDescription,FileName'];
  for (let i = 0; i < rows; i += 1) lines.push(`${symbolOf(prefix, i)},Cotações diárias ${i},Daily quotes ${i},${pathOf(i)}`);
  return `${lines.join('\r\n')}\r\n`;
}

export async function registryFile(path: string, clients: ReadonlyArray<{ readonly id: string; readonly indexPath: string }>): Promise<void> {
  const secretHash = await hashSecret(secret);
  const at = new Date().toISOString();
  const entries = Object.fromEntries(clients.map((client) => [client.id, { secretHash, indexPath: client.indexPath, enabled: true, createdAt: at, updatedAt: at }]));
  await writeFile(path, JSON.stringify({ version: 1, clients: entries }));
}

async function tokenFor(port: number, clientId: string): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
  });
  if (response.status !== 200) throw new Error(`token for ${clientId}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

async function getJson<T>(port: number, path: string, token: string): Promise<{ body: T; bytes: number; ms: number }> {
  const started = process.hrtime.bigint();
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  const ms = elapsed(started);
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${text.slice(0, 200)}`);
  return { body: JSON.parse(text) as T, bytes: Buffer.byteLength(text), ms };
}

async function metric(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
}

/**
 * A full garbage collection in the gateway, through its inspector (`HeapProfiler.collectGarbage`),
 * so that RSS and heap are read with only what is retained in them. Needs a WebSocket (Node 22, or
 * Node 20 with `--experimental-websocket`); returns false without one.
 */
async function collectGarbage(inspectPort: number): Promise<boolean> {
  const Socket = (globalThis as { WebSocket?: typeof WebSocket }).WebSocket;
  if (Socket === undefined) return false;
  const targets = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const url = targets[0]?.webSocketDebuggerUrl;
  if (url === undefined) return false;
  const socket = new Socket(url);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' })));
      socket.addEventListener('message', (event) => {
        if ((JSON.parse(String(event.data)) as { id?: number }).id === 1) resolve();
      });
      socket.addEventListener('error', () => reject(new Error('the inspector socket failed')));
      setTimeout(() => reject(new Error('no answer to collectGarbage in 120 s')), 120_000).unref();
    });
  } finally {
    socket.close();
  }
  // The collection has run; its freed pages go back to the OS on V8's own schedule, give it a moment.
  await new Promise((resolve) => setTimeout(resolve, 500));
  return true;
}

/** fast-csv's own parse of the file, rows counted and dropped: the floor of reading an index. */
async function fastCsvParse(path: string): Promise<number> {
  const started = process.hrtime.bigint();
  await new Promise<void>((resolve, reject) => {
    createReadStream(path)
      .pipe(parse({ headers: true }))
      .on('data', () => undefined)
      .on('error', reject)
      .on('end', () => resolve());
  });
  return elapsed(started);
}

/** A bare readdir + stat of the folders holding the first `files` files, 64 stats at a time. */
async function readdirAndStat(root: string, files: number): Promise<number> {
  const started = process.hrtime.bigint();
  let seen = 0;
  for (let folder = 0; folder * filesPerFolder < files; folder += 1) {
    const dir = join(root, 'm', String(folder));
    const names: string[] = [];
    for await (const entry of await opendir(dir)) names.push(entry.name);
    for (let i = 0; i < names.length; i += 64) {
      await Promise.all(names.slice(i, i + 64).map((name) => stat(join(dir, name), { bigint: true })));
    }
    seen += names.length;
  }
  if (seen < files) throw new Error(`expected ${files} files, saw ${seen}`);
  return elapsed(started);
}

export async function seedFiles(root: string, files: number): Promise<void> {
  for (let folder = 0; folder * filesPerFolder < files; folder += 1) {
    await mkdir(join(root, 'm', String(folder)), { recursive: true });
    const count = Math.min(filesPerFolder, files - folder * filesPerFolder);
    await Promise.all(Array.from({ length: count }, (_, j) => writeFile(join(root, pathOf(folder * filesPerFolder + j)), 'PAR1')));
  }
}

async function indexRows(deps: ScaleDependencies, options: ScaleOptions, rows: ScaleRow[]): Promise<void> {
  const root = join(options.workDir, 'scale-data');
  const sizes = [...options.rows].sort((a, b) => a - b);
  await mkdir(join(root, 'indexes'), { recursive: true });
  await seedFiles(root, Math.min(maxFiles, sizes.at(-1) ?? 0));
  // Each size twice: a second client of the same size (its own index, other symbols, the same files)
  // shows what one more cached catalog costs once the process has grown to serve the first.
  const clients = sizes.flatMap((size) => [
    { id: `rows-${size}`, indexPath: `indexes/rows-${size}.csv` },
    { id: `rows-${size}-again`, indexPath: `indexes/rows-${size}-again.csv` },
  ]);
  for (const size of sizes) {
    await writeFile(join(root, `indexes/rows-${size}.csv`), indexCsv('S', size));
    await writeFile(join(root, `indexes/rows-${size}-again.csv`), indexCsv('T', size));
  }
  const clientsFile = join(options.workDir, 'scale-rows-clients.json');
  await registryFile(clientsFile, clients);
  // The inspector only serves the full collections before and after each size (see collectGarbage).
  const inspectPort = await freePort();
  const gateway = await deps.startGateway(
    // Each client's first /count checks storage (nothing is cached yet); its /list pages then reuse that answer.
    {
      DATA_DIR: root,
      CLIENTS_FILE: clientsFile,
      LIST_CACHE_SECONDS: '600',
      CATALOG_CACHE_MB: '4096',
      INDEX_MAX_MB: '512',
      METRICS_TOKEN: metricsToken,
      NODE_OPTIONS: `--inspect=127.0.0.1:${inspectPort}`,
    },
    'scale-rows',
  );
  try {
    for (const size of sizes) {
      const clientId = `rows-${size}`;
      const token = await tokenFor(gateway.port, clientId);
      const collected = await collectGarbage(inspectPort);
      const rssBefore = await deps.rssOf(gateway.pid);
      const heapBefore = await metric(gateway.port, 'nodejs_heap_size_used_bytes');
      const accountedBefore = await metric(gateway.port, 'dfg_catalog_cache_bytes');
      const catalog = await getJson<{ count: number }>(gateway.port, '/catalog', token);
      if (catalog.body.count !== size) throw new Error(`/catalog of ${clientId}: ${catalog.body.count} rows`);
      const parseMs = await fastCsvParse(join(root, `indexes/${clientId}.csv`));
      const rssCatalog = await deps.rssOf(gateway.pid);
      const accountedCatalog = (await metric(gateway.port, 'dfg_catalog_cache_bytes')) - accountedBefore;
      record(rows, {
        measure: `cold GET /catalog, ${size.toLocaleString('en')} rows (${fmt(catalog.bytes / MiB, 'MiB')} body)`,
        gateway: fmt(catalog.ms, 'ms'),
        anchor: `fast-csv's own parse of the same index: ${fmt(parseMs, 'ms')}`,
        ratio: `${(catalog.ms / parseMs).toFixed(2)}x`,
        goal: '<= 3x (parse + serialize)',
      });
      const existing = Math.min(size, maxFiles);
      const countStarted = process.hrtime.bigint();
      const count = await getJson<{ count: number }>(gateway.port, '/count', token);
      const countMs = elapsed(countStarted);
      if (count.body.count !== existing) throw new Error(`/count of ${clientId}: ${count.body.count}, expected ${existing}`);
      const bareMs = await readdirAndStat(root, existing);
      record(rows, {
        measure: `first GET /count, ${size.toLocaleString('en')} rows, ${existing.toLocaleString('en')} files on disk`,
        gateway: fmt(countMs, 'ms'),
        anchor: `bare readdir + stat of the same files: ${fmt(bareMs, 'ms')}`,
        ratio: `${(countMs / bareMs).toFixed(2)}x`,
        // The issue's goal is a catalog of 100,000 files; the other sizes show how the ratio moves.
        goal: size === 100_000 ? '<= 1.5x' : '- (the goal is at 100,000)',
      });
      const listStarted = process.hrtime.bigint();
      const { listed, pages } = await listEveryPage(gateway.port, token);
      const listMs = elapsed(listStarted);
      if (listed !== existing) throw new Error(`/list of ${clientId} gave ${listed} files, expected ${existing}`);
      record(rows, {
        measure: `GET /list followed through ${pages} cursor page(s), ${existing.toLocaleString('en')} files (within LIST_CACHE_SECONDS of the /count)`,
        gateway: fmt(listMs, 'ms'),
        anchor: `GET /count of the same: ${fmt(countMs, 'ms')}`,
        ratio: `${(listMs / countMs).toFixed(2)}x`,
        goal: 'every file once',
      });
      const rssAfter = await deps.rssOf(gateway.pid);
      const accountedAll = (await metric(gateway.port, 'dfg_catalog_cache_bytes')) - accountedBefore;
      record(rows, {
        measure: `RSS per cached row, ${size.toLocaleString('en')} rows: after /catalog; after /list and /count too (garbage included)`,
        gateway: `${fmt((rssCatalog - rssBefore) / size, 'B')}; ${fmt((rssAfter - rssBefore) / size, 'B')}`,
        anchor: `the cache's accounted bytes per row: ${fmt(accountedCatalog / size, 'B')}; ${fmt(accountedAll / size, 'B')}`,
        ratio: `${((rssAfter - rssBefore) / Math.max(1, accountedAll)).toFixed(2)}x`,
        goal: '-',
      });
      if (collected && (await collectGarbage(inspectPort))) {
        const rssRetained = (await deps.rssOf(gateway.pid)) - rssBefore;
        const heapRetained = (await metric(gateway.port, 'nodejs_heap_size_used_bytes')) - heapBefore;
        record(rows, {
          measure: `same, after a full GC (what stays): RSS per cached row; V8 heap used per row`,
          gateway: `${fmt(rssRetained / size, 'B')}; ${fmt(heapRetained / size, 'B')}`,
          anchor: `the cache's accounted bytes per row: ${fmt(accountedAll / size, 'B')}`,
          ratio: `${(rssRetained / Math.max(1, accountedAll)).toFixed(2)}x; ${(heapRetained / Math.max(1, accountedAll)).toFixed(2)}x`,
          goal: '<= 200 B per row (RSS)',
        });
        // One more client of this size: its catalog, existence list and listing, measured the same way.
        const againId = `rows-${size}-again`;
        const againToken = await tokenFor(gateway.port, againId);
        const rssBeforeAgain = await deps.rssOf(gateway.pid);
        const accountedBeforeAgain = await metric(gateway.port, 'dfg_catalog_cache_bytes');
        const again = await getJson<{ count: number }>(gateway.port, '/catalog', againToken);
        if (again.body.count !== size) throw new Error(`/catalog of ${againId}: ${again.body.count} rows`);
        const againCount = await getJson<{ count: number }>(gateway.port, '/count', againToken);
        const againListed = (await listEveryPage(gateway.port, againToken)).listed;
        if (againCount.body.count !== existing || againListed !== existing) throw new Error(`${againId}: /count ${againCount.body.count}, /list ${againListed}, expected ${existing}`);
        if (await collectGarbage(inspectPort)) {
          const rssAgain = (await deps.rssOf(gateway.pid)) - rssBeforeAgain;
          const accountedAgain = (await metric(gateway.port, 'dfg_catalog_cache_bytes')) - accountedBeforeAgain;
          record(rows, {
            measure: `a second client of ${size.toLocaleString('en')} rows (its own index, the same files), after /catalog, /count, /list and a full GC: RSS per cached row, what one more such client costs`,
            gateway: fmt(rssAgain / size, 'B'),
            anchor: `the cache's accounted bytes per row: ${fmt(accountedAgain / size, 'B')}`,
            ratio: `${(rssAgain / Math.max(1, accountedAgain)).toFixed(2)}x`,
            goal: '<= 200 B per row (RSS)',
          });
        }
      }
    }
  } finally {
    await gateway.stop();
  }
}

/** Follows `/list`'s cursors to the end, 10,000 files a page. */
async function listEveryPage(port: number, token: string): Promise<{ readonly listed: number; readonly pages: number }> {
  let cursor: string | undefined;
  let listed = 0;
  let pages = 0;
  do {
    const page = await getJson<{ count: number; nextCursor?: string }>(port, `/list?limit=10000${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, token);
    listed += page.body.count;
    pages += 1;
    cursor = page.body.nextCursor;
  } while (cursor !== undefined);
  return { listed, pages };
}

/** Rounds of the registry measure: each round's figure is a millisecond or two a request, so 15 make the median steady. */
const registryRounds = 15;

async function registry(deps: ScaleDependencies, options: ScaleOptions, rows: ScaleRow[]): Promise<void> {
  const root = join(options.workDir, 'scale-registry-data');
  await mkdir(join(root, 'indexes'), { recursive: true });
  await writeFile(join(root, 'indexes/shared.csv'), indexCsv('R', 10));
  const counts = [...options.clients].sort((a, b) => a - b);
  // Every registry size has its gateway running at once and they are measured in turn, round after
  // round (medians of the rounds): load elsewhere on the machine then weighs on each size alike.
  const gateways: Array<{ count: number; clientsFile: string; gateway: ScaleGateway; tokens: string[]; issue: number[]; verify: number[] }> = [];
  try {
    for (const count of counts) {
      const clientsFile = join(options.workDir, `scale-registry-${count}.json`);
      await registryFile(clientsFile, Array.from({ length: count }, (_, i) => ({ id: `client-${i}`, indexPath: 'indexes/shared.csv' })));
      const gateway = await deps.startGateway({ DATA_DIR: root, CLIENTS_FILE: clientsFile, TOKEN_FAILURE_LIMIT: '1000000', TOKEN_ISSUE_LIMIT: '1000000' }, `scale-registry-${count}`);
      gateways.push({ count, clientsFile, gateway, tokens: [await tokenFor(gateway.port, 'client-0')], issue: [], verify: [] });
    }
    const rounds = registryRounds;
    const issuesPerRound = 4;
    const verificationsPerRound = 60;
    for (let round = 0; round < rounds; round += 1) {
      // Each round starts at another gateway, so that none is always the one measured right after
      // another's burst (its collection and log writes then overlap the next measure).
      const turn = gateways.map((_, k) => gateways[(k + round) % gateways.length] as (typeof gateways)[number]);
      for (const g of turn) {
        const issueStarted = process.hrtime.bigint();
        // The same workload on every registry: ten active clients, spread over the registry (ids
        // 0, count/10, 2 count/10, ...), so that only the registry's size differs, not how many
        // clients are active (each new one has its own limiter keys to make).
        for (let i = 0; i < issuesPerRound; i += 1) {
          const active = (round * issuesPerRound + i) % 10;
          g.tokens.push(await tokenFor(g.gateway.port, `client-${active * Math.floor(g.count / 10)}`));
        }
        g.issue.push(elapsed(issueStarted) / issuesPerRound);
        const verifyStarted = process.hrtime.bigint();
        for (let i = 0; i < verificationsPerRound; i += 1) {
          const response = await fetch(`http://127.0.0.1:${g.gateway.port}/count`, { headers: { authorization: `Bearer ${g.tokens[i % g.tokens.length] ?? ''}` } });
          await response.arrayBuffer();
          if (response.status !== 200) throw new Error(`/count with a token: ${response.status}`);
        }
        g.verify.push(elapsed(verifyStarted) / verificationsPerRound);
      }
    }
  } finally {
    for (const g of gateways) await g.gateway.stop();
  }
  const median = (values: readonly number[]): number => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] ?? Number.NaN;
  const measured: Array<{ clients: number; issueMs: number; verifyMs: number; addMs: number }> = [];
  for (const g of gateways) {
    const addStarted = process.hrtime.bigint();
    const quiet = { write: () => true };
    const exit = await runClientsCli(['add', `added-${g.count}`, '--secret', secret], { env: { CLIENTS_FILE: g.clientsFile }, stdout: quiet, stderr: quiet });
    const addMs = elapsed(addStarted);
    if (exit !== 0) throw new Error(`clients add at ${g.count} clients exited ${exit}`);
    measured.push({ clients: g.count, issueMs: median(g.issue), verifyMs: median(g.verify), addMs });
  }
  const base = measured[0];
  for (const m of measured) {
    record(rows, {
      measure: `${m.clients.toLocaleString('en')} registered clients: token issue; request with a token (GET /count); medians of ${registryRounds} rounds taken in turn`,
      gateway: `${fmt(m.issueMs, 'ms')}; ${fmt(m.verifyMs, 'ms')}`,
      anchor: base === undefined ? '-' : `${base.clients} clients: ${fmt(base.issueMs, 'ms')}; ${fmt(base.verifyMs, 'ms')}`,
      ratio: base === undefined ? '-' : `${(m.issueMs / base.issueMs).toFixed(2)}x; ${(m.verifyMs / base.verifyMs).toFixed(2)}x`,
      goal: '<= 1.1x',
    });
    record(rows, { measure: `\`clients add\` with ${m.clients.toLocaleString('en')} clients`, gateway: fmt(m.addMs, 'ms'), anchor: '-', ratio: '-', goal: '< 1000 ms' });
  }
}

async function fleet(deps: ScaleDependencies, options: ScaleOptions, rows: ScaleRow[]): Promise<void> {
  const { clients: count, rows: size } = options.fleet;
  if (count === 0) return;
  const root = join(options.workDir, 'scale-fleet-data');
  await mkdir(join(root, 'indexes'), { recursive: true });
  const clients = Array.from({ length: count }, (_, i) => ({ id: `fleet-${i}`, indexPath: `indexes/fleet-${i}.csv` }));
  for (const [i, client] of clients.entries()) await writeFile(join(root, client.indexPath), indexCsv(`F${i}_`, size));
  const clientsFile = join(options.workDir, 'scale-fleet-clients.json');
  await registryFile(clientsFile, clients);
  // As docs/operators.md advises: Node's heap bounded at CATALOG_CACHE_MB + 256 MiB, so that V8 collects before RSS grows past it.
  const heapMb = options.fleetHeapMb ?? options.cacheMb + 256;
  const gateway = await deps.startGateway(
    {
      DATA_DIR: root,
      CLIENTS_FILE: clientsFile,
      CATALOG_CACHE_MB: String(options.cacheMb),
      TOKEN_ISSUE_LIMIT: '1000000',
      METRICS_TOKEN: metricsToken,
      NODE_OPTIONS: `--max-old-space-size=${heapMb}`,
    },
    'scale-fleet',
  );
  let peak = await deps.rssOf(gateway.pid);
  const baseline = peak;
  const sampler = setInterval(() => {
    void deps.rssOf(gateway.pid).then((rss) => (peak = Math.max(peak, rss)), () => undefined);
  }, 100);
  // What the RSS is made of, from the gateway's own default metrics: V8's heap (all spaces) and memory outside it (Buffers).
  let peakHeapTotal = 0;
  let peakExternal = 0;
  const heapSampler = setInterval(() => {
    void Promise.all([metric(gateway.port, 'nodejs_heap_size_total_bytes'), metric(gateway.port, 'nodejs_external_memory_bytes')]).then(
      ([total, external]) => {
        peakHeapTotal = Math.max(peakHeapTotal, total);
        peakExternal = Math.max(peakExternal, external);
      },
      () => undefined,
    );
  }, 1000);
  try {
    const started = process.hrtime.bigint();
    for (const [i, client] of clients.entries()) {
      const token = await tokenFor(gateway.port, client.id);
      const { body } = await getJson<{ clientId: string; count: number; files: Array<{ Symbol: string }> }>(gateway.port, '/catalog', token);
      const exact = body.clientId === client.id && body.count === size && body.files[0]?.Symbol === symbolOf(`F${i}_`, 0) && body.files.at(-1)?.Symbol === symbolOf(`F${i}_`, size - 1);
      if (!exact) throw new Error(`${client.id} did not get its own catalog`);
    }
    const ms = elapsed(started);
    peak = Math.max(peak, await deps.rssOf(gateway.pid));
    const evictions = await metric(gateway.port, 'dfg_catalog_cache_evictions_total');
    const accounted = await metric(gateway.port, 'dfg_catalog_cache_bytes');
    record(rows, {
      measure: `${count.toLocaleString('en')} clients x ${size.toLocaleString('en')} rows, each client's /catalog checked exact (CATALOG_CACHE_MB=${options.cacheMb}, NODE_OPTIONS=--max-old-space-size=${heapMb})`,
      gateway: `peak RSS ${fmt(peak / MiB, 'MiB')} (from ${fmt(baseline / MiB, 'MiB')}); peak V8 heap ${fmt(peakHeapTotal / MiB, 'MiB')}, external ${fmt(peakExternal / MiB, 'MiB')} (sampled each second); cache ${fmt(accounted / MiB, 'MiB')}, ${evictions} evictions; ${fmt(ms / count, 'ms')} per client`,
      anchor: `CATALOG_CACHE_MB + 256 MiB: ${options.cacheMb + 256} MiB`,
      ratio: `${(peak / MiB / (options.cacheMb + 256)).toFixed(2)}x`,
      goal: '<= 1x',
    });
  } finally {
    clearInterval(sampler);
    clearInterval(heapSampler);
    await gateway.stop();
  }
}

/** Runs every scale measure and returns the markdown table (also written to BENCHMARKS.md when asked). */
export async function runScaleBench(deps: ScaleDependencies, options: ScaleOptions): Promise<string> {
  const rows: ScaleRow[] = [];
  const started = `${new Date().toISOString().slice(0, 16)}Z, load average ${await loadAverage()}`;
  console.log(`Started ${started}`);
  await indexRows(deps, options, rows);
  await registry(deps, options, rows);
  await fleet(deps, options, rows);
  if (options.azureFiles > 0) for (const row of await azureListing(deps, options.azureFiles, options.workDir)) record(rows, row);
  const table = benchTable(rows);
  console.log(`\n${table}\n`);
  if (options.write) await writeScaleSection(table, options, started);
  return table;
}

const loadAverage = async (): Promise<string> => (await readFile('/proc/loadavg', 'utf8').catch(() => '?')).split(' ').slice(0, 3).join(' ');

async function writeScaleSection(table: string, options: ScaleOptions, started: string): Promise<void> {
  const path = join(packageRoot(), 'BENCHMARKS.md');
  const load = await loadAverage();
  const section = [
    '<!-- bench-scale:start -->',
    `Measured ${new Date().toISOString().slice(0, 16)}Z with \`${(process.env['NODE_OPTIONS'] ?? '').includes('--experimental-websocket') ? 'NODE_OPTIONS=--experimental-websocket ' : ''}npm run bench -- --only scale --scale-rows ${options.rows.join(',')} --scale-clients ${options.clients.join(',')} --scale-fleet ${options.fleet.clients}x${options.fleet.rows} --scale-cache-mb ${options.cacheMb}${options.fleetHeapMb === undefined ? '' : ` --scale-fleet-heap-mb ${options.fleetHeapMb}`} --scale-azure-files ${options.azureFiles}\` (started ${started}; ended ${new Date().toISOString().slice(0, 16)}Z, load average ${load}).`,
    '',
    table,
    '<!-- bench-scale:end -->',
  ].join('\n');
  const text = await readFile(path, 'utf8');
  const start = text.indexOf('<!-- bench-scale:start -->');
  const end = text.indexOf('<!-- bench-scale:end -->');
  const updated = start === -1 || end === -1 ? `${text.trimEnd()}\n\n${section}\n` : `${text.slice(0, start)}${section}${text.slice(end + '<!-- bench-scale:end -->'.length)}`;
  await writeFile(path, updated);
  console.log(`Wrote ${path}`);
}
