import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { JsonClientRegistry } from '../../src/adapters/clients/json-client-registry.js';
import { ScryptSecretHasher } from '../../src/adapters/clients/secret-hash.js';
import type { SecretHasher } from '../../src/domain/ports.js';
import { runClientsCli } from '../../src/app/clients-command.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { localFolderFixture, type BlobStoreFixture } from '../support/store-fixtures.js';

/*
 * Token issuance is deliberately expensive (scrypt, at the production cost here: the clients are
 * added by the real CLI), and would compete with the file-system calls of every other request (the
 * registry file's stat, a local folder's reads). Secret verifications are therefore bounded
 * (SECRET_HASH_CONCURRENCY) and run on threads of their own, so that a client asking tokens as
 * fast as it can only queues behind itself. Counted, not timed: the verifications running at once
 * and those a quiet client's requests cause. The timing of the same flood (another client's
 * median time, flooded against quiet) is in `npm run bench -- --only ratios`.
 */

const flooder = { clientId: 'flooder', secret: 'flooder-secret-flooder-secret' };
const quiet = { clientId: 'quiet', secret: 'quiet-secret-quiet-secret-quiet' };
const samples = 25;
const parallelFlooders = 8;
/** SECRET_HASH_CONCURRENCY of the gateway under test. */
const concurrency = 2;

/** The real hasher, with the verifications running at once counted (now and at most). */
class CountingHasher implements SecretHasher {
  running = 0;
  mostAtOnce = 0;
  verifications = 0;
  readonly #hasher: ScryptSecretHasher;

  constructor(hasher: ScryptSecretHasher) {
    this.#hasher = hasher;
  }

  async verify(secret: string, hash: string): Promise<boolean> {
    this.running += 1;
    this.verifications += 1;
    this.mostAtOnce = Math.max(this.mostAtOnce, this.running);
    try {
      return await this.#hasher.verify(secret, hash);
    } finally {
      this.running -= 1;
    }
  }

  decoyHash(): Promise<string> {
    return this.#hasher.decoyHash();
  }

  fingerprint(hash: string): string {
    return this.#hasher.fingerprint(hash);
  }
}

describe('a token flood by one client (the real registry file and a local folder, on the thread pool)', function () {
  this.timeout(60_000);
  let workDir: string;
  let fixture: BlobStoreFixture;
  let gateway: TestGateway;
  let hasher: CountingHasher;
  let scrypt: ScryptSecretHasher;

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
    scrypt = new ScryptSecretHasher({ concurrency });
    hasher = new CountingHasher(scrypt);
    gateway = await startGateway({
      store: fixture.store,
      secrets: hasher,
      registry: new JsonClientRegistry(clientsFile),
      clients: [flooder, quiet],
      // Only the flood's pressure on the server is measured here, not the per-client token budget.
      env: { TOKEN_ISSUE_LIMIT: '1000000', SECRET_HASH_CONCURRENCY: String(concurrency) },
    });
  });

  after(async function () {
    await gateway?.close();
    await scrypt?.close();
    await fixture?.cleanup();
    if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
  });

  it(`runs at most SECRET_HASH_CONCURRENCY verifications at once and none for another client's ${samples} GET /catalog, answered 200 meanwhile (counted)`, async function () {
    const catalog = async (): Promise<void> => {
      const response = await gateway.get(quiet.clientId, '/catalog');
      expect(response.status).to.equal(200);
    };
    await catalog();
    const verificationsBefore = hasher.verifications;

    let flooding = true;
    let tokenRequests = 0;
    const askToken = async (): Promise<void> => {
      tokenRequests += 1;
      await gateway.tokenFor(flooder.clientId);
    };
    const flood = Array.from({ length: parallelFlooders }, async () => {
      while (flooding) await askToken();
    });
    // Counted only once the flood is in full swing: every flooder has asked a token.
    while (tokenRequests < 2 * parallelFlooders) await askToken();
    let answeredDuringFlood = 0;
    for (let i = 0; i < samples; i += 1) {
      const asked = tokenRequests;
      await catalog();
      if (hasher.running > 0 || tokenRequests > asked) answeredDuringFlood += 1;
    }
    flooding = false;
    await Promise.all(flood);

    this.test!.title += ` [${tokenRequests} tokens asked during the flood, at most ${hasher.mostAtOnce} verifications at once]`;
    expect(answeredDuringFlood, 'quiet requests answered while the flood was running').to.be.greaterThan(0);
    expect(hasher.mostAtOnce, 'verifications running at once').to.be.at.most(concurrency);
    // Every verification is one of the flooder's token requests: the quiet requests caused none.
    expect(hasher.verifications - verificationsBefore, 'verifications during the flood').to.equal(tokenRequests);
  });
});
