import { expect } from 'chai';
import { LruBoundedMemory } from '../../src/adapters/index/lru-bounded-memory.js';
import { CatalogCache } from '../../src/domain/catalog-cache.js';
import { FileCatalog, FileCatalogBuilder } from '../../src/domain/file-catalog.js';
import type { Clock, IndexRecord, IndexRowSink, IndexSource, LoadedIndex } from '../../src/domain/ports.js';
import { collectGarbage } from '../support/heap.js';

const clock: Clock = { now: () => new Date(Date.UTC(2026, 0, 1)) };

function recordsOf(count: number, prefix = 'PETR4'): IndexRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    row: i + 1,
    Symbol: `${prefix}_${i}`,
    ShortDescriptionPt: `Cotações diárias ${i}`,
    ShortDescription: '',
    FileName: `equities/${prefix}/${i}.parquet`,
  }));
}

/** Every index has `rows` rows; counts loads per path. */
class SizedIndexSource implements IndexSource {
  readonly loads = new Map<string, number>();
  constructor(private readonly rows: number) {}

  async version(): Promise<string> {
    return 'v1';
  }

  async load<S extends IndexRowSink>(path: string, newSink: () => S): Promise<LoadedIndex<S>> {
    this.loads.set(path, (this.loads.get(path) ?? 0) + 1);
    const rows = newSink();
    for (const record of recordsOf(this.rows, path)) rows.record(record);
    return { rows, version: 'v1' };
  }
}

describe('FileCatalog memory', function () {
  it('when built from 10,000 rows, accounts for its characters plus at most 40 bytes of structure per row', function () {
    const records = recordsOf(10_000);
    const { catalog } = FileCatalog.fromIndex(records, [], 'v1');
    const characters = records.reduce((sum, record) => sum + record.Symbol.length + record.ShortDescriptionPt.length + record.FileName.length, 0);
    // One-byte characters (Latin-1): the string table costs one byte per character.
    expect(catalog.bytes).to.be.at.least(characters);
    expect((catalog.bytes - characters) / records.length).to.be.at.most(40);
    expect(catalog.bytes / records.length, 'bytes per row in all').to.be.below(200);
  });

  it('when a description needs two-byte characters, accounts two bytes for every character', function () {
    const ascii = FileCatalog.fromIndex(recordsOf(100).map((record) => ({ ...record, ShortDescriptionPt: 'Daily quotes' }))).catalog;
    const wide = FileCatalog.fromIndex(recordsOf(100).map((record, i) => ({ ...record, ShortDescriptionPt: i === 0 ? 'Daily quotes €' : 'Daily quotes' }))).catalog;
    expect(wide.bytes - ascii.bytes).to.be.greaterThan(3000);
  });

  it('finds every row by symbol and by path, and nothing that is not in it', function () {
    const records = recordsOf(5_000);
    const { catalog } = FileCatalog.fromIndex(records);
    for (const record of records) {
      expect(catalog.findBySymbol(record.Symbol)?.fileName).to.equal(record.FileName);
      expect(catalog.findByFileName(record.FileName)?.symbol).to.equal(record.Symbol);
    }
    expect(catalog.findBySymbol('PETR4_5000')).to.equal(undefined);
    expect(catalog.findByFileName('equities/PETR4/5000.parquet')).to.equal(undefined);
    expect(catalog.findBySymbol('')).to.equal(undefined);
  });
});

describe('CatalogCache within CATALOG_CACHE_MB', function () {
  const rows = 1_000;
  const catalogBytes = FileCatalog.fromIndex(recordsOf(rows, 'indexes/a.csv'), [], 'v1').catalog.bytes;

  it('holds catalogs whose accounted bytes are their compact size, and evicts the least recently used past the bound', async function () {
    const memory = new LruBoundedMemory(Math.floor(catalogBytes * 2.5));
    const source = new SizedIndexSource(rows);
    const cache = new CatalogCache({ source, memory, clock, refreshAfterMs: 60_000 });
    await cache.catalogAt('indexes/a.csv');
    const one = memory.stats().bytes;
    expect(one).to.be.within(catalogBytes, catalogBytes + 1024);
    await cache.catalogAt('indexes/b.csv');
    await cache.catalogAt('indexes/a.csv');
    await cache.catalogAt('indexes/c.csv');
    const stats = memory.stats();
    expect(stats.evictions).to.equal(1);
    expect(stats.bytes).to.be.at.most(stats.maxBytes);
    expect(stats.entries).to.equal(2);
    // b was the least recently used: it is read again, a is not.
    await cache.catalogAt('indexes/a.csv');
    await cache.catalogAt('indexes/b.csv');
    expect(source.loads.get('indexes/a.csv')).to.equal(1);
    expect(source.loads.get('indexes/b.csv')).to.equal(2);
  });

  it('when an evicted catalog is asked for by many requests at once, reloads it once and gives each the exact catalog', async function () {
    const memory = new LruBoundedMemory(Math.floor(catalogBytes * 1.5));
    const source = new SizedIndexSource(rows);
    const cache = new CatalogCache({ source, memory, clock, refreshAfterMs: 60_000 });
    await cache.catalogAt('indexes/a.csv');
    await cache.catalogAt('indexes/b.csv');
    const catalogs = await Promise.all(Array.from({ length: 8 }, () => cache.catalogAt('indexes/a.csv')));
    expect(source.loads.get('indexes/a.csv')).to.equal(2);
    for (const catalog of catalogs) {
      expect(catalog?.count).to.equal(rows);
      expect(catalog?.findBySymbol('indexes/a.csv_999')?.fileName).to.equal('equities/indexes/a.csv/999.parquet');
    }
  });

  it('counts hits and misses', async function () {
    const memory = new LruBoundedMemory(1 << 20);
    const cache = new CatalogCache({ source: new SizedIndexSource(10), memory, clock, refreshAfterMs: 60_000 });
    await cache.catalogAt('indexes/a.csv');
    await cache.catalogAt('indexes/a.csv');
    await cache.catalogAt('indexes/a.csv');
    expect(memory.stats()).to.include({ hits: 2, misses: 1, evictions: 0, entries: 1 });
  });
});

describe('FileCatalog accounted bytes against the heap', function () {
  it('when 200,000 rows are built, accounts within 25% of what the heap actually grew by', function () {
    this.timeout(60_000);
    const used = (): number => {
      collectGarbage();
      const memory = process.memoryUsage();
      return memory.heapUsed + memory.arrayBuffers;
    };
    const before = used();
    const builder = new FileCatalogBuilder();
    for (let i = 0; i < 200_000; i += 1) {
      builder.record({ row: i + 1, Symbol: `PETR4_${i}`, ShortDescriptionPt: `Cotações diárias ${i}`, ShortDescription: '', FileName: `equities/PETR4/${i}.parquet` });
    }
    const { catalog } = builder.build('v1');
    const grown = used() - before;
    expect(catalog.count).to.equal(200_000);
    expect(catalog.bytes / grown, `accounted ${catalog.bytes} B, heap grew ${grown} B`).to.be.within(0.75, 1.25);
  });
});
