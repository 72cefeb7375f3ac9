import { expect } from 'chai';
import { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { StorageUnavailable } from '../../src/domain/errors.js';
import type { BlobContent, BlobProperties, BlobReadOptions, BlobStore, BlobSummary, ClientRecord, ClientRegistry } from '../../src/domain/ports.js';
import { hashTestSecret, startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody } from '../support/json.js';

/** Storage that fails for every path under `down-busy/` (retryable) and `down-broken/` (not retryable). */
class FailingPathsStore implements BlobStore {
  constructor(private readonly inner: MemoryBlobStore) {}

  private check(path: string): void {
    if (path.startsWith('down-busy/')) throw new StorageUnavailable('storage is throttling', { retryable: true });
    if (path.startsWith('down-broken/')) throw new StorageUnavailable('storage refused', { retryable: false });
  }

  async getProperties(path: string): Promise<BlobProperties | undefined> {
    this.check(path);
    return this.inner.getProperties(path);
  }

  async *list(prefix: string): AsyncIterable<BlobSummary> {
    this.check(prefix);
    yield* this.inner.list(prefix);
  }

  async existing(paths: readonly string[]): Promise<ReadonlyMap<string, BlobSummary>> {
    paths.forEach((path) => this.check(path));
    return this.inner.existing(paths);
  }

  async read(path: string, options: BlobReadOptions): Promise<BlobContent> {
    this.check(path);
    return this.inner.read(path, options);
  }

  probe(): Promise<void> {
    return this.inner.probe();
  }
}


/**
 * The failure statuses every operation declares, produced through the real app: a client whose
 * index is malformed (500), whose index or files sit on failing storage (502, 503), and requests
 * the contract refuses (400).
 */
describe('failure statuses of every operation', function () {
  let gateway: TestGateway;
  const operations = [
    { name: 'GET /catalog', path: '/catalog', method: 'GET', needsFile: false },
    { name: 'GET /list', path: '/list', method: 'GET', needsFile: false },
    { name: 'GET /count', path: '/count', method: 'GET', needsFile: false },
    { name: 'GET /info/:symbol', path: '/info/FILE', method: 'GET', needsFile: true },
    { name: 'GET /download/:symbol', path: '/download/FILE', method: 'GET', needsFile: true },
    { name: 'HEAD /download/:symbol', path: '/download/FILE', method: 'HEAD', needsFile: true },
    { name: 'GET /<path>', path: '/files/file.csv', method: 'GET', needsFile: true },
    { name: 'HEAD /<path>', path: '/files/file.csv', method: 'HEAD', needsFile: true },
    { name: 'GET /portal/link/:symbol', path: '/portal/link/FILE', method: 'GET', needsFile: true },
  ];

  before(async function () {
    const memory = new MemoryBlobStore();
    memory.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'FILE', FileName: 'files/file.csv' })]));
    memory.put('indexes/broken.csv', 'Ticker\r\nFILE\r\n');
    for (const folder of ['down-busy', 'down-broken']) {
      memory.put(`indexes/${folder}-files.csv`, buildIndexCsv([buildIndexRow({ Symbol: 'FILE', FileName: `${folder}/file.csv` })]));
    }
    memory.put('files/file.csv', 'a,b\n1,2\n');
    gateway = await startGateway({
      store: new FailingPathsStore(memory),
      clients: [
        { clientId: 'acme', secret: 'acme-secret-acme-secret' },
        { clientId: 'broken', secret: 'broken-secret-broken' },
        { clientId: 'busy-index', secret: 'busy-secret-busy-secret', indexPath: 'down-busy/index.csv' },
        { clientId: 'broken-index', secret: 'broken-secret-broken-x', indexPath: 'down-broken/index.csv' },
        { clientId: 'busy-files', secret: 'busy-files-secret-busy', indexPath: 'indexes/down-busy-files.csv' },
        { clientId: 'broken-files', secret: 'broken-files-secret-x', indexPath: 'indexes/down-broken-files.csv' },
      ],
    });
  });

  after(async function () {
    await gateway.close();
  });

  for (const operation of operations) {
    describe(operation.name, function () {
      const rewrite = (path: string, folder: string) => (path.startsWith('/files/') ? path.replace('/files/', `/${folder}/`) : path);

      it('responds 500 with a JSON error when the caller index is malformed', async function () {
        const response = await gateway.get('broken', operation.path, {}, operation.method);
        expect(response.status).to.equal(500);
        if (operation.method === 'GET') expect(jsonOf(response).error).to.equal('Internal error');
      });

      it('responds 503 with Retry-After when storage is busy', async function () {
        const client = operation.needsFile ? 'busy-files' : 'busy-index';
        const response = await gateway.get(client, rewrite(operation.path, 'down-busy'), {}, operation.method);
        expect(response.status).to.equal(503);
        expect(Number(response.headers['retry-after'])).to.be.greaterThan(0);
      });

      it('responds 502 when storage fails', async function () {
        const client = operation.needsFile ? 'broken-files' : 'broken-index';
        const response = await gateway.get(client, rewrite(operation.path, 'down-broken'), {}, operation.method);
        expect(response.status).to.equal(502);
        if (operation.method === 'GET') expect(jsonOf(response).error).to.equal('Bad gateway');
      });

      it('responds 400 to a request the contract refuses', async function () {
        const refused = operation.path.startsWith('/files/')
          ? '/files/..%2f..%2fsecret'
          : operation.path.startsWith('/list')
            ? '/list?limit=0'
            : operation.path.startsWith('/info') || operation.path.startsWith('/download')
              ? `${operation.path.split('/').slice(0, 2).join('/')}/${'X'.repeat(300)}`
              : `${operation.path}?unexpected=1`;
        const response = await gateway.get('acme', refused, {}, operation.method);
        expect(response.status).to.equal(400);
        if (operation.method === 'GET') expect(jsonOf(response).error).to.equal('Bad request');
      });
    });
  }

  describe('HEAD /download and HEAD /<path> without a token', function () {
    it('responds 401 with a challenge and no body', async function () {
      for (const path of ['/download/FILE', '/files/file.csv']) {
        const response = await gateway.request('HEAD', path);
        expect(response.status).to.equal(401);
        expect(response.headers['www-authenticate']).to.match(/^Bearer realm=/);
      }
    });
  });
});

