/**
 * `npm run bench -- --only ratios`: the timings the test suite no longer asserts, each beside its
 * anchor in the same run. The suite counts the work instead (characters read, storage calls,
 * verifications), which a busy machine cannot change; these ratios say what that work costs in time
 * on this machine, and are only printed.
 *
 * - Each wire-format parser: one 64 KiB input against sixty-four 1 KiB ones of the same shape
 *   (the anchor); a linear parser is near 1, a quadratic one near 64 (test/http/grammar, counted).
 * - Conditional and Range headers full of whitespace: a request with one against a plain request
 *   (the anchor), medians of alternate runs (test/http/hostile-headers.test.ts, counted).
 * - A token flood by one client: another client's GET /catalog while eight flood, against the same
 *   when quiet (the anchor) (test/http/token-flood.test.ts, counted).
 *
 * Gateways run in this process (test/support/gateway.ts), as the tests start them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonClientRegistry } from '../src/adapters/clients/json-client-registry.js';
import { MemoryBlobStore } from '../src/adapters/storage/memory-blob-store.js';
import { parseBearerAuthorization } from '../src/http-wire/grammar/authorization.js';
import { parseEntityTagCondition } from '../src/http-wire/grammar/entity-tags.js';
import { parseHttpDate } from '../src/http-wire/grammar/http-date.js';
import { parseRangeHeader } from '../src/http-wire/grammar/range-header.js';
import { runClientsCli } from '../src/app/clients-command.js';
import { startGateway } from '../test/support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../test/support/index-csv-builder.js';

/** One row of the bench table: measure, gateway figure, anchor figure, ratio, goal. */
export type RatioRow = readonly [string, string, string, string, string];

function median(values: number[]): number {
  return values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
}

function nsOf(action: () => void): number {
  const start = process.hrtime.bigint();
  action();
  return Number(process.hrtime.bigint() - start);
}

async function msOf(action: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await action();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** The median ratio, over 7 interleaved trials, of one `largeLength` input to 64 of 1/64 of it. */
function linearityRatio(parse: (input: string) => unknown, inputOfLength: (length: number) => string, largeLength = 64 * 1024): { ratio: number; largeUs: number; smallUs: number } {
  const small = inputOfLength(largeLength / 64);
  const large = inputOfLength(largeLength);
  const smallBatch = (): void => {
    for (let i = 0; i < 64; i += 1) parse(small);
  };
  const largeOnce = (): void => {
    parse(large);
  };
  for (let i = 0; i < 3; i += 1) {
    smallBatch();
    largeOnce();
  }
  const ratios: number[] = [];
  const larges: number[] = [];
  const smalls: number[] = [];
  for (let trial = 0; trial < 7; trial += 1) {
    const smallNs = nsOf(smallBatch);
    const largeNs = nsOf(largeOnce);
    smalls.push(smallNs / 1000);
    larges.push(largeNs / 1000);
    ratios.push(largeNs / Math.max(smallNs, 1));
  }
  return { ratio: median(ratios), largeUs: median(larges), smallUs: median(smalls) };
}

function parserRows(): RatioRow[] {
  const shapes: Array<[string, (input: string) => unknown, (n: number) => string]> = [
    ['Range: a range, then 64 KiB of spaces and junk', parseRangeHeader, (n) => `bytes=0-0${' '.repeat(n - 10)}x`],
    ['Range: 64 KiB of commas', parseRangeHeader, (n) => `bytes=${','.repeat(n - 6)}`],
    ['If-None-Match: a tag, then 64 KiB of spaces and junk', parseEntityTagCondition, (n) => `"a"${' '.repeat(n - 4)}x`],
    ['HTTP date: 64 KiB of spaces', (value) => parseHttpDate(value, 2026), (n) => ' '.repeat(n)],
    ['Authorization: Bearer, 64 KiB of spaces', parseBearerAuthorization, (n) => `Bearer${' '.repeat(n - 7)}!`],
  ];
  return shapes.map(([name, parse, inputOfLength]) => {
    const { ratio, largeUs, smallUs } = linearityRatio(parse, inputOfLength);
    return [`parse ${name}`, `${largeUs.toFixed(0)} µs`, `64 inputs of 1 KiB: ${smallUs.toFixed(0)} µs`, `${ratio.toFixed(2)}x`, 'below 8x (quadratic: ~64x)'];
  });
}

async function hostileHeaderRows(): Promise<RatioRow[]> {
  const store = new MemoryBlobStore();
  store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'data/a.csv' })]));
  store.put('data/a.csv', 'a,b\n1,2\n');
  const gateway = await startGateway({ store, clients: [{ clientId: 'acme', secret: 'acme-secret-acme-secret' }], env: { DOWNLOAD_RATE_LIMIT: '100000' } });
  const rows: RatioRow[] = [];
  try {
    await gateway.get('acme', '/download/A');
    for (const [spaces, name, value] of [
      [15_000, 'if-none-match', `"a"${' '.repeat(15_000)}x`],
      [8_000, 'if-none-match', `"a"${' '.repeat(8_000)}x`],
      [8_000, 'range', `bytes=0-0${' '.repeat(8_000)}x`],
      [8_000, 'if-modified-since', `Wed, 01 May 2024 12:00:00 GMT${' '.repeat(8_000)}x`],
    ] as const) {
      const plain: number[] = [];
      const hostile: number[] = [];
      for (let run = 0; run < 21; run += 1) {
        plain.push(await msOf(async () => void (await gateway.get('acme', '/download/A'))));
        hostile.push(await msOf(async () => void (await gateway.get('acme', '/download/A', { [name]: value }))));
      }
      const [plainMs, hostileMs] = [median(plain), median(hostile)];
      rows.push([`GET /download with ${name} of ${spaces} inner spaces`, `${hostileMs.toFixed(2)} ms`, `plain request: ${plainMs.toFixed(2)} ms`, `${(hostileMs / plainMs).toFixed(2)}x`, 'below 3x']);
    }
  } finally {
    await gateway.close();
  }
  return rows;
}

