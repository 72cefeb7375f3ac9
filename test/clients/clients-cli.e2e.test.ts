import { expect } from 'chai';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { JsonClientRegistry } from '../../src/adapters/clients/json-client-registry.js';
import { verifySecret } from '../../src/adapters/clients/secret-hash.js';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The real entry point, as `npm run clients` starts it, in a child process. */
async function clientsCli(args: string[], env: NodeJS.ProcessEnv, stdin?: string): Promise<CliResult> {
  if (stdin !== undefined) return clientsCliWithInput(args, env, stdin);
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/app/clients-cli.ts', ...args], {
      cwd: repoRoot,
      env,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** The same, with `input` on its standard input. */
function clientsCliWithInput(args: string[], env: NodeJS.ProcessEnv, input: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/clients-cli.ts', ...args], { cwd: repoRoot, env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe('clients CLI process (src/app/clients-cli.ts)', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'clients-cli-e2e-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('add x prints a client_secret line whose secret verifies against the registry file, exit 0', async () => {
    const clientsFile = join(dir, 'clients.json');
    const result = await clientsCli(['add', 'x'], { ...process.env, CLIENTS_FILE: clientsFile });
    expect(result.code).to.equal(0);
    const secret = /^client_secret: (\S+)$/m.exec(result.stdout)?.[1];
    expect(secret).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(result.stdout).to.match(/^client_id: x$/m);
    const client = await new JsonClientRegistry(clientsFile).find('x');
    expect(await verifySecret(secret ?? '', client?.secretHash ?? '')).to.equal(true);
  });

  describe('when many runs edit the registry at once (a lock around each read-modify-write)', function () {
    this.timeout(120_000);

    it('keeps every one of 20 concurrent adds: 20 clients, each with the secret it printed', async () => {
      const clientsFile = join(dir, 'clients.json');
      const ids = Array.from({ length: 20 }, (_, i) => `client-${String(i).padStart(2, '0')}`);
      const results = await Promise.all(ids.map((id) => clientsCli(['add', id], { ...process.env, CLIENTS_FILE: clientsFile })));
      expect(results.map((result) => result.code)).to.deep.equal(ids.map(() => 0));
      const registry = new JsonClientRegistry(clientsFile);
      expect(Object.keys((await registry.load()).clients).sort()).to.deep.equal(ids);
      for (const [index, id] of ids.entries()) {
        const secret = /^client_secret: (\S+)$/m.exec(results[index]?.stdout ?? '')?.[1] ?? '';
        expect(await verifySecret(secret, (await registry.find(id))?.secretHash ?? ''), id).to.equal(true);
      }
      expect((await stat(clientsFile)).mode & 0o777).to.equal(0o600);
    });

    it('lets exactly one of 5 concurrent adds of the same id succeed; the others exit 1', async () => {
      const clientsFile = join(dir, 'clients.json');
      const results = await Promise.all(Array.from({ length: 5 }, () => clientsCli(['add', 'same'], { ...process.env, CLIENTS_FILE: clientsFile })));
      expect(results.map((result) => result.code).sort()).to.deep.equal([0, 1, 1, 1, 1]);
      for (const refused of results.filter((result) => result.code === 1)) expect(refused.stderr).to.include('already exists');
      const winner = results.find((result) => result.code === 0);
      const secret = /^client_secret: (\S+)$/m.exec(winner?.stdout ?? '')?.[1] ?? '';
      const stored = await new JsonClientRegistry(clientsFile).find('same');
      expect(await verifySecret(secret, stored?.secretHash ?? '')).to.equal(true);
    });
  });

  describe('--secret-stdin', () => {
    it('imports the secret read from standard input, and never prints it', async () => {
      const clientsFile = join(dir, 'clients.json');
      const secret = 'imported-secret-from-a-vault-0123456789';
      const result = await clientsCli(['add', 'vaulted', '--secret-stdin'], { ...process.env, CLIENTS_FILE: clientsFile }, `${secret}\n`);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout + result.stderr).to.not.include(secret);
      const stored = await new JsonClientRegistry(clientsFile).find('vaulted');
      expect(await verifySecret(secret, stored?.secretHash ?? '')).to.equal(true);
      expect(await readFile(clientsFile, 'utf8')).to.not.include(secret);
    });

    it('rotates to a secret read from standard input', async () => {
      const clientsFile = join(dir, 'clients.json');
      const env = { ...process.env, CLIENTS_FILE: clientsFile };
      expect((await clientsCli(['add', 'vaulted'], env)).code).to.equal(0);
      const secret = 'rotated-secret-from-a-vault-0123456789';
      expect((await clientsCli(['rotate', 'vaulted', '--secret-stdin'], env, `${secret}\r\n`)).code).to.equal(0);
      const stored = await new JsonClientRegistry(clientsFile).find('vaulted');
      expect(await verifySecret(secret, stored?.secretHash ?? '')).to.equal(true);
    });

    it('refuses --secret together with --secret-stdin with exit 2', async () => {
      const result = await clientsCli(['add', 'x', '--secret', 'a'.repeat(20), '--secret-stdin'], { ...process.env, CLIENTS_FILE: join(dir, 'clients.json') }, 'b'.repeat(20));
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('not both');
    });
  });

  it('exits 2 when CLIENTS_FILE is not set', async () => {
    const env = { ...process.env };
    delete env['CLIENTS_FILE'];
    const result = await clientsCli(['list'], env);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include('CLIENTS_FILE is not set');
  });
});
