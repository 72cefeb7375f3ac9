import { expect } from 'chai';
import { LruBoundedMemory } from '../../src/adapters/index/lru-bounded-memory.js';
import { CatalogCache } from '../../src/domain/catalog-cache.js';
import { IndexMalformed, StorageUnavailable } from '../../src/domain/errors.js';
import type { Clock, IndexRecord, IndexRowSink, IndexSource, LoadedIndex } from '../../src/domain/ports.js';

/** An index source whose stored index a test can rewrite, counting what the cache asks of it. */
class FakeIndexSource implements IndexSource {
  loads = 0;
  versionChecks = 0;
  failure: Error | undefined;
  stored: { version: string; records: IndexRecord[] } | 'malformed' | undefined;

  async version(): Promise<string | undefined> {
    this.versionChecks += 1;
    if (this.failure !== undefined) throw this.failure;
    return this.stored === 'malformed' ? 'bad-version' : this.stored?.version;
  }

  async load<S extends IndexRowSink>(_path: string, newSink: () => S): Promise<LoadedIndex<S> | undefined> {
    this.loads += 1;
    if (this.failure !== undefined) throw this.failure;
    if (this.stored === 'malformed') throw new IndexMalformed('The index has no Symbol column');
    if (this.stored === undefined) return undefined;
    const rows = newSink();
    for (const record of this.stored.records) rows.record(record);
    return { rows, version: this.stored.version };
  }
}

const indexOf = (version: string, ...symbols: string[]) => ({
  version,
  records: symbols.map((symbol, i) => ({ row: i + 1, Symbol: symbol, ShortDescriptionPt: '', ShortDescription: symbol, FileName: `${symbol}.csv` })),
});

