import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { LocalFolderBlobStore } from '../../src/adapters/storage/local-folder-blob-store.js';
import { bundledSampleDataDir, packageRoot } from '../../src/app/package-root.js';
import { expectMatchesContract } from '../support/contract.js';
import { installDebianPackages } from '../support/debian-packages.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { recordingBodies, startTamperingProxy, type TamperingProxy } from '../support/tampering-proxy.js';
import { deadline } from '../support/deadlines.js';

const run = promisify(execFile);

/** Debian's own Python, whose modules the Debian packages install (not a pyenv or venv python3 on PATH). */
const PYTHON = '/usr/bin/python3';
/** The Debian packages the examples need, and the module each provides. */
const PACKAGES: Readonly<Record<string, string>> = {
  'python3-requests': 'requests',
  'python3-pandas': 'pandas',
  'python3-fsspec': 'fsspec',
  'python3-aiohttp': 'aiohttp',
};
const MARKER = /<!-- tested: python-example ([a-z0-9-]+) -->\n```python\n([\s\S]*?)\n```/g;

/** The marked Python examples of docs/subscribers.md, by name, exactly as a reader copies them. */
function pythonExamples(): Map<string, string> {
  const guide = readFileSync(join(packageRoot(), 'docs', 'subscribers.md'), 'utf8');
  return new Map([...guide.matchAll(MARKER)].map((match) => [match[1] ?? '', `${match[2] ?? ''}\n`]));
}

/** The modules of PACKAGES that Debian's Python cannot import. */
async function missingModules(): Promise<string[]> {
  const missing: string[] = [];
  for (const module of Object.values(PACKAGES)) {
    await run(PYTHON, ['-c', `import ${module}`]).catch(() => missing.push(module));
  }
  return missing;
}

const sample = (path: string): Buffer => readFileSync(join(bundledSampleDataDir(), path));

describe('the Python examples of docs/subscribers.md', function () {
  const secret = 'python-example-secret-0123456789';
  let gateway: TestGateway;
  let proxy: TamperingProxy;
  const bodies: Buffer[][] = [];
  let folder: string;

  before(async function () {
    // Installing pandas with apt takes a minute or two on a fresh machine; only the first run pays.
    this.timeout(15 * 60_000);
    const skip = (reason: string): never => {
      process.stderr.write(`    skipped: the Python examples need ${PYTHON} with ${Object.keys(PACKAGES).join(', ')}: ${reason}\n`);
      this.skip();
    };
    if (!existsSync(PYTHON)) skip(`${PYTHON} does not exist`);
    if ((await missingModules()).length > 0) {
      const unavailable = await installDebianPackages(Object.keys(PACKAGES));
      if (unavailable !== undefined) skip(unavailable);
      const stillMissing = await missingModules();
      if (stillMissing.length > 0) skip(`after apt-get install, ${PYTHON} still cannot import ${stillMissing.join(', ')}`);
    }
    gateway = await startGateway({
      store: new LocalFolderBlobStore(bundledSampleDataDir()),
      clients: [{ clientId: 'demo', secret, indexPath: 'indexes/demo.csv' }],
    });
    // Every exchange goes through a recording proxy, so each answer is checked against openapi.yaml.
    proxy = await startTamperingProxy(gateway.port, recordingBodies(bodies));
  });

  after(async function () {
    await proxy?.close();
    await gateway?.close();
  });

  beforeEach(function () {
    folder = mkdtempSync(join(tmpdir(), 'dfg-python-'));
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

  /** Runs one example as the guide shows it, in an empty folder, with the credentials in DFG_*. */
  async function runExample(name: string): Promise<string> {
    const code = pythonExamples().get(name);
    if (code === undefined) throw new Error(`docs/subscribers.md has no example marked <!-- tested: python-example ${name} -->`);
    const script = join(folder, `${name}.py`);
    writeFileSync(script, code);
    const { stdout } = await run(PYTHON, [script], {
      cwd: folder,
      // Debian's Python alone: no pyenv shims, no user site packages, no proxy for loopback.
      env: { PATH: '/usr/bin:/bin', HOME: folder, PYTHONNOUSERSITE: '1', NO_PROXY: '*', DFG_URL: proxy.url, DFG_CLIENT_ID: 'demo', DFG_CLIENT_SECRET: secret },
      timeout: deadline(60_000),
    });
    return stdout.trim();
  }

  it('are exactly the examples this suite checks', function () {
    expect([...pythonExamples().keys()].sort()).to.deep.equal(['fsspec-range', 'pandas-csv', 'requests-download']);
  });

  describe('requests-download', function () {
    it('saves the file byte for byte, streamed, with its ETag', async function () {
      const output = await runExample('requests-download');
      const expected = sample('rates/selic/history.parquet');
      expect(readFileSync(join(folder, 'history.parquet')).equals(expected)).to.equal(true);
      expect(output).to.match(new RegExp(`^${expected.length} "[^"]+"$`));
      expect(proxy.exchanges.map((exchange) => `${exchange.method} ${exchange.path.split('?')[0]} ${exchange.status}`)).to.deep.equal([
        'POST /oauth/token 200',
        'GET /download/SELIC_HISTORY 200',
      ]);
    });
  });

  describe('pandas-csv', function () {
    it('reads every row and column of the CSV file into a DataFrame', async function () {
      const output = await runExample('pandas-csv');
      const [header = '', ...rows] = sample('rates/di1/curve_daily.csv').toString('utf8').trim().split('\n');
      expect(output).to.equal(`${rows.length} ${header.trim()}`);
      expect(proxy.exchanges.map((exchange) => `${exchange.method} ${exchange.path} ${exchange.status}`)).to.deep.equal([
        'POST /oauth/token 200',
        'GET /download/DI1_CURVE_DAILY 200',
      ]);
    });
  });

  describe('fsspec-range', function () {
    it('reads the parquet footer with range requests, never the whole file', async function () {
      const output = await runExample('fsspec-range');
      const file = sample('b3/cotahist/COTAHIST_A2024.parquet');
      expect(output).to.equal(`${file.length} ${file.subarray(-4).toString('latin1')}`);
      const gets = proxy.downloads().filter((exchange) => exchange.method === 'GET');
      expect(gets, 'at least one GET of the file').to.not.have.length(0);
      for (const exchange of gets) {
        expect(exchange.requestHeaders['range'], 'every GET asks a range').to.match(/^bytes=\d+-\d+$/);
        expect(exchange.status).to.equal(206);
      }
      const sent = gets.reduce((total, exchange) => total + Number(exchange.responseHeaders['content-length']), 0);
      expect(sent, 'bytes sent for the footer').to.be.lessThan(file.length);
    });
  });
});
