import { expect } from 'chai';
import fc from 'fast-check';
import { compareUtf8 } from '../../src/application/file-access.js';
import { FileCatalog } from '../../src/domain/file-catalog.js';
import type { IndexRecord } from '../../src/domain/ports.js';

let rowNumber = 0;
function record(overrides: Partial<IndexRecord> & Pick<IndexRecord, 'Symbol'>): IndexRecord {
  rowNumber += 1;
  return { row: rowNumber, ShortDescriptionPt: 'Descrição', ShortDescription: 'Description', FileName: `data/${overrides.Symbol}.csv`, ...overrides };
}

describe('FileCatalog.fromIndex', function () {
  it('keeps every row in index order', function () {
    const { catalog, warnings } = FileCatalog.fromIndex([record({ Symbol: 'B' }), record({ Symbol: 'A' }), record({ Symbol: 'C' })]);
    expect([...catalog].map((entry) => entry.symbol)).to.deep.equal(['B', 'A', 'C']);
    expect(warnings).to.deep.equal([]);
  });

  describe('when ShortDescriptionPt is empty', function () {
    it('describes the file with ShortDescription', function () {
      const { catalog } = FileCatalog.fromIndex([record({ Symbol: 'A', ShortDescriptionPt: '', ShortDescription: 'English' })]);
      expect([...catalog][0]?.description).to.equal('English');
    });

    it('treats a blank ShortDescriptionPt as empty', function () {
      const { catalog } = FileCatalog.fromIndex([record({ Symbol: 'A', ShortDescriptionPt: '   ', ShortDescription: 'English' })]);
      expect([...catalog][0]?.description).to.equal('English');
    });
  });

  it('prefers ShortDescriptionPt when present', function () {
    const { catalog } = FileCatalog.fromIndex([record({ Symbol: 'A', ShortDescriptionPt: 'Português', ShortDescription: 'English' })]);
    expect([...catalog][0]?.description).to.equal('Português');
  });

  it('skips rows without a Symbol and warns with the row number', function () {
    const row = record({ Symbol: '  ' });
    const { catalog, warnings } = FileCatalog.fromIndex([row, record({ Symbol: 'A' })]);
    expect([...catalog].map((entry) => entry.symbol)).to.deep.equal(['A']);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.include({ row: row.row });
    expect(warnings[0]?.message).to.match(/no Symbol/);
  });

  it('skips rows without a FileName and warns', function () {
    const { catalog, warnings } = FileCatalog.fromIndex([record({ Symbol: 'A', FileName: '' })]);
    expect([...catalog]).to.deep.equal([]);
    expect(warnings[0]?.message).to.match(/no FileName/);
  });

  it('keeps the first row of a duplicate Symbol and warns about the later one', function () {
    const later = record({ Symbol: 'A', FileName: 'second.csv' });
    const { catalog, warnings } = FileCatalog.fromIndex([record({ Symbol: 'A', FileName: 'first.csv' }), later]);
    expect([...catalog].map((entry) => entry.fileName)).to.deep.equal(['first.csv']);
    expect(warnings).to.deep.equal([{ row: later.row, message: 'duplicate Symbol "A": the first row is kept' }]);
  });

  for (const fileName of ['../etc/passwd', '/abs/path.csv', 'a//b.csv', 'a\\b.csv']) {
    it(`skips a row whose FileName "${fileName}" could leave the store`, function () {
      const { catalog, warnings } = FileCatalog.fromIndex([record({ Symbol: 'A', FileName: fileName })]);
      expect([...catalog]).to.deep.equal([]);
      expect(warnings[0]?.message).to.match(/unsafe FileName/);
    });
  }

  it('trims whitespace around Symbol and FileName', function () {
    const { catalog } = FileCatalog.fromIndex([record({ Symbol: ' A ', FileName: ' data/a.csv ' })]);
    expect(catalog.findBySymbol('A')?.fileName).to.equal('data/a.csv');
  });

  it('carries the parser’s rejected rows into its warnings first', function () {
    const { warnings } = FileCatalog.fromIndex([record({ Symbol: 'A' })], [{ row: 7, message: 'wrong number of cells (3)' }]);
    expect(warnings).to.deep.equal([{ row: 7, message: 'wrong number of cells (3)' }]);
  });
});

describe('FileCatalog text', function () {
  const texts = ['Cotações diárias', 'ÿ þ ß \u00a0 ¤', 'C1 \u0080\u0085\u009f controls', 'euro € and 𝄞'];
  for (const text of texts) {
    it(`gives back ${JSON.stringify(text)} exactly, from a catalog with it and from one with only Latin-1 beside it`, function () {
      const mixed = FileCatalog.fromIndex([record({ Symbol: 'A', ShortDescriptionPt: text }), record({ Symbol: 'B', ShortDescriptionPt: 'plain' })]).catalog;
      expect(mixed.findBySymbol('A')?.description).to.equal(text);
      expect(mixed.findBySymbol('B')?.description).to.equal('plain');
      expect(mixed.findByFileName('data/A.csv')?.symbol).to.equal('A');
    });
  }
});

describe('FileCatalog lookups', function () {
  const { catalog } = FileCatalog.fromIndex([
    record({ Symbol: 'A', FileName: 'shared/file.csv' }),
    record({ Symbol: 'B', FileName: 'shared/file.csv' }),
    record({ Symbol: 'C', FileName: 'c.csv' }),
  ]);

  it('finds an entry by symbol, case-sensitively', function () {
    expect(catalog.findBySymbol('C')?.fileName).to.equal('c.csv');
    expect(catalog.findBySymbol('c')).to.equal(undefined);
  });

  it('finds the first entry listing a file name', function () {
    expect(catalog.findByFileName('shared/file.csv')?.symbol).to.equal('A');
  });

  it('finds nothing for a file name the index does not list', function () {
    expect(catalog.findByFileName('other.csv')).to.equal(undefined);
  });
});

describe('FileCatalog.compareFileNamesAt', function () {
  // Latin-1 only (the catalog keeps bytes), and with wider characters (the catalog keeps a string).
  for (const [kind, letters] of [
    ['Latin-1 paths', ['a', 'b', 'z', 'é', 'ÿ', '~']],
    ['paths with characters beyond Latin-1', ['a', 'z', 'é', '\uFF01', '\uE000', '\u{1F600}', '\u{10FFFD}']],
  ] as const) {
    it(`orders two rows' ${kind} as compareUtf8 orders the paths`, function () {
      const name = fc.array(fc.constantFrom(...letters), { maxLength: 5 }).map((parts) => `d/${parts.join('')}x`);
      fc.assert(
        fc.property(fc.array(name, { minLength: 1, maxLength: 12 }), (names) => {
          const catalog = FileCatalog.fromIndex(names.map((FileName, i) => record({ Symbol: `C${i}`, FileName }))).catalog;
          for (let a = 0; a < catalog.count; a += 1) {
            for (let b = 0; b < catalog.count; b += 1) {
              expect(catalog.compareFileNamesAt(a, b)).to.equal(compareUtf8(catalog.fileNameAt(a), catalog.fileNameAt(b)));
            }
          }
        }),
      );
    });
  }
});
