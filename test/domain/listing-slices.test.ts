import { MemoryChecksumStore } from '../../src/adapters/changes/memory-checksum-store.js';
import { expect } from 'chai';
import { LruBoundedMemory } from '../../src/adapters/index/lru-bounded-memory.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { FileAccess } from '../../src/application/file-access.js';
import type { CatalogProvider } from '../../src/domain/entitlement.js';
import { Entitlement } from '../../src/domain/entitlement.js';
import { FileCatalog } from '../../src/domain/file-catalog.js';
import type { BlobStore, BlobSummary, Principal } from '../../src/domain/ports.js';
import { ROWS_PER_SLICE } from '../../src/domain/slices.js';

const acme: Principal = { clientId: 'acme', indexPath: 'indexes/acme.csv' };
const clock = { now: () => new Date('2025-01-02T03:04:05Z') };
const rowCount = 200_000;
const pathOf = (i: number): string => `m/${i % 100}/S${i}.parquet`;

/** A store's answer whose lookups are counted between two turns of the event loop. */
function countingAnswer(answer: ReadonlyMap<string, BlobSummary>, counts: { sinceYield: number }): ReadonlyMap<string, BlobSummary> {
  return new Proxy(answer, {
    get(target, property) {
      if (property === 'get') {
        return (path: string) => {
          counts.sinceYield += 1;
          return target.get(path);
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('FileAccess reading which of a big catalog’s files exist', function () {
  describe('when 100,000 of 200,000 catalog rows exist', function () {
    // Two hundred thousand rows on a busy machine: the work is counted, the limit only stops a hung test.
    this.timeout(120_000);
    it('reads storage’s answer in slices of at most ROWS_PER_SLICE rows between two turns of the event loop, and lists every file with its tags', async function () {
      const memoryStore = new MemoryBlobStore();
      for (let i = 0; i < rowCount; i += 2) memoryStore.put(pathOf(i), `content ${i}`);
      const counts = { sinceYield: 0, mostBetweenYields: 0, yields: 0 };
      const store: BlobStore = Object.assign(Object.create(memoryStore) as BlobStore, {
        existing: async (paths: readonly string[]) => countingAnswer(await memoryStore.existing(paths), counts),
      });
      const catalog = FileCatalog.fromIndex(
        Array.from({ length: rowCount }, (_, i) => ({ row: i + 1, Symbol: `S${i}`, ShortDescriptionPt: '', ShortDescription: '', FileName: pathOf(i) })),
      ).catalog;
      const catalogs: CatalogProvider = { catalogAt: async () => catalog };
      const files = new FileAccess({
        entitlement: new Entitlement(catalogs, clock),
        checksums: new MemoryChecksumStore(),
        store,
        clock,
        listCacheMs: 60_000,
        memory: new LruBoundedMemory(256 * 1024 * 1024),
        yieldToLoop: async () => {
          counts.yields += 1;
          counts.mostBetweenYields = Math.max(counts.mostBetweenYields, counts.sinceYield);
          counts.sinceYield = 0;
        },
      });

      const listing = await files.list(acme, { limit: rowCount });

      counts.mostBetweenYields = Math.max(counts.mostBetweenYields, counts.sinceYield);
      expect(counts.mostBetweenYields).to.be.at.most(ROWS_PER_SLICE);
      expect(counts.yields).to.be.at.least(rowCount / ROWS_PER_SLICE);
      expect(listing.files).to.have.length(rowCount / 2);
      // Tags are kept in pieces, one per slice: each file's own, across every piece boundary.
      const stored = await memoryStore.existing(listing.files.map((file) => file.entry.fileName));
      const mismatched = listing.files.filter((file) => stored.get(file.entry.fileName)?.etag !== file.etag || stored.get(file.entry.fileName)?.contentMd5 !== file.md5);
      expect(mismatched).to.deep.equal([]);
    });
  });
});

describe('FileCatalog.inSlices', function () {
  this.timeout(120_000);
  const fields = Array.from({ length: rowCount }, (_, i) => [`S${i % 150_000}`, `Cotações ${i}`, pathOf(i % 120_000)]).flat();

  for (const [kind, extra] of [
    ['Latin-1', ''],
    ['wide (characters beyond Latin-1)', ' 📈'],
  ] as const) {
    describe(`when it builds a catalog of 200,000 ${kind} rows in slices of 10,000`, function () {
      it('yields at least once per 10,000 rows of each of its five passes, and builds the catalog the constructor builds', async function () {
        const withExtra = fields.map((field, i) => (i % 3 === 1 ? field + extra : field));
        let yields = 0;
        const sliced = await FileCatalog.inSlices(withExtra, 'v1', undefined, { stepsPerSlice: 10_000, yieldToLoop: async () => void (yields += 1) });
        const whole = new FileCatalog(withExtra, 'v1');

        expect(yields).to.be.at.least((5 * rowCount) / 10_000 - 5);
        expect(sliced.count).to.equal(whole.count);
        expect(sliced.bytes).to.equal(whole.bytes);
        for (const row of [0, 1, 99_999, 149_999, 150_000, 199_999]) {
          expect(sliced.entryAt(row)).to.deep.equal(whole.entryAt(row));
          // Repeated symbols and paths: the first row of each wins, in both.
          expect(sliced.findBySymbol(`S${row % 150_000}`)).to.deep.equal(whole.findBySymbol(`S${row % 150_000}`));
          expect(sliced.rowOfFileName(pathOf(row % 120_000))).to.equal(whole.rowOfFileName(pathOf(row % 120_000)));
        }
        expect(sliced.findBySymbol('S150000')).to.equal(undefined);
      });
    });
  }
});
