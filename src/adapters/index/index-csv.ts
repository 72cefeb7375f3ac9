import { parseString } from 'fast-csv';
import { IndexMalformed } from '../../domain/errors.js';
import type { IndexRecord, IndexRowWarning } from '../../domain/ports.js';

const requiredColumns = ['Symbol', 'FileName'] as const;
const byteOrderMark = '\uFEFF';

export interface ParsedIndexCsv {
  readonly records: IndexRecord[];
  readonly rejectedRows: IndexRowWarning[];
}

/**
 * Parses a vendor index as exported: optional UTF-8 BOM, CRLF or LF, RFC 4180 quoting, extra columns
 * (ignored). Rows with a different number of cells than the header are rejected one by one; a file
 * that is not CSV at all, or lacks a `Symbol` or `FileName` column, throws `IndexMalformed`.
 */
export function parseIndexCsv(text: string): Promise<ParsedIndexCsv> {
  const content = text.startsWith(byteOrderMark) ? text.slice(byteOrderMark.length) : text;
  if (content.trim() === '') return Promise.reject(new IndexMalformed('The index is empty: it has no header row'));

  return new Promise((resolve, reject) => {
    const records: IndexRecord[] = [];
    const rejectedRows: IndexRowWarning[] = [];
    let row = 0;
    let failed = false;
    const fail = (message: string, cause?: unknown) => {
      if (failed) return;
      failed = true;
      reject(new IndexMalformed(message, { cause }));
    };

    const stream = parseString<Record<string, string>, Record<string, string>>(content, {
      headers: (headers) => headers.map((header) => header?.trim()),
      strictColumnHandling: true,
      ignoreEmpty: true,
    });
    stream
      .on('headers', (headers: string[]) => {
        const missing = requiredColumns.filter((column) => !headers.includes(column));
        if (missing.length > 0) {
          fail(`The index has no ${missing.join(' or ')} column (columns found: ${headers.join(', ')})`);
          stream.destroy();
        }
      })
      .on('data', (cells: Record<string, string>) => {
        row += 1;
        records.push({
          row,
          Symbol: cells['Symbol'] ?? '',
          FileName: cells['FileName'] ?? '',
          ShortDescriptionPt: cells['ShortDescriptionPt'] ?? '',
          ShortDescription: cells['ShortDescription'] ?? '',
        });
      })
      .on('data-invalid', (cells: unknown) => {
        row += 1;
        const count = Array.isArray(cells) ? cells.length : 0;
        rejectedRows.push({ row, message: `wrong number of cells (${count})` });
      })
      .on('error', (error: Error) => fail(`The index is not valid CSV: ${error.message}`, error))
      .on('end', () => {
        if (!failed) resolve({ records, rejectedRows });
      });
  });
}
