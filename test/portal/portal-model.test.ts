import { expect } from 'chai';
import { breadcrumbOf, catalogTotals, formatSize, formatWindow, portalFilesOf, releaseWindowOf, tableRows, type ListedItem, type PortalFile, type TableView } from '../../portal/src/catalog.js';
import { commandsFor, shellQuote } from '../../portal/src/commands.js';

/*
 * The portal's own logic, outside the browser: the files /list gives, the totals, the table's
 * folders, flat view, search and sort, and the copy-ready commands.
 */

const paths: Readonly<Record<string, string>> = { CURVE: 'rates/curve.csv', JAN: 'rates/2024/jan.csv', TOP: 'top.csv' };

function listed(overrides: Partial<ListedItem> & Pick<ListedItem, 'symbol'>): ListedItem {
  return {
    description: `Description of ${overrides.symbol}`,
    fileName: paths[overrides.symbol] ?? `${overrides.symbol.toLowerCase()}.csv`,
    size: 10,
    uploaded: '2024-01-02T10:30:00.000Z',
    etag: '"e"',
    ...overrides,
  };
}

function files(): PortalFile[] {
  return portalFilesOf([
    listed({ symbol: 'CURVE', description: 'Yield curve', size: 300 }),
    listed({ symbol: 'JAN', description: 'January', size: 20, uploaded: '2024-02-01T00:00:00.000Z' }),
    listed({ symbol: 'TOP', description: 'Top level', size: 5, availableFrom: '2024-03-01T00:00:00.000Z' }),
  ]);
}

const view = (overrides: Partial<TableView> = {}): TableView => ({ folder: '', query: '', sort: { key: 'name', descending: false }, flat: false, ...overrides });
const names = (rows: ReturnType<typeof tableRows>): string[] => rows.map((row) => (row.kind === 'folder' ? `${row.name}/` : row.file.symbol));

describe('the portal\'s file model (portal/src/catalog.ts)', function () {
  describe('portalFilesOf', function () {
    it('takes each listed file\'s storage path from its fileName, and searches symbol, description and path', function () {
      const [curve] = portalFilesOf([listed({ symbol: 'CURVE', description: 'Yield Curve' })]);

      expect(curve?.path).to.equal('rates/curve.csv');
      expect(curve?.haystack).to.equal('curve\nyield curve\nrates/curve.csv');
    });

    it('takes a release window from availableFrom and availableUntil, either end alone, and none where /list sends neither', function () {
      const [both, from, until, none] = portalFilesOf([
        listed({ symbol: 'CURVE', availableFrom: '2026-11-24T21:00:00.000Z', availableUntil: '2026-12-31T00:00:00.000Z' }),
        listed({ symbol: 'JAN', availableFrom: '2026-11-24T21:00:00.000Z' }),
        listed({ symbol: 'TOP', availableUntil: '2026-12-31T00:00:00.000Z' }),
        listed({ symbol: 'CURVE' }),
      ]);

      expect(both?.window).to.deep.equal({ from: '2026-11-24T21:00:00.000Z', until: '2026-12-31T00:00:00.000Z' });
      expect(from?.window).to.deep.equal({ from: '2026-11-24T21:00:00.000Z' });
      expect(until?.window).to.deep.equal({ until: '2026-12-31T00:00:00.000Z' });
      expect(none?.window).to.equal(undefined);
      expect([both, from, until, none].map((file) => formatWindow(file?.window))).to.deep.equal([
        'from 2026-11-24 21:00 UTC until 2026-12-31 00:00 UTC',
        'from 2026-11-24 21:00 UTC',
        'until 2026-12-31 00:00 UTC',
        '',
      ]);
      expect(releaseWindowOf({ availableUntil: '2026-12-31T00:00:00.000Z' })).to.deep.equal({ until: '2026-12-31T00:00:00.000Z' });
    });
  });

  it('catalogTotals counts the files and adds up their sizes (none: zero of each)', function () {
    expect(catalogTotals(files())).to.deep.equal({ files: 3, bytes: 325 });
    expect(catalogTotals([])).to.deep.equal({ files: 0, bytes: 0 });
  });

  describe('tableRows', function () {
    it('without a search shows the folder\'s subfolders (with their file count and size) first, then its own files', function () {
      const rows = tableRows(files(), view());

      expect(names(rows)).to.deep.equal(['rates/', 'TOP']);
      expect(rows[0]).to.include({ kind: 'folder', prefix: 'rates/', files: 2, size: 320 });
      expect(names(tableRows(files(), view({ folder: 'rates/' })))).to.deep.equal(['2024/', 'CURVE']);
    });

    it('with a search lists every file under the folder whose symbol, description or path holds it, in any case', function () {
      expect(names(tableRows(files(), view({ query: 'JANUARY' })))).to.deep.equal(['JAN']);
      expect(names(tableRows(files(), view({ query: 'rates/' })))).to.deep.equal(['CURVE', 'JAN']);
      expect(names(tableRows(files(), view({ query: 'curve' })))).to.deep.equal(['CURVE']);
      expect(names(tableRows(files(), view({ folder: 'rates/2024/', query: 'curve' })))).to.deep.equal([]);
    });

    it('flat lists every file under the folder, in no subfolders, in the sort order', function () {
      expect(names(tableRows(files(), view({ flat: true })))).to.deep.equal(['CURVE', 'JAN', 'TOP']);
      expect(names(tableRows(files(), view({ flat: true, folder: 'rates/' })))).to.deep.equal(['CURVE', 'JAN']);
      expect(names(tableRows(files(), view({ flat: true, sort: { key: 'size', descending: true } })))).to.deep.equal(['CURVE', 'JAN', 'TOP']);
      expect(names(tableRows(files(), view({ flat: true, query: 'jan' })))).to.deep.equal(['JAN']);
    });

    it('sorts files by the chosen column either way, ties by symbol', function () {
      const bySize = (descending: boolean) => names(tableRows(files(), view({ query: '.csv', sort: { key: 'size', descending } })));
      expect(bySize(false)).to.deep.equal(['TOP', 'JAN', 'CURVE']);
      expect(bySize(true)).to.deep.equal(['CURVE', 'JAN', 'TOP']);
      expect(names(tableRows(files(), view({ query: '.csv', sort: { key: 'uploaded', descending: true } })))).to.deep.equal(['JAN', 'CURVE', 'TOP']);
    });

    it('sorts by release window: by when it opens (or, open at the start, closes), files without one first going up and last going down', function () {
      const windowed = portalFilesOf([
        listed({ symbol: 'CURVE', availableUntil: '2024-02-15T00:00:00.000Z' }),
        listed({ symbol: 'JAN' }),
        listed({ symbol: 'TOP', availableFrom: '2024-03-01T00:00:00.000Z', availableUntil: '2024-04-01T00:00:00.000Z' }),
      ]);
      const byWindow = (descending: boolean) => names(tableRows(windowed, view({ query: '.csv', sort: { key: 'window', descending } })));

      expect(byWindow(false)).to.deep.equal(['JAN', 'CURVE', 'TOP']);
      expect(byWindow(true)).to.deep.equal(['TOP', 'CURVE', 'JAN']);
    });
  });

  it('breadcrumbOf names each folder from the top down with its prefix', function () {
    expect(breadcrumbOf('rates/2024/')).to.deep.equal([
      { name: 'rates', prefix: 'rates/' },
      { name: '2024', prefix: 'rates/2024/' },
    ]);
    expect(breadcrumbOf('')).to.deep.equal([]);
  });

  it('formatSize uses binary units', function () {
    expect([formatSize(0), formatSize(1023), formatSize(1536), formatSize(5 * 1024 ** 3)]).to.deep.equal(['0 B', '1023 B', '1.5 KiB', '5.0 GiB']);
  });
});

