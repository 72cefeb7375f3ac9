import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { JsonClientRegistry } from '../../src/adapters/clients/json-client-registry.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { runClientsCli } from '../../src/app/clients-command.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';

const acme = { clientId: 'acme', secret: 'acme-secret-acme-secret' };
const later = { clientId: 'later', secret: 'later-secret-later-secret' };

async function add(clientsFile: string, client: { clientId: string; secret: string }): Promise<void> {
  const code = await runClientsCli(['add', client.clientId, '--secret', client.secret], {
    env: { CLIENTS_FILE: clientsFile },
    stdout: { write: () => true },
    stderr: { write: () => true },
  });
  expect(code).to.equal(0);
}

describe('a client registry file that becomes unreadable while the gateway serves', function () {
  let workDir: string;
  let clientsFile: string;
  let gateway: TestGateway;
  const problems: Error[] = [];
  let registry: JsonClientRegistry;

  before(async function () {
    workDir = await mkdtemp(join(tmpdir(), 'registry-resilience-'));
    clientsFile = join(workDir, 'clients.json');
    await add(clientsFile, acme);
    const store = new MemoryBlobStore();
    store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'a.csv' })]));
    store.put('indexes/later.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'a.csv' })]));
    store.put('a.csv', 'a\n');
    registry = new JsonClientRegistry(clientsFile, { onUnreadable: (error) => problems.push(error) });
    gateway = await startGateway({ store, registry, clients: [acme, later] });
  });

  after(async function () {
    await gateway?.close();
    if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
  });

  it('keeps serving the known clients from the last good version, and says so once', async function () {
    const token = await gateway.tokenFor(acme.clientId);
    await writeFile(clientsFile, '{"version": 1, "clients": {"acme": tru');

    const withToken = await gateway.request('GET', '/catalog', { headers: { authorization: `Bearer ${token}` } });
    expect(withToken.status).to.equal(200);
    expect(await gateway.tokenFor(acme.clientId)).to.be.a('string');
    expect(problems).to.have.length(1);
    expect(problems[0]?.message).to.match(/not valid JSON/);
    expect(registry.health).to.deep.include({ readable: false });
  });

  it('picks up the fixed file, with its new clients, as soon as it is written', async function () {
    await rm(clientsFile);
    await add(clientsFile, acme);
    await add(clientsFile, later);
    expect(await gateway.tokenFor(later.clientId)).to.be.a('string');
    expect(registry.health).to.deep.equal({ readable: true });
  });
});

describe('a client registry that was never readable', function () {
  it('answers token requests 500 internal_error rather than guessing', async function () {
    const workDir = await mkdtemp(join(tmpdir(), 'registry-broken-'));
    const clientsFile = join(workDir, 'clients.json');
    await writeFile(clientsFile, 'not json');
    const gateway = await startGateway({ store: new MemoryBlobStore(), registry: new JsonClientRegistry(clientsFile) });
    try {
      const response = await gateway.request('POST', '/oauth/token', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: acme.clientId, client_secret: acme.secret }).toString(),
      });
      expect(response.status).to.equal(500);
    } finally {
      await gateway.close();
      await rm(workDir, { recursive: true, force: true });
    }
  });
});
