import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parse } from 'fast-csv';
import { IndexMalformed } from '../../domain/errors.js';
import type { IndexRecord, IndexRowSink, IndexRowWarning } from '../../domain/ports.js';
import { InvalidInstant, parseIsoInstant } from '../../text/iso-instant.js';

const requiredColumns = ['Symbol', 'FileName'] as const;
const byteOrderMark = '\uFEFF';

/** How the parser shares the thread: at most `charsPerSlice` characters parsed between two turns of the event loop. */
export interface ParseSlices {
  readonly yieldToLoop: () => Promise<void>;
  readonly charsPerSlice: number;
}

/**
 * fast-csv parses a piece it is given in one go: a 1 MiB piece held the event loop 100 to 300 ms
 * on a loaded machine. 64 Ki characters (some 700 rows of a vendor
 * index) keep a slice to a few milliseconds.
 */
const productionSlices: ParseSlices = { yieldToLoop: () => nextTurn(), charsPerSlice: 64 * 1024 };

export interface ParsedIndexCsv {
  readonly records: IndexRecord[];
  readonly rejectedRows: IndexRowWarning[];
}

/** Parses a whole index held as text, keeping every record (for small indexes and tests). */
export async function parseIndexCsv(text: string): Promise<ParsedIndexCsv> {
  const records: IndexRecord[] = [];
  const rejectedRows: IndexRowWarning[] = [];
  await streamIndexCsv([text], { record: (record) => records.push(record), rejected: (warning) => rejectedRows.push(warning) });
  return { records, rejectedRows };
}

/**
 * Parses a vendor index as exported, piece by piece as it arrives, handing each row to `sink`:
 * optional UTF-8 BOM, CRLF or LF, RFC 4180 quoting, extra columns (ignored). The optional
 * `AvailableFrom` and `AvailableUntil` cells are ISO 8601 dates or date-times (UTC unless they say
 * otherwise; empty: unbounded). Rows with a different number of cells than the header, or a window
 * cell that is not such a date, are rejected one by one (a date read wrong would open or close
 * access); a file that is not CSV at all, or lacks a `Symbol` or `FileName` column, throws
 * `IndexMalformed`. Only the row being parsed is held. The text reaches the parser in pieces of at
 * most `slices.charsPerSlice` characters, with a turn of the event loop before each but the first.
 * An error the sink throws (the change scanner's budget, say) stops the parse and is thrown as it
 * is: the sink's, not the index's.
 */
export async function streamIndexCsv(text: AsyncIterable<string> | Iterable<string>, sink: IndexRowSink, slices: ParseSlices = productionSlices): Promise<void> {
  let row = 0;
  let headersSeen = false;
  // Most indexes have no release windows: their rows skip the window cells altogether.
  let windowColumns = false;
  let refusal: IndexMalformed | undefined;
  let sinkFailure: { readonly error: unknown } | undefined;
  const parser = parse<Record<string, string>, Record<string, string>>({
    headers: (headers) => headers.map((header) => windowColumnNamed(header?.trim())),
    strictColumnHandling: true,
    ignoreEmpty: true,
  });
  parser
    .on('headers', (headers: string[]) => {
      headersSeen = true;
      windowColumns = headers.includes('AvailableFrom') || headers.includes('AvailableUntil');
      const missing = requiredColumns.filter((column) => !headers.includes(column));
      const problem =
        missing.length > 0
          ? `The index has no ${missing.join(' or ')} column (columns found: ${headers.join(', ')})`
          : windowHeaderProblem(headers);
      if (problem !== undefined) {
        refusal = new IndexMalformed(problem);
        parser.destroy(refusal);
      }
    })
    // Rows and rejected rows are numbered in the order the parser emits them, synchronously.
    .on('data', (cells: Record<string, string>) => {
      row += 1;
      let window: Pick<IndexRecord, 'availableFrom' | 'availableUntil'> | undefined;
      try {
        window = windowColumns ? windowOf(cells) : undefined;
      } catch (error) {
        if (!(error instanceof InvalidWindowCell)) throw error;
        sink.rejected({ row, message: error.message });
        return;
      }
      try {
        sink.record({
          row,
          Symbol: cells['Symbol'] ?? '',
          FileName: cells['FileName'] ?? '',
          ShortDescriptionPt: cells['ShortDescriptionPt'] ?? '',
          ShortDescription: cells['ShortDescription'] ?? '',
          ...window,
        });
      } catch (error) {
        sinkFailure = { error };
        parser.destroy(error instanceof Error ? error : new Error(String(error)));
      }
    })
    .on('data-invalid', (cells: unknown) => {
      row += 1;
      const count = Array.isArray(cells) ? cells.length : 0;
      sink.rejected({ row, message: `wrong number of cells (${count})` });
    });
  try {
    await pipeline(Readable.from(inSlices(withoutByteOrderMark(text), slices), { objectMode: false }), parser);
  } catch (error) {
    if (sinkFailure !== undefined) throw sinkFailure.error;
    if (error instanceof IndexMalformed) throw error;
    if (refusal !== undefined) throw refusal;
    throw new IndexMalformed(`The index is not valid CSV: ${(error as Error).message}`, { cause: error });
  }
  if (!headersSeen) throw new IndexMalformed('The index is empty: it has no header row');
}

