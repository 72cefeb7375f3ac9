/**
 * Part of `npm run bench -- --only scale` (`--scale-azure-files 100000`, 0 to skip): the storage
 * cost of a large catalog on Azure Blob (Azurite), the gateway's first `/count` beside the raw List
 * Blobs of the same folders through the SDK, in the same run. Both go through one counting proxy in
 * front of Azurite, so that the storage calls of each side are counted as Azure would bill them:
 * one per HTTP request (a List Blobs page, a property read, a read of the index).
 */
import { spawn } from 'node:child_process';
import { createServer, request as httpRequest, Agent, type Server } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ContainerClient } from '@azure/storage-blob';
import { hashSecret } from '../src/adapters/clients/secret-hash.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, createTestContainer, startAzurite } from '../test/support/azurite.js';
import type { ScaleDependencies, ScaleRow } from './scale.js';

/** Folders the files are spread over: a few markets' daily files, 10,000 to a folder at full size. */
const folders = 10;
/** Uploads in flight while seeding: Azurite takes about 1 ms of its CPU per small blob. */
const uploadConcurrency = 64;
/** Rounds of (raw listing, gateway /count), taken in turn; medians are reported. */
const rounds = 3;
const secret = 'scale-azure-secret-0123456789abcdef';
const clientId = 'azure-files';
const indexPath = 'indexes/azure-files.csv';

const pathOf = (i: number, files: number): string => `daily/m${Math.floor((i * folders) / files)}/S${i}.parquet`;
const elapsed = (started: bigint): number => Number(process.hrtime.bigint() - started) / 1e6;
const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const fmt = (ms: number): string => `${ms.toFixed(ms >= 100 ? 0 : 2)} ms`;

/** Storage calls by kind, as the proxy saw them. */
export class CallCounts {
  readonly byKind = new Map<string, number>();
  count(kind: string): void {
    this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1);
  }
  /** Every call but the readiness probes, which are not the measured request's. */
  get total(): number {
    let total = 0;
    for (const [kind, n] of this.byKind) if (kind !== 'readiness probe') total += n;
    return total;
  }
  describe(): string {
    return [...this.byKind].map(([kind, n]) => `${n} ${kind}`).join(', ');
  }
  reset(): void {
    this.byKind.clear();
  }
}

/** What Azure bills one request as: a List Blobs page, a property read, a read, or another operation. */
function kindOf(method: string, url: string): string {
  // The readiness check's one-blob listing (AzureBlobStore.probe) runs every few seconds whatever the requests.
  if (/[?&]comp=list(&|$)/.test(url) && /[?&]maxresults=1(&|$)/.test(url) && !/[?&]prefix=/.test(url)) return 'readiness probe';
  if (/[?&]comp=list(&|$)/.test(url)) return 'List Blobs';
  if (method === 'HEAD') return 'Get Blob Properties';
  if (method === 'GET') return 'Get Blob';
  return method;
}

/** A plain reverse proxy to `targetPort` that counts each request storage answered into `counts`. */
export async function countingProxy(targetPort: number, counts: CallCounts): Promise<{ port: number; close(): Promise<void> }> {
  // A connection per request: a kept-alive one that Azurite has closed meanwhile would fail the
  // request and make the SDK retry it, a call and a back-off that are the proxy's, not the caller's.
  const agent = new Agent({ keepAlive: false });
  const server: Server = createServer((req, res) => {
    const upstream = httpRequest({ host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
      counts.count(kindOf(req.method ?? 'GET', req.url ?? ''));
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

/** Uploads `files` small blobs, `uploadConcurrency` at a time, and the index naming all of them. */
async function seed(container: ContainerClient, files: number): Promise<void> {
  let next = 0;
  const body = Buffer.from('PAR1');
  await Promise.all(
    Array.from({ length: uploadConcurrency }, async () => {
      while (next < files) {
        const i = next;
        next += 1;
        await container.getBlockBlobClient(pathOf(i, files)).uploadData(body);
      }
    }),
  );
  const lines = ['Symbol,ShortDescriptionPt,ShortDescription,FileName'];
  for (let i = 0; i < files; i += 1) lines.push(`A${i},Cotações diárias ${i},Daily quotes ${i},${pathOf(i, files)}`);
  await container.getBlockBlobClient(indexPath).uploadData(Buffer.from(`${lines.join('\r\n')}\r\n`));
}

/**
 * The raw List Blobs of every folder, all at once (the gateway lists up to 16 folders at a time),
 * every page read, nothing kept: in a process of its own, as the gateway is, timed inside it.
 */
async function rawListing(connectionString: string, container: string, files: number, counts: CallCounts): Promise<{ ms: number; blobs: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), 'list', JSON.stringify({ connectionString, container })], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.startsWith('ready\n')) resolve();
    });
    void exited.then(() => resolve());
  });
  // The child's warm-up call is not part of the listing.
  counts.reset();
  child.stdin.end('go\n');
  const code = await exited;
  if (code !== 0) throw new Error(`the raw listing exited with ${code}`);
  const measured = JSON.parse(output.slice('ready\n'.length)) as { ms: number; blobs: number };
  if (measured.blobs !== files) throw new Error(`the raw listing saw ${measured.blobs} blobs, not ${files}`);
  return measured;
}

