import { expect } from 'chai';
import { LruBoundedMemory } from '../../src/adapters/index/lru-bounded-memory.js';
import { CatalogCache } from '../../src/domain/catalog-cache.js';
import { Entitlement } from '../../src/domain/entitlement.js';
import { NotEntitled } from '../../src/domain/errors.js';
import { FileCatalog } from '../../src/domain/file-catalog.js';
import type { Clock, IndexRecord, IndexRowSink, IndexSource, LoadedIndex, Principal } from '../../src/domain/ports.js';

const at = (iso: string): Date => new Date(iso);
const ms = (iso: string): number => Date.parse(iso);

let rowNumber = 0;
function record(symbol: string, window: { from?: string; until?: string } = {}): IndexRecord {
  rowNumber += 1;
  return {
    row: rowNumber,
    Symbol: symbol,
    ShortDescriptionPt: '',
    ShortDescription: `Description of ${symbol}`,
    FileName: `data/${symbol}.csv`,
    ...(window.from !== undefined && { availableFrom: at(window.from) }),
    ...(window.until !== undefined && { availableUntil: at(window.until) }),
  };
}

/** A trading day: history licensed until the year's end, yesterday's file, today's released at 21:00, tomorrow's. */
const day = [
  record('HISTORY', { until: '2027-01-01T00:00:00Z' }),
  record('ALWAYS'),
  record('TODAY', { from: '2026-11-24T21:00:00Z' }),
  record('TOMORROW', { from: '2026-11-25T21:00:00Z' }),
];

const symbolsOf = (catalog: FileCatalog): string[] => [...catalog].map((entry) => entry.symbol);

