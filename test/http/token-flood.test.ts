import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { JsonClientRegistry } from '../../src/adapters/clients/json-client-registry.js';
import { runClientsCli } from '../../src/app/clients-command.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { localFolderFixture, type BlobStoreFixture } from '../support/store-fixtures.js';

/*
 * Token issuance is deliberately expensive (scrypt), and scrypt runs on Node's shared thread pool,
 * which the file-system calls of every other request need too (the registry file's stat, a local
 * folder's reads). Secret verifications are therefore bounded (SECRET_HASH_CONCURRENCY), so that a
 * client asking tokens as fast as it can only queues behind itself.
 */

const flooder = { clientId: 'flooder', secret: 'flooder-secret-flooder-secret' };
const quiet = { clientId: 'quiet', secret: 'quiet-secret-quiet-secret-quiet' };
const samples = 25;
const parallelFlooders = 8;

async function median(measure: () => Promise<void>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < samples; i += 1) {
    const start = process.hrtime.bigint();
    await measure();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? Number.NaN;
}

describe('a token flood by one client (the real registry file and a local folder, on the thread pool)', function () {
  this.timeout(60_000);
  let workDir: string;
  let fixture: BlobStoreFixture;
  let gateway: TestGateway;

  before(async function () {
    workDir = await mkdtemp(join(tmpdir(), 'token-flood-'));
    const clientsFile = join(workDir, 'clients.json');
    for (const client of [flooder, quiet]) {
      const code = await runClientsCli(['add', client.clientId, '--secret', client.secret], {
        env: { CLIENTS_FILE: clientsFile },
        stdout: { write: () => true },
        stderr: { write: () => true },
      });
      expect(code).to.equal(0);
    }
    fixture = await localFolderFixture();
    await fixture.put('indexes/quiet.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'data/a.csv' })]));
    await fixture.put('data/a.csv', 'a,b\n1,2\n');
    gateway = await startGateway({
      store: fixture.store,
      registry: new JsonClientRegistry(clientsFile),
      clients: [flooder, quiet],
      // Only the flood's pressure on the server is measured here, not the per-client token budget.
      env: { TOKEN_ISSUE_LIMIT: '1000000' },
    });
  });

  after(async function () {
    await gateway?.close();
    await fixture?.cleanup();
    if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
  });

  it("leaves another client's GET /catalog median within 3x of its quiet value (one run, a ratio)", async function () {
    const catalog = async (): Promise<void> => {
      const response = await gateway.get(quiet.clientId, '/catalog');
      expect(response.status).to.equal(200);
    };
    await catalog();
    const quietMedian = await median(catalog);

    let flooding = true;
    let issued = 0;
    const flood = Array.from({ length: parallelFlooders }, async () => {
      while (flooding) {
        await gateway.tokenFor(flooder.clientId);
        issued += 1;
      }
    });
    // Measured only once the flood is in full swing: every flooder has had a token.
    while (issued < parallelFlooders) await gateway.tokenFor(flooder.clientId);
    const floodMedian = await median(catalog);
    flooding = false;
    await Promise.all(flood);

    const ratio = floodMedian / quietMedian;
    this.test!.title += ` [quiet ${quietMedian.toFixed(1)} ms, flooded ${floodMedian.toFixed(1)} ms, ${issued} tokens issued meanwhile]`;
    expect(ratio, `flooded / quiet median of GET /catalog`).to.be.below(3);
  });
});
