import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { runClientsCli } from '../../src/app/clients-command.js';
import { quotaPeriodOf } from '../../src/domain/monthly-quota.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { startRedisServer, type RunningRedis } from '../support/redis.js';
import { startGatewayProcess, type GatewayProcess } from '../support/server-process.js';
import { deadline } from '../support/deadlines.js';

const KiB = 1024;
const client = { clientId: 'acme', secret: 'acme-secret-0123456789abcdef' };

async function tokenFor(gateway: GatewayProcess): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${gateway.port}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret }),
  });
  return ((await response.json()) as { access_token: string }).access_token;
}

async function download(gateway: GatewayProcess, token: string, headers: Record<string, string> = {}): Promise<{ status: number; bytes: number; code?: string; rateLimit: string | null }> {
  const response = await fetch(`http://127.0.0.1:${gateway.port}/download/FILE`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  const body = Buffer.from(await response.arrayBuffer());
  const code = response.status >= 400 ? (JSON.parse(body.toString('utf8')) as { code: string }).code : undefined;
  return { status: response.status, bytes: body.length, ...(code !== undefined && { code }), rateLimit: response.headers.get('ratelimit') };
}

/** Resolves once the gateway's `/ready` answers 200 (Redis answering again), within 15 s. */
async function ready(gateway: GatewayProcess): Promise<void> {
  const giveUpAt = Date.now() + deadline(15_000);
  while ((await fetch(`http://127.0.0.1:${gateway.port}/ready`)).status !== 200) {
    if (Date.now() > giveUpAt) throw new Error(`the gateway was not ready again within ${deadline(15_000)} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Two real gateway processes (src/app/main.ts) with REDIS_URL on a redis-server of the test's own
 * (nothing kept on disk) and one CLIENTS_FILE, so one default journal folder beside it.
 */
describe('two gateway processes with REDIS_URL, when Redis restarts without persistence mid-month', function () {
  this.timeout(90_000);
  let workDir: string;
  let redis: RunningRedis;
  const gateways: GatewayProcess[] = [];

  before(async function () {
    workDir = await mkdtemp(join(tmpdir(), 'dfg-quota-journal-e2e-'));
    const dataDir = join(workDir, 'data');
    await mkdir(join(dataDir, 'indexes'), { recursive: true });
    await writeFile(join(dataDir, 'indexes', `${client.clientId}.csv`), buildIndexCsv([buildIndexRow({ Symbol: 'FILE', FileName: 'file.bin' })]));
    await writeFile(join(dataDir, 'file.bin'), Buffer.alloc(400 * KiB, 0x61));
    const clientsFile = join(workDir, 'clients.json');
    const code = await runClientsCli(['add', client.clientId, '--secret', client.secret, '--monthly-bytes', '1MiB'], {
      env: { CLIENTS_FILE: clientsFile },
      stdout: { write: () => true },
      stderr: { write: () => true },
    });
    expect(code).to.equal(0);
    redis = await startRedisServer();
    const env = {
      DATA_DIR: dataDir,
      CLIENTS_FILE: clientsFile,
      REDIS_URL: redis.url,
      TOKEN_SIGNING_KEY: 'quota-journal-test-signing-key-0123456789',
      READY_CACHE_SECONDS: '0',
      RATE_LIMIT_ON_STORE_ERROR: 'deny',
    };
    gateways.push(await startGatewayProcess(env), await startGatewayProcess(env));
  });

  after(async function () {
    for (const gateway of gateways) await gateway.stop();
    await redis?.stop();
    if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
  });

  it('keeps the month\'s count: the download that would pass the 1 MiB quota is refused with 429, and the instance that rebuilt logs it', async function () {
    const [a, b] = gateways as [GatewayProcess, GatewayProcess];
    const [tokenA, tokenB] = [await tokenFor(a), await tokenFor(b)];
    expect((await download(a, tokenA)).status).to.equal(200);
    expect((await download(b, tokenB)).status).to.equal(200);
    expect((await readdir(join(workDir, 'quota-journal'))).filter((name) => name.endsWith('.jsonl'))).to.have.length(2);

    await redis.stop();
    redis = await startRedisServer(redis.port);
    await ready(a);
    await ready(b);

    const rebuilt = b.nextLogLine(`quota ledger reset detected: rebuilt 1 clients of ${quotaPeriodOf(new Date()).key} from the journal`);
    const refused = await download(b, tokenB);
    expect(refused).to.include({ status: 429, code: 'quota_exceeded' });
    expect(await rebuilt).to.include({ level: 40, clients: 1 });
    // What is left after the two downloads before the restart: 1 MiB - 800 KiB.
    const range = await download(a, tokenA, { range: 'bytes=0-99' });
    expect(range.status).to.equal(206);
    expect(range.rateLimit).to.include(`"monthly-bytes";r=${1024 * KiB - 800 * KiB - 100}`);
  });
});
