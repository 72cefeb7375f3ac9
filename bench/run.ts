/**
 * `npm run bench`: measures the gateway end to end on this machine, over loopback.
 *  - GET /list for a 500-file catalog (half of the files exist) on the local folder and on Azurite,
 *    showing what listing by prefix buys over one property read per file;
 *  - download throughput of a 64 MiB file, whole and as a parquet-footer suffix range;
 *  - token issuance (scrypt-bound by design).
 * Prints one line per measurement: name, samples, p50, p95 and throughput where it applies.
 */
import { mkdtemp, rm, truncate, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { AzureBlobStore } from '../src/adapters/storage/azure-blob-store.js';
import { LocalFolderBlobStore } from '../src/adapters/storage/local-folder-blob-store.js';
import type { BlobStore } from '../src/domain/ports.js';
import { startAzurite, createTestContainer, TEST_STORE_TIMEOUTS } from '../test/support/azurite.js';
import { startGateway, type TestGateway } from '../test/support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../test/support/index-csv-builder.js';

const catalogSize = 500;
const bigFileBytes = 64 * 1024 * 1024;
const client = { clientId: 'bench', secret: 'bench-secret-bench-secret' };

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function timed(runs: number, action: () => Promise<number | void>): Promise<{ ms: number[]; bytes: number }> {
  const ms: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    bytes += (await action()) ?? 0;
    ms.push(performance.now() - start);
  }
  return { ms, bytes };
}

function report(name: string, result: { ms: number[]; bytes: number }): void {
  const total = result.ms.reduce((a, b) => a + b, 0);
  const throughput = result.bytes > 0 ? `  ${(result.bytes / 1024 / 1024 / (total / 1000)).toFixed(0)} MiB/s` : '';
  console.log(`${name.padEnd(58)} n=${String(result.ms.length).padStart(3)}  p50=${percentile(result.ms, 50).toFixed(1).padStart(7)} ms  p95=${percentile(result.ms, 95).toFixed(1).padStart(7)} ms${throughput}`);
}

function indexCsv(): string {
  return buildIndexCsv([
    ...Array.from({ length: catalogSize }, (_, i) => buildIndexRow({ Symbol: `Q${i}`, FileName: `quotes/q${i}.parquet` })),
    buildIndexRow({ Symbol: 'BIG', FileName: 'big/big.parquet' }),
  ]);
}

async function measure(label: string, store: BlobStore, gateway: () => Promise<TestGateway>): Promise<void> {
  const g = await gateway();
  await g.get(client.clientId, '/list');
  report(`${label}: GET /list, ${catalogSize} files`, await timed(20, async () => void (await g.get(client.clientId, '/list'))));
  report(`${label}: GET /download 64 MiB`, await timed(5, async () => (await g.get(client.clientId, '/download/BIG')).body.length));
  report(`${label}: GET /download Range bytes=-65536`, await timed(50, async () => (await g.get(client.clientId, '/download/BIG', { range: 'bytes=-65536' })).body.length));
  report(`${label}: POST /oauth/token`, await timed(20, async () => void (await g.tokenFor(client.clientId))));
  await g.close();
  void store;
}

async function main(): Promise<void> {
  const folder = await mkdtemp(join(tmpdir(), 'gateway-bench-'));
  try {
    await mkdir(join(folder, 'quotes'), { recursive: true });
    await mkdir(join(folder, 'indexes'), { recursive: true });
    await mkdir(join(folder, 'big'), { recursive: true });
    await writeFile(join(folder, 'indexes', 'bench.csv'), indexCsv());
    for (let i = 0; i < catalogSize; i += 2) await writeFile(join(folder, 'quotes', `q${i}.parquet`), `PAR1 ${i} PAR1`);
    await writeFile(join(folder, 'big', 'big.parquet'), '');
    await truncate(join(folder, 'big', 'big.parquet'), bigFileBytes);
    const local = new LocalFolderBlobStore(folder);
    await measure('local folder', local, () => startGateway({ store: local, clients: [client], env: { DOWNLOAD_RATE_LIMIT: '1000000' } }));

    const azurite = await startAzurite();
    try {
      const container = await createTestContainer(azurite.connectionString, 'bench');
      await container.getBlockBlobClient('indexes/bench.csv').uploadData(Buffer.from(indexCsv()));
      for (let i = 0; i < catalogSize; i += 2) await container.getBlockBlobClient(`quotes/q${i}.parquet`).uploadData(Buffer.from(`PAR1 ${i} PAR1`));
      await container.getBlockBlobClient('big/big.parquet').uploadData(Buffer.alloc(bigFileBytes, 7), { blockSize: 8 * 1024 * 1024 });
      const azure = new AzureBlobStore(container, TEST_STORE_TIMEOUTS);
      await measure('Azurite', azure, () => startGateway({ store: azure, clients: [client], env: { DOWNLOAD_RATE_LIMIT: '1000000' } }));
    } finally {
      await azurite.stop();
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

await main();
