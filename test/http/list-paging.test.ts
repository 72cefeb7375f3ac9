import { expect } from 'chai';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { jsonOf } from '../support/json.js';

interface ListAnswer {
  files: Array<{ symbol: string; uploaded: string }>;
  count: number;
  limit: number;
  truncated: boolean;
  nextCursor?: string;
}

const clients = [
  { clientId: 'acme', secret: 'acme-secret-acme-secret' },
  { clientId: 'globex', secret: 'globex-secret-globex-secret', indexPath: 'indexes/acme.csv' },
];

/** An index of `rows` symbols in `folder`, every third file missing from storage. */
function storeWith(rows: number): { store: MemoryBlobStore; existing: string[] } {
  const store = new MemoryBlobStore();
  const symbols = Array.from({ length: rows }, (_, i) => `S${String(i).padStart(6, '0')}`);
  store.put('indexes/acme.csv', buildIndexCsv(symbols.map((symbol) => buildIndexRow({ Symbol: symbol, FileName: `data/${symbol}.csv` }))));
  const existing = symbols.filter((_, i) => i % 3 !== 2);
  for (const symbol of existing) store.put(`data/${symbol}.csv`, symbol);
  return { store, existing };
}

async function followCursors(gateway: TestGateway, first: string): Promise<{ symbols: string[]; pages: ListAnswer[] }> {
  const pages: ListAnswer[] = [];
  let path: string | undefined = first;
  while (path !== undefined) {
    const response = await gateway.get('acme', path);
    expect(response.status, path).to.equal(200);
    const page = jsonOf<ListAnswer>(response);
    pages.push(page);
    expect(page.truncated).to.equal(page.nextCursor !== undefined);
    path = page.nextCursor === undefined ? undefined : `/list?limit=${page.limit}&cursor=${encodeURIComponent(page.nextCursor)}`;
  }
  return { symbols: pages.flatMap((page) => page.files.map((file) => file.symbol)), pages };
}

