import { MemoryChecksumStore } from '../../src/adapters/changes/memory-checksum-store.js';
import { expect } from 'chai';
import fc from 'fast-check';
import { LruBoundedMemory } from '../../src/adapters/index/lru-bounded-memory.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { Entitlement, type CatalogProvider } from '../../src/domain/entitlement.js';
import { compareUtf8, FileAccess } from '../../src/application/file-access.js';
import { FileCatalog } from '../../src/domain/file-catalog.js';
import type { Clock, Principal } from '../../src/domain/ports.js';

const acme: Principal = { clientId: 'acme', indexPath: 'indexes/acme.csv' };
const fixedClock = { now: () => new Date('2025-01-02T03:04:05Z') };

function storeHolding(paths: readonly string[]): MemoryBlobStore {
  const store = new MemoryBlobStore();
  for (const path of paths) store.put(path, path);
  return store;
}

interface Instrumented {
  /** Turns of the event loop the path order's builds asked for. */
  yields: number;
  /** Path orders kept in the memory, and the bytes they were accounted at. */
  readonly ordersKept: number[];
}

function accessOver(
  indexPaths: readonly string[],
  stored: readonly string[] | MemoryBlobStore,
  clock: Clock = fixedClock,
): { files: FileAccess; counts: Instrumented } {
  const store = stored instanceof MemoryBlobStore ? stored : storeHolding(stored);
  const catalog = FileCatalog.fromIndex(
    indexPaths.map((path, i) => ({ row: i + 1, Symbol: `S${i}`, ShortDescriptionPt: '', ShortDescription: '', FileName: path })),
  ).catalog;
  const catalogs: CatalogProvider = { catalogAt: async (indexPath) => (indexPath === acme.indexPath ? catalog : undefined) };
  const counts: Instrumented = { yields: 0, ordersKept: [] };
  const memory = new LruBoundedMemory(64 * 1024 * 1024);
  const set = memory.set.bind(memory);
  memory.set = (key, value, bytes) => {
    if (key.startsWith('by-path:')) counts.ordersKept.push(bytes);
    set(key, value, bytes);
  };
  const yieldToLoop = (): Promise<void> => {
    counts.yields += 1;
    return new Promise((resolve) => setImmediate(resolve));
  };
  return { files: new FileAccess({ entitlement: new Entitlement(catalogs, clock), store, clock, listCacheMs: 60_000, memory, yieldToLoop, checksums: new MemoryChecksumStore() }), counts };
}

describe('FileAccess.listByPath', function () {
  it('lists the entitled files storage has, each path once, in UTF-8 byte order, never a file of another index', async function () {
    const { files } = accessOver(['b/2.csv', 'a/é.csv', 'a/z.csv', 'b/missing.csv', 'b/2.csv', 'a/\u{1F600}.csv', 'a/\uFF01.csv'], ['b/2.csv', 'a/é.csv', 'a/z.csv', 'a/\u{1F600}.csv', 'a/\uFF01.csv', 'other/x.csv']);
    const listing = await files.listByPath(acme, { prefix: '', limit: 100 });
    // U+FF01 (EF BC 81) sorts before U+1F600 (F0 9F 98 80) in UTF-8, though not in UTF-16.
    expect(listing.files.map((file) => file.entry.fileName)).to.deep.equal(['a/z.csv', 'a/é.csv', 'a/\uFF01.csv', 'a/\u{1F600}.csv', 'b/2.csv']);
    expect(listing.truncated).to.equal(false);
  });

  it('keeps to the prefix, starts after `after` and stops at `limit`, saying it was truncated', async function () {
    const paths = ['d/1.csv', 'd/2.csv', 'd/3.csv', 'd/4.csv', 'e/1.csv'];
    const { files } = accessOver(paths, paths);
    const listing = await files.listByPath(acme, { prefix: 'd/', after: 'd/1.csv', limit: 2 });
    expect(listing.files.map((file) => file.entry.fileName)).to.deep.equal(['d/2.csv', 'd/3.csv']);
    expect(listing.truncated).to.equal(true);
    const rest = await files.listByPath(acme, { prefix: 'd/', after: 'd/3.csv', limit: 2 });
    expect(rest.files.map((file) => file.entry.fileName)).to.deep.equal(['d/4.csv']);
    expect(rest.truncated).to.equal(false);
  });

  describe('when two listings of a catalog too big for one slice arrive together', function () {
    it('they share one build of the path order, which yields to the event loop and is kept once', async function () {
      const paths = Array.from({ length: 30_000 }, (_, i) => `d/${(i * 7919) % 30_000}.csv`);
      const alone = accessOver(paths, paths);
      await alone.files.listByPath(acme, { prefix: '', limit: 1 });
      const { files, counts } = accessOver(paths, paths);
      const [first, second] = await Promise.all([
        files.listByPath(acme, { prefix: 'd/1', limit: 3 }),
        files.listByPath(acme, { prefix: 'd/2', limit: 3 }),
      ]);
      expect(first.files.map((file) => file.entry.fileName)).to.deep.equal(['d/1.csv', 'd/10.csv', 'd/100.csv']);
      expect(second.files.map((file) => file.entry.fileName)).to.deep.equal(['d/2.csv', 'd/20.csv', 'd/200.csv']);
      expect(alone.counts.yields).to.be.at.least(10);
      expect(counts.yields).to.equal(alone.counts.yields);
      // Only the rows are kept (4 bytes each and the objects holding them), not the existence list they came from.
      expect(counts.ordersKept).to.deep.equal([30_000 * 4 + 160]);
      await files.listByPath(acme, { prefix: 'd/3', limit: 3 });
      expect(counts.yields).to.equal(alone.counts.yields);
    });
  });

  describe('when storage is asked again (LIST_CACHE_SECONDS passed) and a file appeared', function () {
    it('lists it in its place', async function () {
      let now = new Date('2025-01-02T03:04:05Z').getTime();
      const store = new MemoryBlobStore();
      for (const path of ['a.csv', 'c.csv']) store.put(path, path);
      const { files } = accessOver(['c.csv', 'b.csv', 'a.csv'], store, { now: () => new Date(now) });
      expect((await files.listByPath(acme, { prefix: '', limit: 10 })).files.map((file) => file.entry.fileName)).to.deep.equal(['a.csv', 'c.csv']);
      store.put('b.csv', 'b');
      now += 60_000;
      expect((await files.listByPath(acme, { prefix: '', limit: 10 })).files.map((file) => file.entry.fileName)).to.deep.equal(['a.csv', 'b.csv', 'c.csv']);
    });
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