describe('CatalogCache', function () {
  let now: number;
  let source: FakeIndexSource;
  let cache: CatalogCache;
  const clock: Clock = { now: () => new Date(now) };

  beforeEach(function () {
    now = Date.UTC(2024, 0, 1);
    source = new FakeIndexSource();
    source.stored = indexOf('v1', 'A');
    cache = new CatalogCache({ source, memory: new LruBoundedMemory(1 << 20), clock, refreshAfterMs: 60_000 });
  });

  it('parses an index once and serves it from memory within the refresh interval', async function () {
    await cache.catalogAt('indexes/acme.csv');
    now += 59_000;
    const catalog = await cache.catalogAt('indexes/acme.csv');
    expect([...(catalog ?? [])].map((entry) => entry.symbol)).to.deep.equal(['A']);
    expect(source.loads).to.equal(1);
    expect(source.versionChecks).to.equal(0);
  });

  it('only checks the version after the interval when the index did not change', async function () {
    await cache.catalogAt('indexes/acme.csv');
    now += 61_000;
    await cache.catalogAt('indexes/acme.csv');
    expect(source.loads).to.equal(1);
    expect(source.versionChecks).to.equal(1);
  });

  it('takes an updated index into account once the interval has passed', async function () {
    await cache.catalogAt('indexes/acme.csv');
    source.stored = indexOf('v2', 'A', 'B');
    expect((await cache.catalogAt('indexes/acme.csv'))?.count).to.equal(1);
    now += 61_000;
    expect((await cache.catalogAt('indexes/acme.csv'))?.count).to.equal(2);
    expect(source.loads).to.equal(2);
  });

  it('shares one load between concurrent requests', async function () {
    await Promise.all([1, 2, 3, 4].map(() => cache.catalogAt('indexes/acme.csv')));
    expect(source.loads).to.equal(1);
  });

  it('returns undefined when there is no index, and notices one that appears later', async function () {
    source.stored = undefined;
    expect(await cache.catalogAt('indexes/acme.csv')).to.equal(undefined);
    source.stored = indexOf('v1', 'A');
    now += 61_000;
    expect(await cache.catalogAt('indexes/acme.csv')).to.not.equal(undefined);
  });

  it('keeps failing a malformed index without re-reading it until it changes', async function () {
    source.stored = 'malformed';
    const first = await cache.catalogAt('indexes/acme.csv').catch((error: unknown) => error);
    expect(first).to.be.instanceOf(IndexMalformed);
    now += 61_000;
    const second = await cache.catalogAt('indexes/acme.csv').catch((error: unknown) => error);
    expect(second).to.be.instanceOf(IndexMalformed);
    expect(source.loads).to.equal(1);
    source.stored = indexOf('v3', 'A');
    now += 61_000;
    expect((await cache.catalogAt('indexes/acme.csv'))?.count).to.equal(1);
  });

  it('keeps each index separate: one malformed index does not affect another', async function () {
    await cache.catalogAt('indexes/acme.csv');
    source.stored = 'malformed';
    const failure = await cache.catalogAt('indexes/other.csv').catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(IndexMalformed);
    expect((await cache.catalogAt('indexes/acme.csv'))?.count).to.equal(1);
  });

  it('serves the last loaded catalog when storage fails during a refresh, and says so', async function () {
    const stale: string[] = [];
    cache = new CatalogCache({ source, memory: new LruBoundedMemory(1 << 20), clock, refreshAfterMs: 60_000, onStaleServed: (path) => stale.push(path) });
    await cache.catalogAt('indexes/acme.csv');
    source.failure = new StorageUnavailable('down', { retryable: true });
    now += 61_000;
    expect((await cache.catalogAt('indexes/acme.csv'))?.count).to.equal(1);
    expect(stale).to.deep.equal(['indexes/acme.csv']);
  });

  it('fails with the storage error when nothing was loaded before', async function () {
    source.failure = new StorageUnavailable('down', { retryable: true });
    const failure = await cache.catalogAt('indexes/acme.csv').catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(StorageUnavailable);
  });

  it('reports skipped rows once per parsed version', async function () {
    const reports: number[] = [];
    source.stored = { version: 'v1', records: [...indexOf('v1', 'A').records, { row: 2, Symbol: 'A', ShortDescriptionPt: '', ShortDescription: '', FileName: 'x.csv' }] };
    cache = new CatalogCache({ source, memory: new LruBoundedMemory(1 << 20), clock, refreshAfterMs: 0, onWarnings: (_path, warnings) => reports.push(warnings.length) });
    await cache.catalogAt('indexes/acme.csv');
    await cache.catalogAt('indexes/acme.csv');
    expect(reports).to.deep.equal([1]);
  });

  describe('recheckedCatalogAt: a refusal checks the stored index again', function () {
    it('sees a row added to the index before the refresh is due: a check that began at or after the request, shared by concurrent refusals', async function () {
      await cache.catalogAt('indexes/acme.csv');
      source.stored = indexOf('v2', 'A', 'B');
      const checks = source.versionChecks;
      expect((await cache.recheckedCatalogAt('indexes/acme.csv', now))?.count, 'the kept check began as the request arrived: enough').to.equal(1);
      expect(source.versionChecks - checks).to.equal(0);
      now += 1;
      const rechecked = await Promise.all(Array.from({ length: 100 }, () => cache.recheckedCatalogAt('indexes/acme.csv', now)));
      expect(rechecked.every((catalog) => catalog?.findBySymbol('B')?.fileName === 'B.csv')).to.equal(true);
      expect(source.versionChecks - checks, 'one check for the hundred').to.equal(1);
      expect((await cache.catalogAt('indexes/acme.csv'))?.count, 'the cache holds the new version for everyone').to.equal(2);
      expect(source.loads).to.equal(2);
    });
  });

  describe('invalidate: the scanner found an index changed', function () {
    it('makes the next request check the stored version, even when the invalidation came during a check that had read the old one', async function () {
      await cache.catalogAt('indexes/acme.csv');
      now += 61_000;
      // A check under way: it reads the version before the scanner sees the new one.
      const version = source.version.bind(source);
      let releaseCheck: (() => void) | undefined;
      source.version = async () => {
        const read = await version();
        await new Promise<void>((resolve) => {
          releaseCheck = resolve;
        });
        return read;
      };
      const checking = cache.catalogAt('indexes/acme.csv');
      while (releaseCheck === undefined) await new Promise((resolve) => setImmediate(resolve));
      source.stored = indexOf('v2', 'A', 'B');
      cache.invalidate('indexes/acme.csv');
      releaseCheck();
      expect((await checking)?.count, 'the check read the old version').to.equal(1);
      source.version = version;
      now += 1;
      expect((await cache.catalogAt('indexes/acme.csv'))?.count, 'checked again at the next request').to.equal(2);
    });
  });

  describe('changesSeen: the change log position each catalog is known to include', function () {
    let head: number;
    let headReads: number;
    let positionFailure: Error | undefined;
    const errors: unknown[] = [];

    beforeEach(function () {
      head = 10;
      headReads = 0;
      positionFailure = undefined;
      errors.length = 0;
      cache = new CatalogCache({
        source,
        memory: new LruBoundedMemory(1 << 20),
        clock,
        refreshAfterMs: 60_000,
        // As the wiring gives it: a failure is logged there and comes here as undefined.
        changesPosition: async () => {
          headReads += 1;
          if (positionFailure === undefined) return head;
          errors.push(positionFailure);
          return undefined;
        },
      });
    });

    it('is the position read before the index was checked, once per check, not per request', async function () {
      // A source that logs a change (the head moves) while the index is being read: the position must be the earlier one.
      const load = source.load.bind(source);
      source.load = async (path, sink) => {
        head = 11;
        return load(path, sink);
      };
      const catalog = await cache.catalogAt('indexes/acme.csv');
      expect(cache.changesSeen(catalog!)).to.equal(10);
      await cache.catalogAt('indexes/acme.csv');
      expect(headReads).to.equal(1);
    });

    it('moves on when a later check finds the index unchanged, and starts over with a new version', async function () {
      const first = (await cache.catalogAt('indexes/acme.csv'))!;
      head = 20;
      now += 61_000;
      expect(await cache.catalogAt('indexes/acme.csv')).to.equal(first);
      expect(cache.changesSeen(first), 'the same catalog, confirmed at 20').to.equal(20);
      source.stored = indexOf('v2', 'A', 'B');
      head = 30;
      now += 61_000;
      const second = (await cache.catalogAt('indexes/acme.csv'))!;
      expect(second).to.not.equal(first);
      expect(cache.changesSeen(second)).to.equal(30);
      expect(cache.changesSeen(first), 'an old catalog keeps its own').to.equal(20);
    });

    it('keeps the older position when the log cannot be read, and has none (checked again within a second) before any was read', async function () {
      positionFailure = new Error('table down');
      const catalog = (await cache.catalogAt('indexes/acme.csv'))!;
      expect(cache.changesSeen(catalog)).to.equal(undefined);
      expect(errors).to.have.length(1);
      positionFailure = undefined;
      now += 999;
      await cache.catalogAt('indexes/acme.csv');
      expect(cache.changesSeen(catalog), 'not before a second').to.equal(undefined);
      now += 1;
      await cache.catalogAt('indexes/acme.csv');
      expect(cache.changesSeen(catalog)).to.equal(10);
      positionFailure = new Error('table down again');
      head = 50;
      now += 61_000;
      await cache.catalogAt('indexes/acme.csv');
      expect(cache.changesSeen(catalog), 'an older position is still one the catalog includes').to.equal(10);
      expect(source.loads).to.equal(1);
    });

    it('gives the rows released now the position of the catalog they come from', async function () {
      source.stored = {
        version: 'w1',
        records: [
          { row: 1, Symbol: 'OPEN', ShortDescriptionPt: '', ShortDescription: '', FileName: 'open.csv' },
          { row: 2, Symbol: 'LATER', ShortDescriptionPt: '', ShortDescription: '', FileName: 'later.csv', availableFrom: new Date(now + 3_600_000) },
        ],
      };
      const released = (await cache.catalogAt('indexes/acme.csv'))!;
      expect(released.count).to.equal(1);
      expect(cache.changesSeen(released)).to.equal(10);
      head = 15;
      now += 61_000;
      expect(await cache.catalogAt('indexes/acme.csv')).to.equal(released);
      expect(cache.changesSeen(released)).to.equal(15);
    });
  });
});