describe('POST /oauth/token when the client registry fails', function () {
  /** A registry whose backing file cannot be read right now. */
  class FailingRegistry implements ClientRegistry {
    constructor(private readonly failure: Error) {}
    async find(): Promise<ClientRecord | undefined> {
      throw this.failure;
    }
    async findByAccessKey(): Promise<ClientRecord | undefined> {
      throw this.failure;
    }
    async all(): Promise<readonly ClientRecord[]> {
      throw this.failure;
    }
    async problem(): Promise<string | undefined> {
      return this.failure.message;
    }
  }
  const body = 'grant_type=client_credentials&client_id=acme&client_secret=whatever-secret-x';
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };

  it('responds 500 with a generic JSON error and no detail of the cause', async function () {
    const gateway = await startGateway({ store: new MemoryBlobStore(), registry: new FailingRegistry(new Error('clients.json: Unexpected token')) });
    try {
      const response = await gateway.request('POST', '/oauth/token', { headers, body });
      expect(response.status).to.equal(500);
      expect(response.body.toString()).to.not.include('clients.json');
    } finally {
      await gateway.close();
    }
  });

  it('responds 503 with Retry-After when the registry is temporarily unavailable', async function () {
    const gateway = await startGateway({
      store: new MemoryBlobStore(),
      registry: new FailingRegistry(new StorageUnavailable('registry storage busy', { retryable: true })),
    });
    try {
      const response = await gateway.request('POST', '/oauth/token', { headers, body });
      expect(response.status).to.equal(503);
      expect(response.headers['retry-after']).to.match(/^\d+$/);
    } finally {
      await gateway.close();
    }
  });
});