async function listFolders(connectionString: string, containerName: string): Promise<{ ms: number; blobs: number }> {
  const container = new ContainerClient(connectionString, containerName);
  // One call first, outside the timing and the counts, so that both sides start with a connection and loaded code.
  await container.listBlobsFlat().byPage({ maxPageSize: 1 }).next();
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  const started = process.hrtime.bigint();
  const counts = await Promise.all(
    Array.from({ length: folders }, async (_, folder) => {
      let blobs = 0;
      for await (const page of container.listBlobsFlat({ prefix: `daily/m${folder}/` }).byPage()) blobs += page.segment.blobItems.length;
      return blobs;
    }),
  );
  return { ms: elapsed(started), blobs: counts.reduce((a, b) => a + b, 0) };
}

async function bearerToken(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
  });
  if (response.status !== 200) throw new Error(`token: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

async function timedGet(port: number, path: string, token: string): Promise<{ ms: number; text: string }> {
  const started = process.hrtime.bigint();
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  const ms = elapsed(started);
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${text.slice(0, 200)}`);
  return { ms, text };
}

/**
 * Seeds Azurite with `files` blobs in `folders` folders and an index of all of them, then measures
 * `rounds` times, in turn: the raw List Blobs of the folders, and the gateway's `/count` (with
 * LIST_CACHE_SECONDS=0, so each is a first `/count`: every folder listed again), after a
 * `/catalog` that loaded the index. Each side's storage calls are counted by the proxy.
 */
export async function azureListing(deps: ScaleDependencies, files: number, workDir: string): Promise<ScaleRow[]> {
  const azurite = await startAzurite();
  const counts = new CallCounts();
  const proxy = await countingProxy(Number(new URL(azurite.blobEndpoint).port), counts);
  try {
    const seedStarted = process.hrtime.bigint();
    const direct = await createTestContainer(azurite.connectionString, 'scale-azure');
    await seed(direct, files);
    const seedMs = elapsed(seedStarted);
    console.log(`Seeded Azurite with ${files} blobs in ${folders} folders and their index in ${(seedMs / 1000).toFixed(1)} s`);

    const connectionString = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};BlobEndpoint=http://127.0.0.1:${proxy.port}/${AZURITE_ACCOUNT};`;
    const clientsFile = join(workDir, 'scale-azure-clients.json');
    const at = new Date().toISOString();
    await writeFile(clientsFile, JSON.stringify({ version: 1, clients: { [clientId]: { secretHash: await hashSecret(secret), indexPath, enabled: true, createdAt: at, updatedAt: at } } }));
    const gateway = await deps.startGateway(
      {
        AZURE_STORAGE_CONNECTION_STRING: connectionString,
        AZURE_STORAGE_CONTAINER: direct.containerName,
        CLIENTS_FILE: clientsFile,
        LIST_CACHE_SECONDS: '0',
        TOKEN_ISSUE_LIMIT: '1000000',
        // Azurite serves one request at a time and takes seconds per page of 5,000 blobs: the 10th of
        // 10 folders' first pages, asked at once, comes after ~30 s, the default deadline. Azure
        // serves pages in parallel in a fraction of a second; the bench measures cost, not deadlines.
        STORAGE_TIMEOUT_SECONDS: '600',
      },
      'scale-azure',
    );
    try {
      const token = await bearerToken(gateway.port);
      const catalog = await timedGet(gateway.port, '/catalog', token);
      if ((JSON.parse(catalog.text) as { count: number }).count !== files) throw new Error(`/catalog does not hold the ${files} files`);
      const gatewayMs: number[] = [];
      const rawMs: number[] = [];
      let gatewayCalls = '';
      let rawCalls = '';
      let gatewayTotal = 0;
      let rawTotal = 0;
      for (let round = 0; round < rounds; round += 1) {
        rawMs.push((await rawListing(connectionString, direct.containerName, files, counts)).ms);
        rawTotal = counts.total;
        rawCalls = counts.describe();
        console.log(`round ${round + 1}: raw List Blobs ${fmt(rawMs.at(-1) ?? 0)} (${rawCalls})`);
        counts.reset();
        const count = await timedGet(gateway.port, '/count', token);
        const counted = (JSON.parse(count.text) as { count: number }).count;
        if (counted !== files) throw new Error(`/count answered ${counted}, not ${files}`);
        gatewayMs.push(count.ms);
        gatewayTotal = counts.total;
        gatewayCalls = counts.describe();
        console.log(`round ${round + 1}: gateway /count ${fmt(count.ms)} (${gatewayCalls})`);
      }
      const [gatewayMedian, rawMedian] = [median(gatewayMs), median(rawMs)];
      const range = (values: readonly number[]): string => `${fmt(Math.min(...values))}-${fmt(Math.max(...values))}`;
      return [
        {
          measure: `first GET /count, ${files.toLocaleString('en')}-file catalog on Azure Blob (Azurite), ${folders} folders; medians of ${rounds} rounds taken in turn, storage calls counted by a proxy, STORAGE_TIMEOUT_SECONDS=600 for Azurite's slow pages (seeding took ${(seedMs / 1000).toFixed(0)} s)`,
          gateway: `${fmt(gatewayMedian)} (${range(gatewayMs)}); ${gatewayTotal} storage calls (${gatewayCalls})`,
          anchor: `raw List Blobs of the same folders (SDK, all pages, a process of its own): ${fmt(rawMedian)} (${range(rawMs)}); ${rawTotal} calls`,
          ratio: `time ${(gatewayMedian / rawMedian).toFixed(2)}x; calls ${(gatewayTotal / rawTotal).toFixed(2)}x`,
          goal: '<= 1.2x',
        },
      ];
    } finally {
      await gateway.stop();
    }
  } finally {
    await proxy.close();
    await azurite.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'list') {
  const { connectionString, container } = JSON.parse(process.argv[3] ?? '{}') as { connectionString: string; container: string };
  process.stdout.write(JSON.stringify(await listFolders(connectionString, container)));
}
