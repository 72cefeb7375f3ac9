import { expect } from 'chai';
import fc from 'fast-check';
import { LruBoundedMemory } from '../../src/adapters/index/lru-bounded-memory.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { Entitlement, type CatalogProvider } from '../../src/domain/entitlement.js';
import { compareUtf8, FileAccess } from '../../src/application/file-access.js';
import { FileCatalog } from '../../src/domain/file-catalog.js';
import type { Principal } from '../../src/domain/ports.js';

const acme: Principal = { clientId: 'acme', indexPath: 'indexes/acme.csv' };
const fixedClock = { now: () => new Date('2025-01-02T03:04:05Z') };

function accessOver(indexPaths: readonly string[], stored: readonly string[]): FileAccess {
  const store = new MemoryBlobStore();
  for (const path of stored) store.put(path, path);
  const catalog = FileCatalog.fromIndex(
    indexPaths.map((path, i) => ({ row: i + 1, Symbol: `S${i}`, ShortDescriptionPt: '', ShortDescription: '', FileName: path })),
  ).catalog;
  const catalogs: CatalogProvider = { catalogAt: async (indexPath) => (indexPath === acme.indexPath ? catalog : undefined) };
  return new FileAccess({ entitlement: new Entitlement(catalogs), store, clock: fixedClock, listCacheMs: 60_000, memory: new LruBoundedMemory(16 * 1024 * 1024) });
}

describe('FileAccess.listByPath', function () {
  it('lists the entitled files storage has, each path once, in UTF-8 byte order, never a file of another index', async function () {
    const files = accessOver(['b/2.csv', 'a/é.csv', 'a/z.csv', 'b/missing.csv', 'b/2.csv', 'a/\u{1F600}.csv', 'a/\uFF01.csv'], ['b/2.csv', 'a/é.csv', 'a/z.csv', 'a/\u{1F600}.csv', 'a/\uFF01.csv', 'other/x.csv']);
    const listing = await files.listByPath(acme, { prefix: '', limit: 100 });
    // U+FF01 (EF BC 81) sorts before U+1F600 (F0 9F 98 80) in UTF-8, though not in UTF-16.
    expect(listing.files.map((file) => file.entry.fileName)).to.deep.equal(['a/z.csv', 'a/é.csv', 'a/\uFF01.csv', 'a/\u{1F600}.csv', 'b/2.csv']);
    expect(listing.truncated).to.equal(false);
  });

  it('keeps to the prefix, starts after `after` and stops at `limit`, saying it was truncated', async function () {
    const paths = ['d/1.csv', 'd/2.csv', 'd/3.csv', 'd/4.csv', 'e/1.csv'];
    const files = accessOver(paths, paths);
    const listing = await files.listByPath(acme, { prefix: 'd/', after: 'd/1.csv', limit: 2 });
    expect(listing.files.map((file) => file.entry.fileName)).to.deep.equal(['d/2.csv', 'd/3.csv']);
    expect(listing.truncated).to.equal(true);
    const rest = await files.listByPath(acme, { prefix: 'd/', after: 'd/3.csv', limit: 2 });
    expect(rest.files.map((file) => file.entry.fileName)).to.deep.equal(['d/4.csv']);
    expect(rest.truncated).to.equal(false);
  });
});

describe('compareUtf8', function () {
  it('orders any two strings as their UTF-8 bytes compare', function () {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        expect(Math.sign(compareUtf8(a, b))).to.equal(Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))));
      }),
    );
  });
});