async function tokenFloodRows(): Promise<RatioRow[]> {
  const flooder = { clientId: 'flooder', secret: 'flooder-secret-flooder-secret' };
  const quiet = { clientId: 'quiet', secret: 'quiet-secret-quiet-secret-quiet' };
  const workDir = await mkdtemp(join(tmpdir(), 'bench-token-flood-'));
  try {
    const clientsFile = join(workDir, 'clients.json');
    for (const client of [flooder, quiet]) {
      await runClientsCli(['add', client.clientId, '--secret', client.secret], { env: { CLIENTS_FILE: clientsFile }, stdout: { write: () => true }, stderr: { write: () => true } });
    }
    const store = new MemoryBlobStore();
    store.put('indexes/quiet.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'data/a.csv' })]));
    store.put('data/a.csv', 'a,b\n1,2\n');
    const gateway = await startGateway({ store, registry: new JsonClientRegistry(clientsFile), clients: [flooder, quiet], env: { TOKEN_ISSUE_LIMIT: '1000000' } });
    try {
      const catalog = async (): Promise<void> => void (await gateway.get(quiet.clientId, '/catalog'));
      const samples = async (): Promise<number> => {
        const times: number[] = [];
        for (let i = 0; i < 25; i += 1) times.push(await msOf(catalog));
        return median(times);
      };
      await catalog();
      const quietMs = await samples();
      let flooding = true;
      let issued = 0;
      const flood = Array.from({ length: 8 }, async () => {
        while (flooding) {
          await gateway.tokenFor(flooder.clientId);
          issued += 1;
        }
      });
      while (issued < 8) await gateway.tokenFor(flooder.clientId);
      const floodedMs = await samples();
      flooding = false;
      await Promise.all(flood);
      return [[`another client's GET /catalog while one floods POST /oauth/token (8 at once, ${issued} tokens)`, `${floodedMs.toFixed(1)} ms`, `quiet: ${quietMs.toFixed(1)} ms`, `${(floodedMs / quietMs).toFixed(2)}x`, 'below 3x']];
    } finally {
      await gateway.close();
    }
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/** Every timing ratio above, as rows of the bench table. */
export async function runTimingRatios(): Promise<RatioRow[]> {
  return [...parserRows(), ...(await hostileHeaderRows()), ...(await tokenFloodRows())];
}
