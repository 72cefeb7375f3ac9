import { expect } from 'chai';
import { createClient } from '../../client/src/index.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { startGateway, type TestGateway } from '../support/gateway.js';

const acme = { clientId: 'acme', secret: 'acme-secret-acme-secret' };

function indexOf(symbols: readonly string[]): string {
  return buildIndexCsv(symbols.map((symbol) => buildIndexRow({ Symbol: symbol, FileName: `data/${symbol}.csv` })));
}

describe('the library\'s listAll', function () {
  let store: MemoryBlobStore;
  let gateway: TestGateway;
  const symbols = Array.from({ length: 23 }, (_, i) => `S${String(i).padStart(3, '0')}`);

  beforeEach(async function () {
    store = new MemoryBlobStore();
    store.put('indexes/acme.csv', indexOf(symbols));
    for (const symbol of symbols) store.put(`data/${symbol}.csv`, symbol);
    gateway = await startGateway({ store, clients: [acme], env: { INDEX_REFRESH_SECONDS: '0', LIST_CACHE_SECONDS: '0' } });
  });

  afterEach(async function () {
    await gateway?.close();
  });

  /** The library for acme, its requests going through `fetch` (to watch or change them). */
  const clientThrough = (fetch: (request: Request) => Promise<Response>) =>
    createClient({ baseUrl: gateway.baseUrl, clientId: acme.clientId, clientSecret: acme.secret, fetch });

  it('when the listing takes several pages, follows nextCursor and returns every file exactly once, in index order', async function () {
    const pages: string[] = [];
    const client = clientThrough((request) => {
      const url = new URL(request.url);
      if (url.pathname === '/list') pages.push(url.search);
      return fetch(request);
    });
    const files = await client.listAll({ limit: 5 });
    expect(files.map((file) => file.symbol)).to.deep.equal(symbols);
    expect(pages).to.have.length(5);
    expect(pages.slice(1).every((search) => search.includes('cursor='))).to.equal(true);
  });

  it('when the index changes between pages (410 cursor_expired), starts over and returns the new listing exactly once', async function () {
    const extended = ['NEW', ...symbols];
    store.put('data/NEW.csv', 'new');
    let lists = 0;
    const client = clientThrough(async (request) => {
      const response = await fetch(request);
      const url = new URL(request.url);
      if (url.pathname === '/list' && ++lists === 1) store.put('indexes/acme.csv', indexOf(extended));
      return response;
    });
    const files = await client.listAll({ limit: 10 });
    expect(files.map((file) => file.symbol)).to.deep.equal(extended);
    // The first page, the refused second, then three pages of the new index.
    expect(lists).to.equal(5);
  });

  it('listSnapshot returns the same files and the last page\'s changesCursor (a position every page is known to include)', async function () {
    const cursors: string[] = [];
    const client = clientThrough(async (request) => {
      const response = await fetch(request);
      if (new URL(request.url).pathname === '/list') cursors.push(((await response.clone().json()) as { changesCursor: string }).changesCursor);
      return response;
    });
    const snapshot = await client.listSnapshot({ limit: 10 });
    expect(snapshot.files.map((file) => file.symbol)).to.deep.equal(symbols);
    expect(cursors).to.have.length(3);
    expect(snapshot.changesCursor).to.be.a('string').and.equal(cursors.at(-1));
  });
});
