import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { JsonClientRegistry } from '../../src/adapters/clients/json-client-registry.js';
import { verifySecret } from '../../src/adapters/clients/secret-hash.js';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** The real entry point, as `npm run clients` starts it, in a child process. */
async function clientsCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
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

  it('exits 2 when CLIENTS_FILE is not set', async () => {
    const env = { ...process.env };
    delete env['CLIENTS_FILE'];
    const result = await clientsCli(['list'], env);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include('CLIENTS_FILE is not set');
  });
});