describe('release windows (AvailableFrom, AvailableUntil)', function () {
  describe('FileCatalog.releasedAt', function () {
    const { catalog } = FileCatalog.fromIndex(day, [], 'v1');

    it('keeps only the rows released at that moment, in index order, each window bound to the millisecond', function () {
      expect(symbolsOf(catalog.releasedAt(ms('2026-11-24T20:59:59.999Z')).catalog)).to.deep.equal(['HISTORY', 'ALWAYS']);
      expect(symbolsOf(catalog.releasedAt(ms('2026-11-24T21:00:00.000Z')).catalog)).to.deep.equal(['HISTORY', 'ALWAYS', 'TODAY']);
      expect(symbolsOf(catalog.releasedAt(ms('2026-12-31T23:59:59.999Z')).catalog)).to.deep.equal(['HISTORY', 'ALWAYS', 'TODAY', 'TOMORROW']);
      expect(symbolsOf(catalog.releasedAt(ms('2027-01-01T00:00:00.000Z')).catalog)).to.deep.equal(['ALWAYS', 'TODAY', 'TOMORROW']);
    });

    it('says how long the set holds: from the last boundary passed to the next one ahead', function () {
      const before = catalog.releasedAt(ms('2026-11-24T12:00:00Z'));
      expect(before.since).to.equal(Number.NEGATIVE_INFINITY);
      expect(before.until).to.equal(ms('2026-11-24T21:00:00Z'));
      const evening = catalog.releasedAt(ms('2026-11-24T21:00:00Z'));
      expect(evening.since).to.equal(ms('2026-11-24T21:00:00Z'));
      expect(evening.until).to.equal(ms('2026-11-25T21:00:00Z'));
      const after = catalog.releasedAt(ms('2027-06-01T00:00:00Z'));
      expect(after.since).to.equal(ms('2027-01-01T00:00:00Z'));
      expect(after.until).to.equal(Number.POSITIVE_INFINITY);
    });

    it('names the released set in its version, alike on every instance and different for every set', function () {
      const first = catalog.releasedAt(ms('2026-11-24T12:00:00Z')).catalog;
      const again = FileCatalog.fromIndex(day, [], 'v1').catalog.releasedAt(ms('2026-11-24T13:00:00Z')).catalog;
      const later = catalog.releasedAt(ms('2026-11-24T21:00:00Z')).catalog;
      expect(first.version).to.equal(again.version);
      expect(first.version).to.not.equal(later.version);
      expect(first.version).to.not.equal('v1');
    });

    it('hands out the catalog itself when every row is released, and when no row has a window', function () {
      expect(catalog.releasedAt(ms('2026-12-01T00:00:00Z')).catalog).to.equal(catalog);
      const plain = FileCatalog.fromIndex([record('A'), record('B')]).catalog;
      expect(plain.hasWindows).to.equal(false);
      expect(plain.releasedAt(0).catalog).to.equal(plain);
    });

    it('keeps each released entry’s window, and finds released entries by symbol and by path only', function () {
      const released = catalog.releasedAt(ms('2026-11-24T22:00:00Z')).catalog;
      expect(released.findBySymbol('TODAY')).to.deep.equal({
        symbol: 'TODAY',
        description: 'Description of TODAY',
        fileName: 'data/TODAY.csv',
        availableFrom: at('2026-11-24T21:00:00Z'),
      });
      expect(released.findBySymbol('HISTORY')?.availableUntil).to.deep.equal(at('2027-01-01T00:00:00Z'));
      expect(released.findBySymbol('ALWAYS')).to.not.have.property('availableFrom');
      expect(released.findBySymbol('TOMORROW')).to.equal(undefined);
      expect(released.findByFileName('data/TOMORROW.csv')).to.equal(undefined);
    });

    it('accounts for the windows in its bytes: 16 per row, and nothing for an index without any', function () {
      const withWindows = FileCatalog.fromIndex([record('A', { from: '2026-01-01' }), record('B')]).catalog;
      const without = FileCatalog.fromIndex([record('A'), record('B')]).catalog;
      expect(withWindows.bytes - without.bytes).to.equal(2 * 160 + 2 * 16);
    });
  });

  describe('FileCatalog.fromIndex', function () {
    it('leaves out a row whose window is empty or inverted, with a warning naming the row', function () {
      const row = record('NEVER', { from: '2026-12-01T00:00:00Z', until: '2026-12-01T00:00:00Z' });
      const { catalog, warnings } = FileCatalog.fromIndex([record('A'), row]);
      expect(symbolsOf(catalog)).to.deep.equal(['A']);
      expect(warnings).to.deep.equal([
        { row: row.row, message: 'AvailableUntil (2026-12-01T00:00:00.000Z) is not after AvailableFrom (2026-12-01T00:00:00.000Z): the file would never be served (Symbol "NEVER")' },
      ]);
    });

    it('gives rows before the first windowed one an unbounded window', function () {
      const { catalog } = FileCatalog.fromIndex([record('A'), record('B'), record('C', { until: '2020-01-01' })]);
      expect(symbolsOf(catalog.releasedAt(ms('2026-01-01T00:00:00Z')).catalog)).to.deep.equal(['A', 'B']);
    });
  });

  describe('CatalogCache', function () {
    let now: number;
    let loads: number;
    const clock: Clock = { now: () => new Date(now) };
    const source: IndexSource = {
      version: async () => 'v1',
      async load<S extends IndexRowSink>(_path: string, newSink: () => S): Promise<LoadedIndex<S>> {
        loads += 1;
        const rows = newSink();
        for (const row of day) rows.record(row);
        return { rows, version: 'v1' };
      },
    };
    let cache: CatalogCache;

    beforeEach(function () {
      now = ms('2026-11-24T20:59:59Z');
      loads = 0;
      // A day between index checks: only a window boundary can change what is served.
      cache = new CatalogCache({ source, memory: new LruBoundedMemory(1 << 20), clock, refreshAfterMs: 86_400_000 });
    });

    it('serves a file from its AvailableFrom on, without reading the index again', async function () {
      const before = await cache.catalogAt('indexes/acme.csv');
      expect(symbolsOf(before as FileCatalog)).to.not.include('TODAY');
      expect(await cache.catalogAt('indexes/acme.csv')).to.equal(before);
      now = ms('2026-11-24T21:00:00Z');
      const after = await cache.catalogAt('indexes/acme.csv');
      expect(symbolsOf(after as FileCatalog)).to.include('TODAY');
      expect(loads).to.equal(1);
    });

    it('keeps the released set until the next boundary rather than working it out per request', async function () {
      const first = await cache.catalogAt('indexes/acme.csv');
      now += 500;
      expect(await cache.catalogAt('indexes/acme.csv')).to.equal(first);
      now = ms('2026-11-24T21:30:00Z');
      const evening = await cache.catalogAt('indexes/acme.csv');
      now = ms('2026-11-25T20:00:00Z');
      expect(await cache.catalogAt('indexes/acme.csv')).to.equal(evening);
    });

    it('accounts the released rows in the bounded memory: their own catalog while some row is hidden, next to nothing once all are released', async function () {
      const memory = new LruBoundedMemory(1 << 20);
      const bounded = new CatalogCache({ source, memory, clock, refreshAfterMs: 86_400_000 });
      const hidden = (await bounded.catalogAt('indexes/acme.csv')) as FileCatalog;
      const releasedBytes = hidden.bytes;
      const withHidden = memory.stats().bytes;
      now = ms('2026-12-01T00:00:00Z');
      const all = (await bounded.catalogAt('indexes/acme.csv')) as FileCatalog;
      expect(all.count).to.equal(day.length);
      expect(withHidden - memory.stats().bytes).to.be.within(releasedBytes - 1, releasedBytes + 1);
    });

    it('refuses a file outside its window as not entitled, saying when it is served', async function () {
      const entitlement = new Entitlement(cache, clock);
      const acme: Principal = { clientId: 'acme', indexPath: 'indexes/acme.csv' };
      const refusal = await entitlement.entryForSymbol(acme, 'TODAY').catch((error: unknown) => error);
      expect(refusal).to.be.instanceOf(NotEntitled);
      expect((refusal as Error).message).to.equal(
        'Symbol "TODAY" is outside its release window (from 2026-11-24T21:00:00.000Z): it is served only within it',
      );
      const byPath = await entitlement.entryForPath(acme, 'data/TOMORROW.csv').catch((error: unknown) => error);
      expect((byPath as Error).message).to.match(/^File "data\/TOMORROW.csv" is outside its release window \(from 2026-11-25T21:00:00.000Z\)/);
      const stranger = await entitlement.entryForSymbol(acme, 'NOT-LISTED').catch((error: unknown) => error);
      expect((stranger as Error).message).to.equal('Symbol "NOT-LISTED" is not in the subscription of client "acme"');
      now = ms('2026-11-24T21:00:00Z');
      expect((await entitlement.entryForSymbol(acme, 'TODAY')).symbol).to.equal('TODAY');
    });
  });
});
