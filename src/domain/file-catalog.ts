import type { IndexRecord, IndexRowWarning } from './ports.js';
import { validateStoragePath } from './storage-path.js';

/** One file a client is entitled to, as its index describes it. */
export interface CatalogEntry {
  readonly symbol: string;
  readonly description: string;
  /** Storage path of the file. */
  readonly fileName: string;
}

/** Why an index row did not make it into the catalog. */
export type CatalogWarning = IndexRowWarning;

/**
 * A client's catalog: the rows of its index, in index order, each with a description
 * (`ShortDescriptionPt`, or `ShortDescription` where that is empty).
 */
export class FileCatalog {
  readonly entries: readonly CatalogEntry[];
  private readonly bySymbol: ReadonlyMap<string, CatalogEntry>;
  private readonly byPath: ReadonlyMap<string, CatalogEntry>;

  private constructor(entries: readonly CatalogEntry[]) {
    this.entries = entries;
    this.bySymbol = new Map(entries.map((entry) => [entry.symbol, entry]));
    const byPath = new Map<string, CatalogEntry>();
    for (const entry of entries) {
      if (!byPath.has(entry.fileName)) byPath.set(entry.fileName, entry);
    }
    this.byPath = byPath;
  }

  /**
   * Builds the catalog from index records. Rows without a Symbol or FileName, with a FileName that
   * is not a safe storage path, or repeating an earlier Symbol (the first row wins) are left out and
   * reported as warnings.
   */
  static fromIndex(
    records: readonly IndexRecord[],
    rejectedRows: readonly IndexRowWarning[] = [],
  ): { catalog: FileCatalog; warnings: CatalogWarning[] } {
    const entries: CatalogEntry[] = [];
    const warnings: CatalogWarning[] = [...rejectedRows];
    const seen = new Set<string>();
    for (const record of records) {
      const symbol = record.Symbol.trim();
      const fileName = record.FileName.trim();
      if (symbol === '') {
        warnings.push({ row: record.row, message: `no Symbol (FileName "${fileName}")` });
        continue;
      }
      if (fileName === '') {
        warnings.push({ row: record.row, message: `no FileName (Symbol "${symbol}")` });
        continue;
      }
      if (seen.has(symbol)) {
        warnings.push({ row: record.row, message: `duplicate Symbol "${symbol}": the first row is kept` });
        continue;
      }
      try {
        validateStoragePath(fileName);
      } catch (error) {
        warnings.push({ row: record.row, message: `unsafe FileName: ${(error as Error).message}` });
        continue;
      }
      seen.add(symbol);
      entries.push({ symbol, fileName, description: describe(record) });
    }
    return { catalog: new FileCatalog(entries), warnings };
  }

  findBySymbol(symbol: string): CatalogEntry | undefined {
    return this.bySymbol.get(symbol);
  }

  findByFileName(fileName: string): CatalogEntry | undefined {
    return this.byPath.get(fileName);
  }
}

function describe(record: IndexRecord): string {
  const portuguese = record.ShortDescriptionPt.trim();
  return portuguese !== '' ? portuguese : record.ShortDescription.trim();
}
