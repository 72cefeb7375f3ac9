import { expect } from 'chai';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { FileCatalog } from '../../src/domain/file-catalog.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { storeFixtures, type BlobStoreFixture } from '../support/store-fixtures.js';
import { jsonOf } from '../support/json.js';

for (const { name, create } of storeFixtures) {
  describe(`catalog endpoints on the ${name}`, function () {
    let fixture: BlobStoreFixture;
    let gateway: TestGateway;

    before(async function () {
      fixture = await create('catalog-endpoints');
      await fixture.put(
        'indexes/acme.csv',
        buildIndexCsv([
          buildIndexRow({ Symbol: 'QUOTES_2024', FileName: 'b3/quotes 2024.parquet' }),
          buildIndexRow({ Symbol: 'CURVE', ShortDescriptionPt: '', ShortDescription: 'DI1 curve', FileName: 'rates/curve.csv' }),
          buildIndexRow({ Symbol: 'MISSING', FileName: 'rates/missing.csv' }),
        ]),
      );
      await fixture.put('b3/quotes 2024.parquet', 'PAR1....PAR1', { contentType: 'application/vnd.apache.parquet', metadata: { source: 'b3' } });
      await fixture.put('rates/curve.csv', 'date,rate\n2024-01-02,10.5\n');
      await fixture.put('rates/unlisted.csv', 'not in the index');
      gateway = await startGateway({
        store: fixture.store,
        clients: [
          { clientId: 'acme', secret: 'acme-secret-acme-secret' },
          { clientId: 'nobody', secret: 'nobody-secret-nobody' },
        ],
      });
    });

    after(async function () {
      await gateway?.close();
      await fixture?.cleanup();
    });

    describe('GET /catalog', function () {
      it('lists every index row in order, with the Portuguese description or its fallback', async function () {
        const response = await gateway.get('acme', '/catalog');
        expect(response.status).to.equal(200);
        const { changesCursor, ...catalog } = jsonOf(response);
        expect(changesCursor, 'the change feed’s position').to.be.a('string');
        expect(catalog).to.deep.equal({
          clientId: 'acme',
          files: [
            { Symbol: 'QUOTES_2024', Description: 'Descrição de QUOTES_2024', FileName: 'b3/quotes 2024.parquet' },
            { Symbol: 'CURVE', Description: 'DI1 curve', FileName: 'rates/curve.csv' },
            { Symbol: 'MISSING', Description: 'Descrição de MISSING', FileName: 'rates/missing.csv' },
          ],
          count: 3,
        });
      });

      for (const path of ['/catalog', '/list', '/count']) {
        it(`${path} responds 401 without a bearer token`, async function () {
          const response = await gateway.request('GET', path);
          expect(response.status).to.equal(401);
        });

        it(`${path} responds 404 when the caller has no index`, async function () {
          const response = await gateway.get('nobody', path);
          expect(response.status).to.equal(404);
          expect(jsonOf(response).message).to.match(/No catalog was found/);
        });
      }

      it('responds 404 when the caller has no index', async function () {
        const response = await gateway.get('nobody', '/catalog');
        expect(response.status).to.equal(404);
        expect(jsonOf(response)).to.include({ error: 'Not found' });
        expect(jsonOf(response).message).to.match(/catalog/i);
      });
    });

    describe('GET /list', function () {
      it('lists only catalog files that exist, with sizes and upload times', async function () {
        const response = await gateway.get('acme', '/list');
        expect(response.status).to.equal(200);
        const body = jsonOf(response);
        expect(body).to.include({ count: 2, limit: 1000, truncated: false });
        expect(body.files.map((file: { symbol: string }) => file.symbol)).to.deep.equal(['QUOTES_2024', 'CURVE']);
        expect(body.files[1]).to.include({ symbol: 'CURVE', description: 'DI1 curve', size: 'date,rate\n2024-01-02,10.5\n'.length });
        // The upload time is storage's own Last-Modified of the file, to the millisecond.
        const stored = await fixture.store.getProperties('rates/curve.csv');
        expect(body.files[1].uploaded).to.equal(stored?.lastModified.toISOString());
      });

      it('gives each file its storage path as fileName: the index\'s FileName, as /catalog names it', async function () {
        const listed = jsonOf<{ files: Array<{ symbol: string; fileName: string }> }>(await gateway.get('acme', '/list')).files;
        const catalog = jsonOf<{ files: Array<{ Symbol: string; FileName: string }> }>(await gateway.get('acme', '/catalog')).files;

        expect(listed.map((file) => [file.symbol, file.fileName])).to.deep.equal([
          ['QUOTES_2024', 'b3/quotes 2024.parquet'],
          ['CURVE', 'rates/curve.csv'],
        ]);
        for (const file of listed) expect(file.fileName, file.symbol).to.equal(catalog.find((entry) => entry.Symbol === file.symbol)?.FileName);
      });

      it('gives each file the ETag its download has, and its MD5 where storage keeps one', async function () {
        const body = jsonOf<{ files: Array<{ symbol: string; etag: string; md5?: string }> }>(await gateway.get('acme', '/list'));
        for (const file of body.files) {
          const download = await gateway.get('acme', `/download/${file.symbol}`, {}, 'HEAD');
          expect(file.etag, file.symbol).to.equal(download.headers['etag']);
          const stored = await fixture.store.getProperties(file.symbol === 'CURVE' ? 'rates/curve.csv' : 'b3/quotes 2024.parquet');
          if (stored?.contentMd5 !== undefined) expect(file.md5, file.symbol).to.equal(stored.contentMd5);
          else expect(file).to.not.have.property('md5');
        }
      });

      it('lists only the files uploaded at or after modifiedSince', async function () {
        const all = jsonOf<{ files: Array<{ symbol: string; uploaded: string }> }>(await gateway.get('acme', '/list')).files;
        const times = all.map((file) => Date.parse(file.uploaded));
        const earliest = new Date(Math.min(...times)).toISOString();
        const afterLatest = new Date(Math.max(...times) + 1).toISOString();
        const since = (moment: string) => gateway.get('acme', `/list?modifiedSince=${encodeURIComponent(moment)}`);
        expect(jsonOf((await since(earliest))).files).to.have.length(2);
        const none = jsonOf(await since(afterLatest));
        expect(none).to.include({ count: 0, truncated: false });
        expect(none.files).to.deep.equal([]);
        const latest = all.find((file) => Date.parse(file.uploaded) === Math.max(...times));
        expect(jsonOf(await since(new Date(Math.max(...times)).toISOString())).files.map((file: { symbol: string }) => file.symbol)).to.include(latest?.symbol);
      });

      for (const moment of ['yesterday', '2026-13-01T00:00:00Z', '1700000000']) {
        it(`responds 400 for modifiedSince=${moment}`, async function () {
          expect((await gateway.get('acme', `/list?modifiedSince=${moment}`)).status).to.equal(400);
        });
      }

      it('truncates to the limit and says so', async function () {
        const body = jsonOf(await gateway.get('acme', '/list?limit=1'));
        expect(body).to.include({ count: 1, limit: 1, truncated: true });
        expect(body.files).to.have.length(1);
      });

      it('continues a truncated listing from its nextCursor, each file once, until an answer has none', async function () {
        const first = jsonOf(await gateway.get('acme', '/list?limit=1'));
        expect(first.nextCursor).to.be.a('string');
        const second = jsonOf(await gateway.get('acme', `/list?limit=1&cursor=${encodeURIComponent(first.nextCursor)}`));
        expect([...first.files, ...second.files].map((file: { symbol: string }) => file.symbol)).to.deep.equal(['QUOTES_2024', 'CURVE']);
        expect(second).to.include({ count: 1, truncated: false });
        expect(second).to.not.have.property('nextCursor');
      });

      for (const limit of ['0', '-1', '1.5', 'abc', '10001', '99999999999999999999']) {
        it(`responds 400 for limit=${limit}`, async function () {
          const response = await gateway.get('acme', `/list?limit=${limit}`);
          expect(response.status).to.equal(400);
          expect(jsonOf(response).message).to.be.a('string');
        });
      }
    });

    describe('GET /count', function () {
      it('counts the catalog files that exist', async function () {
        const response = await gateway.get('acme', '/count');
        expect(response.status).to.equal(200);
        expect(jsonOf(response)).to.deep.equal({ count: 2 });
      });
    });

    describe('GET /info/:symbol', function () {
      it('describes an entitled, existing file with ETag and Last-Modified', async function () {
        const response = await gateway.get('acme', '/info/QUOTES_2024');
        expect(response.status).to.equal(200);
        const body = jsonOf(response);
        expect(body).to.include({ symbol: 'QUOTES_2024', size: 12 });
        expect(body.etag).to.match(/^"[^"]+"$/);
        expect(response.headers['etag']).to.equal(body.etag);
        expect(new Date(String(response.headers['last-modified'])).toUTCString()).to.equal(response.headers['last-modified']);
        if (fixture.capabilities.httpMetadata) {
          expect(body.httpMetadata.contentType).to.equal('application/vnd.apache.parquet');
          expect(body.customMetadata).to.deep.equal({ source: 'b3' });
        }
      });

      it('responds 403 when the symbol is not in the caller subscription', async function () {
        const response = await gateway.get('acme', '/info/NOT_MINE');
        expect(response.status).to.equal(403);
        expect(jsonOf(response).error).to.equal('Access denied');
        expect(jsonOf(response).message).to.match(/not in the subscription/);
      });

      it('responds 404 when the file is in the index but not in storage', async function () {
        const response = await gateway.get('acme', '/info/MISSING');
        expect(response.status).to.equal(404);
        expect(jsonOf(response).error).to.equal('Not found');
      });

      it('checks entitlement before existence: a client without the symbol gets 403 even for a missing file', async function () {
        await fixture.put('indexes/other.csv', buildIndexCsv([buildIndexRow({ Symbol: 'CURVE', FileName: 'rates/curve.csv' })]));
        const other = await startGateway({ store: fixture.store, clients: [{ clientId: 'other', secret: 'other-secret-other-secret' }] });
        try {
          expect((await other.get('other', '/info/MISSING')).status).to.equal(403);
        } finally {
          await other.close();
          await fixture.remove('indexes/other.csv');
        }
      });
    });
  });
}