describe('unauthenticated meta endpoints', function () {
  let gateway: TestGateway;
  before(async function () {
    gateway = await startGateway({ store: new MemoryBlobStore(), registry: new InMemoryClientRegistry([{ clientId: 'x', secretHash: await hashTestSecret('x-secret-x-secret'), indexPath: 'i.csv', enabled: true }]) });
  });
  after(async function () {
    await gateway.close();
  });

  it('GET /health responds 200 {status: "ok"} without a token', async function () {
    const response = await gateway.request('GET', '/health');
    expect(response.status).to.equal(200);
    expect(jsonOf(response)).to.deep.equal({ status: 'ok' });
  });

  it('GET /openapi.yaml serves the contract itself without a token', async function () {
    const response = await gateway.request('GET', '/openapi.yaml');
    expect(response.status).to.equal(200);
    expect(String(response.headers['content-type'])).to.match(/^application\/yaml/);
    expect(response.body.toString()).to.match(/^openapi: 3\.0\.3/m);
  });

  it('answers 404 with a JSON error for an unknown API route', async function () {
    const response = await gateway.request('GET', '/download');
    expect(response.status).to.equal(404);
    expect(jsonOf(response)).to.include({ error: 'Not found' });
  });

  it('answers 405 with Allow for a known route and another method', async function () {
    const response = await gateway.request('DELETE', '/catalog');
    expect(response.status).to.equal(405);
    expect(response.headers['allow']).to.equal('GET, HEAD');
  });
});

describe('GET and HEAD /<path> decisions', function () {
  let gateway: TestGateway;
  let etag: string;
  const path = '/files/file.csv';

  before(async function () {
    const store = new MemoryBlobStore();
    const others = Array.from({ length: 5 }, (_, i) => `files/other-${i}.csv`);
    store.put('indexes/acme.csv', buildIndexCsv([
      buildIndexRow({ Symbol: 'FILE', FileName: 'files/file.csv' }),
      ...others.map((fileName, i) => buildIndexRow({ Symbol: `OTHER${i}`, FileName: fileName })),
    ]));
    store.put('files/file.csv', 'a,b\n1,2\n');
    for (const fileName of others) store.put(fileName, 'x,y\n3,4\n');
    gateway = await startGateway({
      store,
      clients: [{ clientId: 'acme', secret: 'acme-secret-acme-secret' }],
      env: { DOWNLOAD_RATE_LIMIT: '4' },
    });
    etag = String((await gateway.get('acme', path, {}, 'HEAD')).headers['etag']);
  });

  after(async function () {
    await gateway.close();
  });

  it('GET responds 412 when If-Match does not match', async function () {
    expect((await gateway.get('acme', path, { 'if-match': '"other"' })).status).to.equal(412);
  });

  it('HEAD responds 412 when If-Match does not match, with no body', async function () {
    expect((await gateway.get('acme', path, { 'if-match': '"other"' }, 'HEAD')).status).to.equal(412);
  });

  it('GET responds 416 with Content-Range for a range past the end', async function () {
    const response = await gateway.get('acme', path, { range: 'bytes=100-' });
    expect(response.status).to.equal(416);
    expect(response.headers['content-range']).to.equal('bytes */8');
  });

  it('HEAD responds 304 when If-None-Match matches', async function () {
    const response = await gateway.get('acme', path, { 'if-none-match': etag }, 'HEAD');
    expect(response.status).to.equal(304);
    expect(response.headers['etag']).to.equal(etag);
  });

  it('HEAD responds 429 once the download budget is spent, still answering 304 to revalidation', async function () {
    let last = 0;
    // One download per file version: the budget is spent on different files.
    for (let i = 0; i < 5 && last !== 429; i += 1) last = (await gateway.get('acme', `/files/other-${i}.csv`, {}, 'HEAD')).status;
    expect(last).to.equal(429);
    expect((await gateway.get('acme', path, { 'if-none-match': etag }, 'HEAD')).status).to.equal(304);
  });
});

describe('a client registered with an index path that is not a storage path (a hand-edited registry)', function () {
  it('answers 500 index_malformed, the operator\'s fault, never 400 blamed on the subscriber', async function () {
    const gateway = await startGateway({
      store: new MemoryBlobStore(),
      clients: [{ clientId: 'typo', secret: 'typo-secret-typo-secret', indexPath: 'indexes/100%.csv' }],
    });
    try {
      const response = await gateway.get('typo', '/catalog');
      expect(response.status).to.equal(500);
      expect(jsonOf<ErrorBody>(response).code).to.equal('index_malformed');
      expect(jsonOf<ErrorBody>(response).message).to.match(/index path registered for this client/);
    } finally {
      await gateway.close();
    }
  });
});
