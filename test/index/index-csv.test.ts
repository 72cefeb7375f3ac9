import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { inSlices, parseIndexCsv, streamIndexCsv } from '../../src/adapters/index/index-csv.js';
import { IndexMalformed } from '../../src/domain/errors.js';
import { FileCatalog } from '../../src/domain/file-catalog.js';

// A byte-identical copy of the vendor's export (BOM, CRLF, quoting), kept in the repository so that a
// fresh clone with nothing beside it passes.
const vendorSample = new URL('../fixtures/index-sample.csv', import.meta.url);

describe('parseIndexCsv', function () {
  describe('on the vendor sample (BOM, CRLF, quoted cells, accents, extra column)', function () {
    it('reads every row with its cells intact', async function () {
      const { records, rejectedRows } = await parseIndexCsv(await readFile(vendorSample, 'utf8'));
      expect(rejectedRows).to.deep.equal([]);
      expect(records).to.have.length(10);
      expect(records[0]).to.deep.include({ Symbol: 'B3_COTAHIST_2024', FileName: 'b3/cotahist/COTAHIST_A2024.parquet' });
      expect(records.find((r) => r.Symbol === 'DI1_CURVE_DAILY')?.ShortDescriptionPt).to.equal('Curva DI1, fechamento diário');
      expect(records.find((r) => r.Symbol === 'SELIC_HISTORY')?.ShortDescriptionPt).to.equal('Taxa Selic: histórico "meta" e efetiva');
      expect(records.find((r) => r.Symbol === 'OPTIONS_GREEKS_2024')?.FileName).to.equal('derivatives/options/greeks 2024.parquet');
    });

    it('builds a catalog that falls back to ShortDescription where the Portuguese one is empty', async function () {
      const { records } = await parseIndexCsv(await readFile(vendorSample, 'utf8'));
      const { catalog, warnings } = FileCatalog.fromIndex(records);
      expect(warnings).to.deep.equal([]);
      expect(catalog.findBySymbol('IBOV_COMPOSITION')?.description).to.equal('Ibovespa composition');
    });
  });

  it('accepts LF line endings and no BOM', async function () {
    const { records } = await parseIndexCsv('Symbol,FileName\nA,a.csv\nB,b.csv\n');
    expect(records.map((r) => r.Symbol)).to.deep.equal(['A', 'B']);
  });

  it('defaults missing description columns to empty', async function () {
    const { records } = await parseIndexCsv('Symbol,FileName\nA,a.csv');
    expect(records[0]).to.deep.include({ ShortDescriptionPt: '', ShortDescription: '' });
  });

  it('accepts header names with stray spaces', async function () {
    const { records } = await parseIndexCsv(' Symbol , FileName \r\nA,a.csv\r\n');
    expect(records[0]).to.deep.include({ Symbol: 'A', FileName: 'a.csv' });
  });

  it('skips blank lines', async function () {
    const { records } = await parseIndexCsv('Symbol,FileName\r\n\r\nA,a.csv\r\n\r\n');
    expect(records).to.have.length(1);
  });

  it('accepts a header-only index as an empty one', async function () {
    expect((await parseIndexCsv('\uFEFFSymbol,ShortDescriptionPt,ShortDescription,FileName\r\n')).records).to.deep.equal([]);
  });

  it('keeps a newline inside a quoted cell', async function () {
    const { records } = await parseIndexCsv('Symbol,ShortDescriptionPt,FileName\r\nA,"two\r\nlines",a.csv\r\n');
    expect(records[0]?.ShortDescriptionPt).to.equal('two\r\nlines');
  });

  it('rejects a row with a different number of cells, naming its row, and keeps the others', async function () {
    const { records, rejectedRows } = await parseIndexCsv('Symbol,FileName\r\nA,a.csv,extra\r\nB,b.csv\r\nC\r\n');
    expect(records.map((r) => r.Symbol)).to.deep.equal(['B']);
    expect(rejectedRows).to.deep.equal([
      { row: 1, message: 'wrong number of cells (3)' },
      { row: 3, message: 'wrong number of cells (1)' },
    ]);
  });

  describe('with AvailableFrom and AvailableUntil columns', function () {
    it('reads dates as midnight UTC, date-times with or without a zone, and empty cells as unbounded', async function () {
      const { records, rejectedRows } = await parseIndexCsv(
        'Symbol,FileName,AvailableFrom,AvailableUntil\r\n' +
          'A,a.csv,2026-11-24,2027-01-01T00:00:00Z\r\n' +
          'B,b.csv,2026-11-24T21:00,\r\n' +
          'C,c.csv, 2026-11-24T18:00:00-03:00 ,\r\n' +
          'D,d.csv,,\r\n',
      );
      expect(rejectedRows).to.deep.equal([]);
      expect(records.map((r) => [r.Symbol, r.availableFrom?.toISOString(), r.availableUntil?.toISOString()])).to.deep.equal([
        ['A', '2026-11-24T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
        ['B', '2026-11-24T21:00:00.000Z', undefined],
        ['C', '2026-11-24T21:00:00.000Z', undefined],
        ['D', undefined, undefined],
      ]);
      expect(records[3]).to.not.have.property('availableFrom');
    });

    it('rejects a row whose window cell is not an ISO 8601 date, naming the column, and keeps the others', async function () {
      const { records, rejectedRows } = await parseIndexCsv(
        'Symbol,FileName,AvailableFrom,AvailableUntil\r\nA,a.csv,24/11/2026,\r\nB,b.csv,,2026-02-30\r\nC,c.csv,2026-11-24,\r\n',
      );
      expect(records.map((r) => r.Symbol)).to.deep.equal(['C']);
      expect(rejectedRows).to.deep.equal([
        { row: 1, message: 'AvailableFrom: "24/11/2026" is not an ISO 8601 date or date-time (e.g. 2026-12-01 or 2026-12-01T21:00:00Z) (Symbol "A")' },
        { row: 2, message: 'AvailableUntil: "2026-02-30" is not an ISO 8601 date or date-time (e.g. 2026-12-01 or 2026-12-01T21:00:00Z) (Symbol "B")' },
      ]);
    });

    it('matches the two column names without regard to case (availableFrom, AVAILABLEUNTIL are the window columns)', async function () {
      const { records } = await parseIndexCsv('Symbol,FileName,availableFrom,AVAILABLEUNTIL\r\nA,a.csv,2026-12-01,2027-01-01\r\n');
      expect(records[0]?.availableFrom?.toISOString()).to.equal('2026-12-01T00:00:00.000Z');
      expect(records[0]?.availableUntil?.toISOString()).to.equal('2027-01-01T00:00:00.000Z');
    });
  });

  describe('with a header that looks like a window column but is neither (fails closed: never serves every row at once)', function () {
    for (const header of ['Available From', 'available_until', 'AvailableTo', 'Available-From']) {
      it(`refuses the whole index, naming "${header}"`, async function () {
        const failure = await parseIndexCsv(`Symbol,FileName,${header}\r\nA,a.csv,2099-01-01\r\n`).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(failure).to.be.instanceOf(IndexMalformed);
        expect((failure as Error).message).to.include(`"${header}"`).and.include('looks like a release window column');
      });
    }
  });

  const malformed: Array<[string, string, RegExp]> = [
    ['an empty file', '', /empty/],
    ['a BOM only', '\uFEFF', /empty/],
    ['no Symbol column', 'Ticker,FileName\r\nA,a.csv', /no Symbol column/],
    ['no FileName column', 'Symbol,Path\r\nA,a.csv', /no FileName column/],
    ['an unterminated quote', 'Symbol,FileName\r\nA,"a.csv\r\nB,b.csv', /not valid CSV/],
    ['text after a closing quote', 'Symbol,FileName\r\nA,"a"b\r\n', /not valid CSV/],
    ['duplicate headers', 'Symbol,Symbol,FileName\r\nA,B,c\r\n', /not valid CSV/],
    ['binary garbage', '\u0000\u0001PAR1\u0002\u0003', /no Symbol or FileName column/],
  ];
  for (const [condition, text, message] of malformed) {
    it(`throws IndexMalformed for ${condition}`, async function () {
      const failure = await parseIndexCsv(text).catch((error: unknown) => error);
      expect(failure).to.be.instanceOf(IndexMalformed);
      expect((failure as Error).message).to.match(message);
    });
  }
});

describe('streamIndexCsv sharing the thread', function () {
  const rowOf = (i: number): string => `S${String(i).padStart(6, '0')},Cotações diárias 📈 ${String(i).padStart(6, '0')},m/${i % 10}/S${i}.csv`;
  const rows = 20_000;
  const text = `Symbol,ShortDescriptionPt,FileName\r\n${Array.from({ length: rows }, (_, i) => rowOf(i)).join('\r\n')}\r\n`;

  describe('when an index of 20,000 rows arrives in one piece, 1,000 characters a slice', function () {
    it('hands the parser pieces of at most 1,000 characters, a turn of the event loop before each but the first, never cutting a surrogate pair', async function () {
      let yields = 0;
      const pieces: string[] = [];
      async function* whole(): AsyncGenerator<string> {
        yield text;
      }
      for await (const piece of inSlices(whole(), { charsPerSlice: 1000, yieldToLoop: async () => void (yields += 1) })) pieces.push(piece);

      expect(pieces.join('')).to.equal(text);
      expect(Math.max(...pieces.map((piece) => piece.length))).to.be.at.most(1000);
      expect(pieces.filter((piece) => /^[\udc00-\udfff]|[\ud800-\udbff]$/.test(piece))).to.deep.equal([]);
      expect(yields).to.equal(pieces.length - 1);
    });

    it('parses every row whole, with at least one turn of the event loop per 1,000 characters', async function () {
      let yields = 0;
      const descriptions: string[] = [];
      await streamIndexCsv(
        [text],
        { record: (record) => descriptions.push(record.ShortDescriptionPt), rejected: () => expect.fail('no row is rejected') },
        { charsPerSlice: 1000, yieldToLoop: async () => void (yields += 1) },
      );

      expect(descriptions).to.have.length(rows);
      expect(yields).to.be.at.least(Math.floor(text.length / 1000) - 1);
      // A lone surrogate would have reached the parser as U+FFFD.
      expect(descriptions.filter((description, i) => description !== `Cotações diárias 📈 ${String(i).padStart(6, '0')}`)).to.deep.equal([]);
    });
  });

  describe('when the sink throws (the change scanner over its budget)', function () {
    it('stops at that row and throws the sink\'s error as it is, not IndexMalformed', async function () {
      class Full extends Error {}
      let recorded = 0;
      const failure = await streamIndexCsv([text], {
        record: () => {
          recorded += 1;
          if (recorded === 100) throw new Full('over budget');
        },
        rejected: () => expect.fail('no row is rejected'),
      }).then(
        () => expect.fail('the sink threw'),
        (error: unknown) => error,
      );
      expect(failure).to.be.instanceOf(Full);
      // The parse stopped there, not at the end of the index.
      expect(recorded).to.be.below(rows);
    });
  });
});