async function* withoutByteOrderMark(text: AsyncIterable<string> | Iterable<string>): AsyncGenerator<string> {
  let first = true;
  for await (const piece of text) {
    if (first && piece !== '') {
      first = false;
      const rest = piece.startsWith(byteOrderMark) ? piece.slice(byteOrderMark.length) : piece;
      if (rest !== '') yield rest;
      continue;
    }
    if (piece !== '') yield piece;
  }
}

const windowColumnNames = ['AvailableFrom', 'AvailableUntil'] as const;

/** A header naming a window column in any case (`availableFrom`, `AVAILABLEUNTIL`) is that column. */
function windowColumnNamed(header: string | undefined): string | undefined {
  return windowColumnNames.find((name) => name.toLowerCase() === header?.toLowerCase()) ?? header;
}

/**
 * Why the headers cannot be read safely, or `undefined`. A window column the gateway would not
 * recognise (`Available From`, `available_until`, `AvailableTo`) is refused rather than ignored:
 * ignored, it would serve every row at once. So is a window column named twice.
 */
function windowHeaderProblem(headers: readonly string[]): string | undefined {
  for (const header of headers) {
    const squeezed = (header ?? '').toLowerCase().replace(/[\s_.-]+/g, '');
    if (squeezed.startsWith('available') && !(windowColumnNames as readonly string[]).includes(header)) {
      return `The index has a column "${header.slice(0, 100)}" that looks like a release window column but is neither AvailableFrom nor AvailableUntil (names are matched without regard to case, nothing else): rename it, or remove it`;
    }
  }
  for (const name of windowColumnNames) {
    if (headers.filter((header) => header === name).length > 1) return `The index names the ${name} column more than once`;
  }
  return undefined;
}

/**
 * `text` in pieces of at most `charsPerSlice` characters (a surrogate pair never cut), a turn of the
 * event loop before each but the first. fast-csv parses a piece whole, then hands its rows on 100 at
 * a time with turns of its own between them: the size of a piece bounds the parse.
 */
export async function* inSlices(text: AsyncIterable<string>, slices: ParseSlices): AsyncGenerator<string> {
  let first = true;
  for await (const piece of text) {
    for (let start = 0; start < piece.length; ) {
      let end = Math.min(piece.length, start + slices.charsPerSlice);
      // A lone surrogate would reach the parser as U+FFFD: the stream encodes each piece as UTF-8.
      if (end < piece.length && end - 1 > start && isHighSurrogate(piece.charCodeAt(end - 1))) end -= 1;
      if (!first) await slices.yieldToLoop();
      first = false;
      yield piece.slice(start, end);
      start = end;
    }
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

class InvalidWindowCell extends Error {}

/** The row's release window from its `AvailableFrom` and `AvailableUntil` cells; throws `InvalidWindowCell`. */
function windowOf(cells: Record<string, string>): Pick<IndexRecord, 'availableFrom' | 'availableUntil'> {
  const availableFrom = instantIn(cells, 'AvailableFrom');
  const availableUntil = instantIn(cells, 'AvailableUntil');
  return { ...(availableFrom !== undefined && { availableFrom }), ...(availableUntil !== undefined && { availableUntil }) };
}

function instantIn(cells: Record<string, string>, column: 'AvailableFrom' | 'AvailableUntil'): Date | undefined {
  const text = cells[column]?.trim() ?? '';
  if (text === '') return undefined;
  try {
    return parseIsoInstant(text);
  } catch (error) {
    if (!(error instanceof InvalidInstant)) throw error;
    const symbol = (cells['Symbol'] ?? '').trim().slice(0, 100);
    throw new InvalidWindowCell(`${column}: ${error.message} (Symbol "${symbol}")`);
  }
}
