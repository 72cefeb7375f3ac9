import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { deadline } from '../support/deadlines.js';

const projectRoot = new URL('../../', import.meta.url).pathname;

interface Started {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exit: Promise<number | null>;
}

/** Runs the real server entry point (`src/app/main.ts`) with exactly the given environment additions. */
function runMain(env: Record<string, string>): Started {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(PORT|DATA_DIR|CLIENTS_FILE|AZURE_STORAGE_|TOKEN_|DOWNLOAD_RATE|INDEX_REFRESH|STORAGE_TIMEOUT|LOG_LEVEL|TRUST_PROXY)/.test(name)),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/main.ts'], { cwd: projectRoot, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exit };
}

async function waitFor<T>(probe: () => T | undefined, what: string, timeoutMs = deadline(30_000)): Promise<T> {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > giveUpAt) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('npm start with no configuration (the embedded default)', function () {
  this.timeout(60_000);
  let server: Started;
  let base: string;
  let secret: string;

  before(async function () {
    server = runMain({ PORT: '0' });
    secret = await waitFor(() => /client_secret: (\S+)/.exec(server.stdout())?.[1], 'the demo secret');
    const port = await waitFor(() => /"port":(\d+)/.exec(server.stdout())?.[1], 'the listening port');
    base = `http://127.0.0.1:${port}`;
  });

  after(async function () {
    server.child.kill('SIGTERM');
    await server.exit;
  });

  it('prints the demo client credentials and ready-to-run curl commands', function () {
    expect(server.stdout()).to.match(/client_id:\s+demo/);
    expect(secret).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(server.stdout()).to.include(`curl -s -X POST http://localhost:`);
  });

  it('warns that the token signing key is random', function () {
    expect(server.stdout()).to.match(/TOKEN_SIGNING_KEY is not set/);
  });

  it('serves the bundled sample data to the demo client', async function () {
    const token = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'demo', client_secret: secret }),
    }).then(async (response) => ((await response.json()) as { access_token: string }).access_token);
    const authorization = { authorization: `Bearer ${token}` };

    const catalog = (await (await fetch(`${base}/catalog`, { headers: authorization })).json()) as { count: number; files: Array<{ Symbol: string; Description: string }> };
    expect(catalog.count).to.equal(catalog.files.length).and.to.be.greaterThan(3);
    expect(catalog.files.find((file) => file.Symbol === 'IBOV_COMPOSITION')?.Description).to.equal('Ibovespa composition');

    const parquet = await fetch(`${base}/derivatives/options/greeks%202024.parquet`, { headers: authorization });
    expect(parquet.status).to.equal(200);
    const bytes = Buffer.from(await parquet.arrayBuffer());
    expect(bytes.subarray(0, 4).toString()).to.equal('PAR1');
    expect(bytes.subarray(-4).toString()).to.equal('PAR1');

    expect((await fetch(`${base}/info/FX_PTAX`, { headers: authorization })).status).to.equal(404);
    expect((await fetch(`${base}/macro/ipca/monthly.csv`, { headers: authorization })).status).to.equal(403);
  });
});

describe('start-up with invalid configuration', function () {
  this.timeout(30_000);

  it('exits 1 with a message naming the variable', async function () {
    const server = runMain({ PORT: 'not-a-port' });
    expect(await server.exit).to.equal(1);
    expect(server.stderr()).to.match(/Configuration error: PORT: must be a whole number/);
  });
});
