import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { packageRoot } from '../../src/app/package-root.js';
import { publishedFiles, startMirrorGateway, type MirrorGateway } from '../support/mirror-gateway.js';

/*
 * A subscriber has no copy of the gateway's repository: `npm run package:client` writes the client
 * as an npm tarball, and `npm install -g <tarball>` must give a working `dfg` on its own, far from
 * this repository's node_modules (every runtime dependency declared, `files` and `bin` right).
 */

const run = promisify(execFile);

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function outcomeOf(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(command, [...args], { ...options, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('npm run package:client (dfg without the gateway\'s repository)', function () {
  // tsc, npm pack, then npm install from the registry (or its cache).
  this.timeout(600_000);
  const files = publishedFiles(3, { size: 2_000 });
  let scratch: string;
  let prefix: string;
  let version: string;
  let mirror: MirrorGateway;

  before(async function () {
    scratch = await mkdtemp(join(tmpdir(), 'dfg-client-package-'));
    prefix = join(scratch, 'prefix');
    version = (JSON.parse(await readFile(join(packageRoot(), 'client', 'package.json'), 'utf8')) as { version: string }).version;
    const tarballName = `data-file-gateway-client-${version}.tgz`;
    await run('npm', ['run', 'package:client', '--silent'], { cwd: packageRoot(), maxBuffer: 64 * 1024 * 1024 });
    // Out of the repository at once: the test leaves no file behind there.
    const tarball = join(scratch, tarballName);
    await rename(join(packageRoot(), tarballName), tarball);
    await run('npm', ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', tarball], { cwd: scratch, maxBuffer: 64 * 1024 * 1024 });
    mirror = await startMirrorGateway(files);
  });

  after(async function () {
    await mirror?.close();
    await rm(scratch, { recursive: true, force: true });
  });

  const dfg = (args: readonly string[], env: Record<string, string> = {}): Promise<Outcome> =>
    outcomeOf(join(prefix, 'bin', 'dfg'), args, { cwd: scratch, env: { PATH: process.env['PATH'] ?? '', HOME: scratch, ...env } });

  it('when installed globally into an empty prefix, dfg --help lists the commands and exits 0, and --version is the package\'s', async function () {
    const help = await dfg(['--help']);
    const versionOutput = await dfg(['--version']);

    expect(help.code, help.stderr).to.equal(0);
    for (const text of ['catalog', 'download', 'sync', 'Exit codes']) expect(help.stdout).to.contain(text);
    expect(versionOutput.stdout.trim()).to.equal(version);
  });

  it('when installed globally, dfg catalog reads a gateway\'s catalog', async function () {
    const result = await dfg(['catalog', '--json'], { DFG_URL: mirror.gateway.baseUrl, DFG_CLIENT_ID: mirror.clientId, DFG_CLIENT_SECRET: mirror.secret });

    expect(result.code, result.stderr).to.equal(0);
    const catalog = JSON.parse(result.stdout) as { files: Array<{ Symbol: string; FileName: string }> };
    expect(catalog.files.map((file) => file.FileName).sort()).to.deep.equal(files.map((file) => file.path).sort());
  });
});