describe('GET /list with cursors', function () {
  describe('when following nextCursor through a catalog of 25,000 files (beyond the limit of 10,000)', function () {
    let gateway: TestGateway;
    let existing: string[];

    before(async function () {
      const seeded = storeWith(37_500);
      existing = seeded.existing;
      gateway = await startGateway({ store: seeded.store, clients });
    });

    after(async function () {
      await gateway?.close();
    });

    it('returns every existing file exactly once, in index order, and the last page has no nextCursor', async function () {
      const { symbols, pages } = await followCursors(gateway, '/list?limit=10000');
      expect(symbols).to.have.length(existing.length);
      expect(symbols).to.deep.equal(existing);
      expect(pages.map((page) => page.count)).to.deep.equal([10_000, 10_000, 5_000]);
      expect(pages.at(-1)).to.not.have.property('nextCursor');
    });
  });

  describe('on a small catalog', function () {
    let store: MemoryBlobStore;
    let existing: string[];
    let gateway: TestGateway;

    beforeEach(async function () {
      ({ store, existing } = storeWith(30));
      gateway = await startGateway({ store, clients, env: { INDEX_REFRESH_SECONDS: '0', LIST_CACHE_SECONDS: '0' } });
    });

    afterEach(async function () {
      await gateway?.close();
    });

    it('continues on another instance with the same TOKEN_SIGNING_KEY: the cursor carries its own position', async function () {
      const first = jsonOf<ListAnswer>(await gateway.get('acme', '/list?limit=7'));
      const other = await startGateway({ store, clients });
      try {
        const second = jsonOf<ListAnswer>(await other.get('acme', `/list?limit=7&cursor=${encodeURIComponent(first.nextCursor ?? '')}`));
        expect([...first.files, ...second.files].map((file) => file.symbol)).to.deep.equal(existing.slice(0, 14));
      } finally {
        await other.close();
      }
    });

    it('continues on an instance that still keeps the index version before the one the listing began with (it asks the stored index before refusing)', async function () {
      const other = await startGateway({ store, clients });
      try {
        // The other instance keeps the index as it was (INDEX_REFRESH_SECONDS=60 there).
        await other.get('acme', '/catalog');
        store.put('indexes/acme.csv', buildIndexCsv(['NEW', ...existing].map((symbol) => buildIndexRow({ Symbol: symbol, FileName: `data/${symbol === 'NEW' ? existing[0] : symbol}.csv` }))));
        const first = jsonOf<ListAnswer>(await gateway.get('acme', '/list?limit=7'));
        expect(first.files[0]?.symbol).to.equal('NEW');
        const second = await other.get('acme', `/list?limit=7&cursor=${encodeURIComponent(first.nextCursor ?? '')}`);
        expect(second.status, 'not 410: the index did not change during the listing').to.equal(200);
        expect([...first.files, ...jsonOf<ListAnswer>(second).files].map((file) => file.symbol)).to.deep.equal(['NEW', ...existing.slice(0, 13)]);
      } finally {
        await other.close();
      }
    });

    it('keeps the modifiedSince it was made with, and refuses a different one with 400', async function () {
      const since = new Date(Date.now() + 60_000);
      store.put('data/S000001.csv', 'later', { lastModified: since });
      store.put('data/S000004.csv', 'later', { lastModified: since });
      store.put('data/S000007.csv', 'later', { lastModified: since });
      const query = `modifiedSince=${encodeURIComponent(since.toISOString())}`;
      const first = jsonOf<ListAnswer>(await gateway.get('acme', `/list?limit=2&${query}`));
      expect(first.files.map((file) => file.symbol)).to.deep.equal(['S000001', 'S000004']);
      const cursor = encodeURIComponent(first.nextCursor ?? '');
      const second = jsonOf<ListAnswer>(await gateway.get('acme', `/list?limit=2&cursor=${cursor}`));
      expect(second.files.map((file) => file.symbol)).to.deep.equal(['S000007']);
      expect(second).to.include({ truncated: false });
      expect(jsonOf<ListAnswer>(await gateway.get('acme', `/list?limit=2&cursor=${cursor}&${query}`)).files).to.have.length(1);
      const other = await gateway.get('acme', `/list?limit=2&cursor=${cursor}&modifiedSince=2020-01-01T00:00:00Z`);
      expect(other.status).to.equal(400);
      expect(jsonOf(other).code).to.equal('invalid_request');
    });

    it('responds 410 cursor_expired when the index changed since the listing started, rather than skip a file', async function () {
      const first = jsonOf<ListAnswer>(await gateway.get('acme', '/list?limit=5'));
      store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'NEW', FileName: 'data/S000000.csv' }), ...existing.map((symbol) => buildIndexRow({ Symbol: symbol, FileName: `data/${symbol}.csv` }))]));
      const response = await gateway.get('acme', `/list?limit=5&cursor=${encodeURIComponent(first.nextCursor ?? '')}`);
      expect(response.status).to.equal(410);
      expect(jsonOf(response)).to.include({ error: 'Gone', code: 'cursor_expired' });
    });

    it('responds 400 to an altered cursor, and to another client\'s cursor for the same index', async function () {
      const cursor = jsonOf<ListAnswer>(await gateway.get('acme', '/list?limit=5')).nextCursor ?? '';
      const [payload, mac] = cursor.split('.');
      const forged = Buffer.from(JSON.stringify([1, 'x', 1, 'data/S000000.csv', null])).toString('base64url');
      for (const altered of [`${forged}.${mac}`, `${payload}.${mac?.slice(1)}`, 'not-a-cursor', `${payload}`]) {
        const response = await gateway.get('acme', `/list?cursor=${encodeURIComponent(altered)}`);
        expect(response.status, altered).to.equal(400);
        expect(jsonOf(response).code).to.equal('invalid_request');
      }
      expect((await gateway.get('globex', `/list?cursor=${encodeURIComponent(cursor)}`)).status).to.equal(400);
      expect((await gateway.get('acme', `/list?cursor=${encodeURIComponent(cursor)}`)).status).to.equal(200);
    });

    it('when the listing is no longer fresh (LIST_CACHE_SECONDS=0), asks storage about the rows each later page reaches, not the whole catalog each time', async function () {
      const asked: number[] = [];
      const inner = store.existing.bind(store);
      store.existing = (paths) => {
        asked.push(paths.length);
        return inner(paths);
      };
      const pages: ListAnswer[] = [];
      let path: string | undefined = '/list?limit=5';
      while (path !== undefined) {
        const page: ListAnswer = jsonOf<ListAnswer>(await gateway.get('acme', path));
        pages.push(page);
        path = page.nextCursor === undefined ? undefined : `/list?limit=5&cursor=${encodeURIComponent(page.nextCursor)}`;
      }
      expect(pages.flatMap((page) => page.files.map((file) => file.symbol))).to.deep.equal(existing);
      expect(pages).to.have.length(4);
      expect(asked[0], 'the first page: the whole catalog, kept for /count and other clients').to.equal(30);
      const later = asked.slice(1).reduce((sum, paths) => sum + paths, 0);
      expect(later, `paths asked by the 3 later pages: ${asked.slice(1).join(', ')}`).to.be.at.most(2 * 30);
    });

    it('responds 400 to a cursor longer than 4096 characters', async function () {
      expect((await gateway.get('acme', `/list?cursor=${'a'.repeat(4097)}`)).status).to.equal(400);
    });
  });
});