describe('cacheable answers of /catalog and /list', function () {
  let now: number;
  const clock = { now: () => new Date(now) };

  async function gatewayWith(store: MemoryBlobStore, env: Record<string, string> = {}) {
    return startGateway({ store, clock, clients: [{ clientId: 'acme', secret: 'acme-secret-acme-secret' }], env });
  }

  function seeded(): MemoryBlobStore {
    const store = new MemoryBlobStore();
    store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'data/a.csv' }), buildIndexRow({ Symbol: 'B', FileName: 'data/b.csv' })]));
    store.put('data/a.csv', 'a\n');
    store.put('data/b.csv', 'b\n');
    return store;
  }

  beforeEach(function () {
    now = Date.UTC(2026, 0, 1);
  });

  for (const path of ['/catalog', '/list']) {
    describe(`GET ${path}`, function () {
      it('carries a weak ETag, and answers 304 with no body to If-None-Match holding it', async function () {
        const gateway = await gatewayWith(seeded());
        try {
          const first = await gateway.get('acme', path);
          const etag = String(first.headers['etag']);
          expect(etag).to.match(/^W\/"[A-Za-z0-9_-]+"$/);
          const again = await gateway.get('acme', path, { 'if-none-match': etag });
          expect(again.status).to.equal(304);
          expect(again.body.length).to.equal(0);
          expect(again.headers['etag']).to.equal(etag);
          expect((await gateway.get('acme', path, { 'if-none-match': 'W/"something-else"' })).status).to.equal(200);
        } finally {
          await gateway.close();
        }
      });
    });
  }

  it('gives /catalog a new ETag when the index changes', async function () {
    const store = seeded();
    const gateway = await gatewayWith(store, { INDEX_REFRESH_SECONDS: '0' });
    try {
      const before = String((await gateway.get('acme', '/catalog')).headers['etag']);
      store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'data/a.csv' })]));
      const after = await gateway.get('acme', '/catalog', { 'if-none-match': before });
      expect(after.status).to.equal(200);
      expect(after.headers['etag']).to.not.equal(before);
    } finally {
      await gateway.close();
    }
  });

  it('serializes a catalog\'s rows once for every /catalog request of every client of that index (rows read counted), and again when the index changes', async function () {
    const store = seeded();
    const gateway = await startGateway({
      store,
      clock,
      clients: [
        { clientId: 'acme', secret: 'acme-secret-acme-secret' },
        { clientId: 'acme-too', secret: 'acme-too-secret-acme-too', indexPath: 'indexes/acme.csv' },
      ],
      env: { INDEX_REFRESH_SECONDS: '0' },
    });
    let rowsRead = 0;
    const entryAt = FileCatalog.prototype.entryAt;
    FileCatalog.prototype.entryAt = function (this: FileCatalog, row: number) {
      rowsRead += 1;
      return entryAt.call(this, row);
    };
    try {
      // changesCursor is each client's own (bound to its id), so it is left out of the comparisons.
      const withoutCursor = (body: Record<string, unknown>): Record<string, unknown> => ({ ...body, changesCursor: undefined });
      const first = withoutCursor(jsonOf(await gateway.get('acme', '/catalog')));
      expect(rowsRead, 'the first answer reads each row once').to.equal(2);
      expect(withoutCursor(jsonOf(await gateway.get('acme', '/catalog')))).to.deep.equal(first);
      const other = withoutCursor(jsonOf(await gateway.get('acme-too', '/catalog')));
      expect(other).to.deep.equal({ ...first, clientId: 'acme-too' });
      expect(rowsRead, 'later answers, for either client, read none').to.equal(2);
      store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'C', FileName: 'data/c.csv' })]));
      expect(jsonOf(await gateway.get('acme', '/catalog')).files).to.deep.equal([{ Symbol: 'C', Description: 'Descrição de C', FileName: 'data/c.csv' }]);
      expect(rowsRead, 'a new index version is serialized anew').to.equal(3);
    } finally {
      FileCatalog.prototype.entryAt = entryAt;
      await gateway.close();
    }
  });

  it('serves /list and /count from memory for LIST_CACHE_SECONDS, then asks storage again', async function () {
    const store = seeded();
    const gateway = await gatewayWith(store, { LIST_CACHE_SECONDS: '5' });
    let listings = 0;
    const existing = store.existing.bind(store);
    store.existing = (paths) => {
      listings += 1;
      return existing(paths);
    };
    try {
      expect(jsonOf(await gateway.get('acme', '/count')).count).to.equal(2);
      store.delete('data/b.csv');
      now += 4_999;
      expect(jsonOf(await gateway.get('acme', '/list')).count, 'within the period').to.equal(2);
      expect(jsonOf(await gateway.get('acme', '/count')).count).to.equal(2);
      expect(listings).to.equal(1);
      now += 1;
      expect(jsonOf(await gateway.get('acme', '/list')).count, 'once the period is over').to.equal(1);
      expect(listings).to.equal(2);
    } finally {
      await gateway.close();
    }
  });
});
