import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ContainerClient } from '@azure/storage-blob';
import { expect } from 'chai';
import { bundledSampleDataDir, packageRoot } from '../../src/app/package-root.js';
import { runClientsCli } from '../../src/app/clients-command.js';
import { expectMatchesContract } from '../support/contract.js';
import { sendRaw } from '../support/gateway.js';

const run = promisify(execFile);
const READY = 'Ctrl-C stops the gateway and Azurite.';

/** `npm run start:azurite`'s command from package.json, with `node` as this very Node. */
function startAzuriteCommand(): string[] {
  const scripts = (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const [command, ...args] = (scripts['start:azurite'] ?? '').split(' ');
  expect(command, 'start:azurite runs node').to.equal('node');
  return [process.execPath, ...args];
}

/** The processes `pid` started, with their command lines (Linux: /proc/<pid>/task/<tid>/children). */
function childrenOf(pid: number): Array<{ readonly pid: number; readonly command: string }> {
  return readdirSync(`/proc/${pid}/task`)
    .flatMap((task) => readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number))
    .map((child) => ({ pid: child, command: readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').join(' ') }));
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Storage paths of the bundled sample data, as the script uploads them (its README aside). */
function samplePaths(): string[] {
  const root = bundledSampleDataDir();
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !(entry.parentPath === root && entry.name === 'README.md'))
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
    .sort();
}

describe('npm run start:azurite', function () {
  this.timeout(120_000);
  let script: ChildProcess;
  let output = '';
  let exited: Promise<number | NodeJS.Signals>;
  let started: number[];
  const line = (prefix: string): string => {
    const found = output.split('\n').find((text) => text.trimStart().startsWith(prefix));
    if (found === undefined) throw new Error(`no line starting with "${prefix}" in:\n${output}`);
    return found.trim();
  };

  before(async function () {
    const [node = '', ...args] = startAzuriteCommand();
    script = spawn(node, args, { cwd: packageRoot(), env: {
        PATH: process.env['PATH'] ?? '',
        PORT: '0',
        // The gateway reads the clients file again on every request, so a client registered while it
        // runs is known at the next one (not up to a second later: that raced the token request).
        CLIENTS_FILE_RECHECK_SECONDS: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'] });
    exited = new Promise((resolve) => script.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
    await new Promise<void>((resolve, reject) => {
      const onText = (text: Buffer): void => {
        output += text.toString('utf8');
        if (output.includes(READY)) resolve();
      };
      script.stdout?.on('data', onText);
      script.stderr?.on('data', onText);
      void exited.then((code) => reject(new Error(`start:azurite exited (${code}) before it was ready:\n${output}`)));
    });
    // tsx's esbuild service is a child too; it leaves when its parent does, and is not counted here.
    const children = childrenOf(script.pid ?? 0);
    started = ['azurite/dist/src/blob/main.js', 'src/app/main.ts'].flatMap((entry) => children.filter((child) => child.command.includes(entry)).map((child) => child.pid));

  });

  after(async function () {
    if (script.exitCode === null && script.signalCode === null) script.kill('SIGKILL');
    for (const pid of started ?? []) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
  });

  it('runs Azurite and the gateway, one child process each', function () {
    expect(started).to.have.length(2);
  });

  it('prints the Azurite connection string, whose container data holds the bundled sample data and demo index', async function () {
    const connectionString = /^AZURE_STORAGE_CONNECTION_STRING='([^']+)'$/.exec(line('AZURE_STORAGE_CONNECTION_STRING='))?.[1] ?? '';
    expect(connectionString).to.match(/^DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=[^;]+;BlobEndpoint=http:\/\/127\.0\.0\.1:\d+\/devstoreaccount1;$/);
    const uploaded: string[] = [];
    for await (const blob of new ContainerClient(connectionString, 'data').listBlobsFlat()) uploaded.push(blob.name);
    expect(uploaded.sort()).to.deep.equal(samplePaths());
    expect(uploaded).to.include('indexes/demo.csv');
  });

  it('prints a token curl line and a catalog curl line that work as pasted', async function () {
    const folder = mkdtempSync(join(tmpdir(), 'dfg-start-azurite-'));
    try {
      // Each curl also writes its response headers and body beside it, for the contract check below.
      const recordingCurl = 'curl() { local id="$BASHPID.$RANDOM"; printf \'%s\\n\' "$@" > "$DIR/$id.args"; command curl -D "$DIR/$id.headers" "$@" | tee "$DIR/$id.body"; }';
      const flow = [recordingCurl, line('TOKEN=$(curl '), line('curl -s -H "Authorization: Bearer $TOKEN" http://localhost:') ].join('\n');
      expect(flow).to.match(/\/catalog$/);
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', flow], { env: { PATH: process.env['PATH'] ?? '', DIR: folder } });
      const catalog = JSON.parse(stdout) as { clientId: string; count: number; files: Array<{ Symbol: string }> };
      const indexRows = readFileSync(join(bundledSampleDataDir(), 'indexes', 'demo.csv'), 'utf8').trim().split('\n').length - 1;
      expect(catalog).to.include({ clientId: 'demo', count: indexRows });
      expect(catalog.files.map((file) => file.Symbol)).to.include('SELIC_HISTORY');

      const exchanges = readdirSync(folder).filter((name) => name.endsWith('.args')).map((name) => name.slice(0, -'.args'.length));
      expect(exchanges, 'two curl calls: the token and the catalog').to.have.length(2);
      for (const id of exchanges) {
        const args = readFileSync(join(folder, `${id}.args`), 'utf8').split('\n');
        const url = new URL(args.find((arg) => arg.startsWith('http://')) ?? '');
        const [statusLine = '', ...headerLines] = readFileSync(join(folder, `${id}.headers`), 'utf8').trim().split('\r\n');
        const headers = Object.fromEntries(headerLines.map((header) => [header.slice(0, header.indexOf(':')).toLowerCase(), header.slice(header.indexOf(':') + 1).trim()]));
        await expectMatchesContract(args.includes('POST') ? 'POST' : 'GET', `${url.pathname}${url.search}`, {
          status: Number(statusLine.split(' ')[1]),
          headers,
          body: readFileSync(join(folder, `${id}.body`)),
        });
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('takes an index uploaded with the command of docs/operators.md, which the gateway serves to a client registered while it runs', async function () {
    const guide = readFileSync(join(packageRoot(), 'docs', 'operators.md'), 'utf8');
    const upload = /<!-- tested: azurite-upload -->\n```sh\n([\s\S]*?)\n```/.exec(guide)?.[1];
    expect(upload, 'the upload example of docs/operators.md').to.be.a('string');
    const connectionString = /^AZURE_STORAGE_CONNECTION_STRING='([^']+)'$/.exec(line('AZURE_STORAGE_CONNECTION_STRING='))?.[1] ?? '';
    const folder = mkdtempSync(join(tmpdir(), 'dfg-upload-'));
    try {
      const index = 'Symbol,ShortDescriptionPt,ShortDescription,FileName\r\nSELIC_HISTORY,Selic,Selic,rates/selic/history.parquet\r\n';
      writeFileSync(join(folder, 'acme.csv'), index);
      // The example names ./acme.csv, relative to where it runs: the repository, for @azure/storage-blob.
      const script = (upload ?? '').replace('./acme.csv', join(folder, 'acme.csv'));
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: packageRoot(), env: { PATH: process.env['PATH'] ?? '', AZURE_STORAGE_CONNECTION_STRING: connectionString } });
      expect(stdout.trim()).to.equal('uploaded indexes/acme.csv');
      const stored = await new ContainerClient(connectionString, 'data').getBlockBlobClient('indexes/acme.csv').downloadToBuffer();
      expect(stored.toString('utf8')).to.equal(index);

      // A client registered in the printed CLIENTS_FILE while the gateway runs, as the guide says.
      const clientsFile = /temporary CLIENTS_FILE: (\S+)\)/.exec(output)?.[1] ?? '';
      const secret = 'acme-secret-of-the-upload-test-0123';
      const status = await runClientsCli(['add', 'acme', '--secret', secret, '--index', 'indexes/acme.csv'], {
        env: { CLIENTS_FILE: clientsFile },
        stdout: { write: () => true },
        stderr: { write: () => true },
      });
      expect(status).to.equal(0);
      const port = Number(/http:\/\/localhost:(\d+)\/catalog/.exec(output)?.[1]);
      const token = await sendRaw(port, 'POST', '/oauth/token', { 'content-type': 'application/x-www-form-urlencoded' }, `grant_type=client_credentials&client_id=acme&client_secret=${secret}`);
      await expectMatchesContract('POST', '/oauth/token', token);
      const catalog = await sendRaw(port, 'GET', '/catalog', { authorization: `Bearer ${(JSON.parse(token.body.toString()) as { access_token: string }).access_token}` });
      await expectMatchesContract('GET', '/catalog', catalog);
      expect((JSON.parse(catalog.body.toString()) as { files: Array<{ Symbol: string }> }).files.map((file) => file.Symbol)).to.deep.equal(['SELIC_HISTORY']);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('stops the gateway and Azurite on Ctrl-C (SIGINT), then exits 0', async function () {
    script.kill('SIGINT');
    expect(await exited).to.equal(0);
    expect(started.filter(isRunning), 'processes still running').to.deep.equal([]);
  });
});