describe('the portal\'s copy-ready commands (portal/src/commands.ts)', function () {
  const target = { origin: 'https://files.example.net', symbol: 'CURVE', path: 'rates/curve.csv', s3Api: null };

  it('offers curl, dfg, requests and pandas, and aws s3 cp only when the S3-compatible API is on', function () {
    expect(commandsFor(target).map((command) => command.id)).to.deep.equal(['curl', 'dfg', 'python', 'pandas']);

    const withS3 = commandsFor({ ...target, s3Api: { endpointUrl: 'https://files.example.net/s3', bucket: 'acme' } });

    expect(withS3.map((command) => command.id)).to.deep.equal(['curl', 'dfg', 'python', 'pandas', 'aws']);
    expect(withS3.at(-1)?.text).to.equal("aws s3 cp 's3://acme/rates/curve.csv' 'curve.csv' --endpoint-url 'https://files.example.net/s3'");
  });

  it('reads the credentials from DFG_CLIENT_ID and DFG_CLIENT_SECRET, never holding a secret or a token', function () {
    const text = commandsFor(target).map((command) => command.text).join('\n');

    expect(text).to.include('$DFG_CLIENT_ID:$DFG_CLIENT_SECRET');
    expect(text).to.include('os.environ["DFG_CLIENT_SECRET"]');
    expect(text).not.to.match(/Bearer ey/);
  });

  it('quotes symbols and paths for the shell and for Python, whatever they hold', function () {
    const odd = commandsFor({ ...target, symbol: "O'NEIL $(rm)", path: "odd/it's \"here\".parquet" });
    const byId = new Map(odd.map((command) => [command.id, command.text]));

    expect(shellQuote("it's")).to.equal("'it'\\''s'");
    expect(byId.get('dfg')).to.equal(`DFG_URL='https://files.example.net' dfg download 'O'\\''NEIL $(rm)' -o 'it'\\''s "here".parquet'`);
    expect(byId.get('curl')).to.include(`'https://files.example.net/download/O'\\''NEIL%20%24(rm)'`);
    expect(byId.get('pandas')).to.include('pd.read_parquet(io.BytesIO(response.content))');
    expect(byId.get('python')).to.include('open("it\'s \\"here\\".parquet", "wb")');
  });
});
