import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { packageRoot } from '../../src/app/package-root.js';
import { expectMatchesContract } from '../support/contract.js';
import { generatedApiTypesPath } from '../support/generate-api-types.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { recordingBodies, startTamperingProxy, type TamperingProxy } from '../support/tampering-proxy.js';

const run = promisify(execFile);

const MARKER = /<!-- tested: typescript-example ([a-z0-9-]+) -->\n```ts\n([\s\S]*?)\n```/g;

/** The marked TypeScript examples of docs/subscribers.md, by name, exactly as a reader copies them. */
function typescriptExamples(): Map<string, string> {
  const guide = readFileSync(join(packageRoot(), 'docs', 'subscribers.md'), 'utf8');
  return new Map([...guide.matchAll(MARKER)].map((match) => [match[1] ?? '', `${match[2] ?? ''}\n`]));
}

/** More than two pages of the example's `limit: 1000`. */
const fileCount = 2500;

function pathOf(index: number): string {
  return `series/${String(index).padStart(4, '0')}.csv`;
}

describe('the TypeScript examples of docs/subscribers.md', function () {
  const secret = 'typescript-example-secret-0123456789';
  let gateway: TestGateway;
  let proxy: TamperingProxy;
  const bodies: Buffer[][] = [];
  let folder: string;

  before(async function () {
    const store = new MemoryBlobStore();
    store.put(
      'indexes/integrator.csv',
      buildIndexCsv(Array.from({ length: fileCount }, (_, index) => buildIndexRow({ Symbol: `S${String(index).padStart(4, '0')}`, FileName: pathOf(index) }))),
    );
    for (let index = 0; index < fileCount; index += 1) store.put(pathOf(index), `${index}\n`);
    gateway = await startGateway({ store, clients: [{ clientId: 'integrator', secret }] });
    // Every exchange goes through a recording proxy, so each answer is checked against openapi.yaml.
    proxy = await startTamperingProxy(gateway.port, recordingBodies(bodies));
  });

  after(async function () {
    await proxy?.close();
    await gateway?.close();
  });

  beforeEach(function () {
    // A project of the reader's: the example, `api.ts` as openapi-typescript writes it (the
    // committed generation of test/consumer), an ES module package, and this repository's
    // node_modules for openapi-fetch, TypeScript and tsx.
    folder = mkdtempSync(join(tmpdir(), 'dfg-typescript-'));
    copyFileSync(generatedApiTypesPath(), join(folder, 'api.ts'));
    writeFileSync(join(folder, 'package.json'), '{ "type": "module" }\n');
    symlinkSync(join(packageRoot(), 'node_modules'), join(folder, 'node_modules'), 'dir');
    proxy.exchanges.length = 0;
    bodies.length = 0;
  });

  afterEach(async function () {
    rmSync(folder, { recursive: true, force: true });
    for (const [index, exchange] of proxy.exchanges.entries()) {
      await expectMatchesContract(exchange.method, exchange.path, {
        status: exchange.status,
        headers: exchange.responseHeaders,
        body: Buffer.concat(bodies[index] ?? []),
      });
    }
  });

  /** Writes one example as `<name>.ts` into the reader's project. */
  function writeExample(name: string): string {
    const code = typescriptExamples().get(name);
    if (code === undefined) throw new Error(`docs/subscribers.md has no example marked <!-- tested: typescript-example ${name} -->`);
    const script = join(folder, `${name}.ts`);
    writeFileSync(script, code);
    return script;
  }

  it('are exactly the examples this suite checks', function () {
    expect([...typescriptExamples().keys()].sort()).to.deep.equal(['openapi-fetch-list']);
  });

  describe('openapi-fetch-list', function () {
    it('type-checks with tsc --strict against the types openapi-typescript generates', async function () {
      this.timeout(120_000);
      const script = writeExample('openapi-fetch-list');
      const tsc = join(packageRoot(), 'node_modules', 'typescript', 'bin', 'tsc');
      const args = [tsc, '--noEmit', '--strict', '--exactOptionalPropertyTypes', '--noUncheckedIndexedAccess', '--target', 'es2022', '--module', 'nodenext', '--types', 'node', '--skipLibCheck', script];

      const result = await run(process.execPath, args, { cwd: folder, timeout: 110_000 }).then(
        () => '',
        (failure: { stdout?: string }) => failure.stdout ?? String(failure),
      );

      expect(result, 'tsc reports').to.equal('');
    });

    it('lists every file page after page, each with its storage path, the bearer token on every call', async function () {
      this.timeout(60_000);
      const script = writeExample('openapi-fetch-list');

      const { stdout } = await run(process.execPath, ['--import', 'tsx', script], {
        cwd: folder,
        env: { PATH: process.env['PATH'] ?? '', HOME: folder, NO_PROXY: '*', DFG_URL: proxy.url, DFG_CLIENT_ID: 'integrator', DFG_CLIENT_SECRET: secret },
        timeout: 50_000,
      });

      const bytes = Array.from({ length: fileCount }, (_, index) => `${index}\n`.length).reduce((sum, size) => sum + size, 0);
      const [summary, ...firstFiles] = stdout.trim().split('\n');
      expect(summary).to.equal(`${fileCount} files, ${bytes} bytes`);
      expect(firstFiles.map((line) => line.split(' ').slice(0, 3).join(' '))).to.deep.equal(['S0000 series/0000.csv 2', 'S0001 series/0001.csv 2', 'S0002 series/0002.csv 2']);
      const calls = proxy.exchanges.map((exchange) => `${exchange.method} ${exchange.path.split('?')[0]} ${exchange.status}`);
      expect(calls).to.deep.equal(['POST /oauth/token 200', 'GET /list 200', 'GET /list 200', 'GET /list 200']);
      const lists = proxy.exchanges.filter((exchange) => exchange.path.startsWith('/list'));
      expect(lists.map((exchange) => new URL(exchange.path, 'http://x').searchParams.has('cursor'))).to.deep.equal([false, true, true]);
      for (const exchange of lists) expect(exchange.requestHeaders['authorization']).to.match(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    });
  });
});
