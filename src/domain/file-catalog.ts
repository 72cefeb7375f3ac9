import type { IndexRecord, IndexRowSink, IndexRowWarning } from './ports.js';
import { validateStoragePath } from './storage-path.js';
import { ELEMENTS_PER_SLICE, type SliceBudget } from './slices.js';
import { isReleasedAt, ReleaseBoundaries } from './subscription.js';

/** One file a client is entitled to, as its index describes it. */
export interface CatalogEntry {
  readonly symbol: string;
  readonly description: string;
  /** Storage path of the file. */
  readonly fileName: string;
  /** The start of the file's release window, where its index row has one (`AvailableFrom`). */
  readonly availableFrom?: Date;
  /** The end of the file's release window, where its index row has one (`AvailableUntil`). */
  readonly availableUntil?: Date;
}

/**
 * The release window of every row, in milliseconds, `[from, until)`: `-Infinity` and `Infinity`
 * where a side is unbounded. Only catalogs whose index has a window somewhere carry them.
 */
export interface CatalogWindows {
  readonly from: Float64Array;
  readonly until: Float64Array;
}

/** The rows of a catalog released at one moment, and how long that set holds. */
export interface ReleasedCatalog {
  /** The released rows: the catalog itself when every row is released (or none has a window). */
  readonly catalog: FileCatalog;
  /** The last window boundary at or before that moment (`-Infinity` when none): when the set last changed. */
  readonly since: number;
  /** The first window boundary after that moment (`Infinity` when none): when the set next changes. */
  readonly until: number;
}

/** Why an index row did not make it into the catalog. */
export type CatalogWarning = IndexRowWarning;

/** Fields of rows in turn (symbol, description, file name): an array, or the builder's chunks. */
export interface FieldList {
  readonly length: number;
  at(index: number): string | undefined;
}

/** Fields per row in the string table: symbol, description, file name. */
const fieldsPerRow = 3;
/** V8's header of a sequential string, and of a typed array with its buffer (64-bit, no pointer compression). */
const stringHeaderBytes = 16;
const typedArrayBytes = 160;
/** The catalog object itself and its fields, and the object locating its characters (`#located`). */
const catalogObjectBytes = 168;

let nextSerial = 1;

/**
 * A client's catalog: the rows of its index, in index order, each with a description
 * (`ShortDescriptionPt`, or `ShortDescription` where that is empty).
 *
 * Kept compact, because thousands of catalogs of up to a million rows share one memory bound:
 * every field of every row lives in one run of characters, located by a typed array of offsets,
 * and the lookups by symbol and by path are open-addressing hash tables of row numbers. The
 * characters are Latin-1 bytes outside V8's heap when every one fits (Portuguese does), one
 * string otherwise: V8 lets its heap grow to about 1.4 times what it holds live before a full
 * collection, so catalogs in the heap made a 256 MiB cache cost some 100 MiB more RSS than the
 * same catalogs outside it (BENCHMARKS.md, the fleet). A row costs its
 * characters plus about 30 bytes, where an object per row with two `Map`s cost about 400.
 * `bytes` is what the catalog holds, as the cache bounding memory accounts it.
 */
export class FileCatalog {
  /** Number of rows. */
  readonly count: number;
  /** The version of the index it was parsed from (its entity tag), `''` when unknown. */
  readonly version: string;
  /** Unique per parsed catalog, so that what is derived from one is never mistaken for another's. */
  readonly serial: number;
  /** Memory the catalog holds, in bytes. */
  readonly bytes: number;
  /** The characters when some do not fit in Latin-1; `''` otherwise. */
  readonly #text: string;
  /** The characters as Latin-1 bytes when every one fits. */
  readonly #latin1: Uint8Array | undefined;
  /** Start of each field of each row in `#text`, plus the end of the last: `3 * count + 1` offsets. */
  readonly #offsets: Uint32Array;
  /** The three above, as the functions that read fields take them. */
  readonly #located: CatalogText;
  readonly #bySymbol: Int32Array;
  readonly #byPath: Int32Array;
  readonly #windows: CatalogWindows | undefined;

  /**
   * Use `fromIndex` or a `FileCatalogBuilder`: `fields` are symbol, description and file name of
   * each row in turn; `windows`, when given, one release window per row. `parts`, when given, are
   * what `inSlices` already computed from the same `fields`.
   */
  constructor(fields: FieldList, version = '', windows?: CatalogWindows, parts?: CatalogParts) {
    this.version = version;
    this.count = fields.length / fieldsPerRow;
    this.serial = nextSerial++;
    if (windows !== undefined && (windows.from.length !== this.count || windows.until.length !== this.count)) {
      throw new RangeError(`A catalog of ${this.count} rows needs as many release windows`);
    }
    const built = parts ?? runToEnd(catalogParts(fields, Number.POSITIVE_INFINITY));
    this.#latin1 = built.latin1;
    this.#text = built.text;
    this.#offsets = built.offsets;
    this.#located = { latin1: built.latin1, text: built.text, offsets: built.offsets };
    this.#windows = windows;
    this.#bySymbol = built.bySymbol;
    this.#byPath = built.byPath;
    const characters = built.offsets[fields.length] as number;
    this.bytes =
      catalogObjectBytes +
      stringHeaderBytes +
      roundUp8(2 * version.length) +
      (built.latin1 === undefined ? stringHeaderBytes + roundUp8(2 * characters) : typedArrayBytes + roundUp8(characters)) +
      3 * typedArrayBytes +
      this.#offsets.byteLength +
      this.#bySymbol.byteLength +
      this.#byPath.byteLength +
      (windows === undefined ? 0 : 2 * typedArrayBytes + windows.from.byteLength + windows.until.byteLength);
  }

  /**
   * The same catalog as `new FileCatalog(fields, version, windows)`, built in slices of at most
   * `budget.stepsPerSlice` rows of one pass over the fields (there are five: measuring, copying the
   * characters, locating them, and the two lookup tables), with a turn of the event loop between
   * two slices: a million rows took seconds in one piece.
   */
  static async inSlices(fields: FieldList, version: string, windows: CatalogWindows | undefined, budget: SliceBudget): Promise<FileCatalog> {
    const steps = catalogParts(fields, budget.stepsPerSlice);
    for (let step = steps.next(); ; step = steps.next()) {
      if (step.done === true) return new FileCatalog(fields, version, windows, step.value);
      await budget.yieldToLoop();
    }
  }

  /**
   * Builds the catalog from index records. Rows without a Symbol or FileName, with a FileName that
   * is not a safe storage path, or repeating an earlier Symbol (the first row wins) are left out and
   * reported as warnings.
   */
  static fromIndex(
    records: Iterable<IndexRecord>,
    rejectedRows: readonly IndexRowWarning[] = [],
    version = '',
  ): { catalog: FileCatalog; warnings: CatalogWarning[] } {
    const builder = new FileCatalogBuilder();
    for (const warning of rejectedRows) builder.rejected(warning);
    for (const record of records) builder.record(record);
    return builder.build(version);
  }

  /** The row at `index` (0-based, in index order). */
  entryAt(index: number): CatalogEntry {
    if (!Number.isInteger(index) || index < 0 || index >= this.count) throw new RangeError(`No catalog row ${index}`);
    const entry = { symbol: this.#field(index, 0), description: this.#field(index, 1), fileName: this.#field(index, 2) };
    if (this.#windows === undefined) return entry;
    const from = this.#windows.from[index] as number;
    const until = this.#windows.until[index] as number;
    return {
      ...entry,
      ...(Number.isFinite(from) && { availableFrom: new Date(from) }),
      ...(Number.isFinite(until) && { availableUntil: new Date(until) }),
    };
  }

  /** Whether any row has a release window. */
  get hasWindows(): boolean {
    return this.#windows !== undefined;
  }

  /**
   * The rows released at `at` (ms), in index order, as a catalog of their own whose version names
   * the catalog's and the boundary the set was last changed at: the same on every instance, and
   * different whenever the set differs, so that what is derived from it (existence lists, `/list`
   * cursors, `/catalog` entity tags) never outlives the set. One pass over the rows; a copy only
   * when some row is not released.
   */
  releasedAt(at: number): ReleasedCatalog {
    const windows = this.#windows;
    if (windows === undefined) return { catalog: this, since: Number.NEGATIVE_INFINITY, until: Number.POSITIVE_INFINITY };
    const boundaries = new ReleaseBoundaries(at);
    const released: number[] = [];
    for (let row = 0; row < this.count; row += 1) {
      const from = windows.from[row] as number;
      const until = windows.until[row] as number;
      boundaries.add(from, until);
      if (isReleasedAt(from, until, at)) released.push(row);
    }
    const { since, until } = boundaries;
    if (released.length === this.count) return { catalog: this, since, until };
    const fields: string[] = [];
    const kept = { from: new Float64Array(released.length), until: new Float64Array(released.length) };
    released.forEach((row, i) => {
      fields.push(this.#field(row, 0), this.#field(row, 1), this.#field(row, 2));
      kept.from[i] = windows.from[row] as number;
      kept.until[i] = windows.until[row] as number;
    });
    const version = `${this.version} released since ${Number.isFinite(since) ? new Date(since).toISOString() : 'ever'}`;
    return { catalog: new FileCatalog(fields, version, kept), since, until };
  }

  /** The storage path of the row at `index`, without building the whole entry. */
  fileNameAt(index: number): string {
    return this.#field(index, 2);
  }

  /**
   * The byte order of two rows' storage paths in UTF-8 (code point order), compared where they
   * lie: sorting a million rows makes some twenty million comparisons, and decoding both paths
   * for each took most of the time.
   */
  compareFileNamesAt(a: number, b: number): number {
    let x = this.#offsets[a * fieldsPerRow + 2] as number;
    let y = this.#offsets[b * fieldsPerRow + 2] as number;
    const xEnd = this.#offsets[a * fieldsPerRow + 3] as number;
    const yEnd = this.#offsets[b * fieldsPerRow + 3] as number;
    const bytes = this.#latin1;
    if (bytes !== undefined) {
      // Latin-1 bytes are the code points themselves.
      for (; x < xEnd && y < yEnd; x += 1, y += 1) {
        const p = bytes[x] as number;
        const q = bytes[y] as number;
        if (p !== q) return p < q ? -1 : 1;
      }
    } else {
      const text = this.#text;
      while (x < xEnd && y < yEnd) {
        // A pair is read only within the field (catalog paths hold no lone surrogate anyway).
        const p = x + 1 < xEnd ? (text.codePointAt(x) as number) : text.charCodeAt(x);
        const q = y + 1 < yEnd ? (text.codePointAt(y) as number) : text.charCodeAt(y);
        if (p !== q) return p < q ? -1 : 1;
        x += p > 0xffff ? 2 : 1;
        y += q > 0xffff ? 2 : 1;
      }
    }
    if (x < xEnd) return 1;
    return y < yEnd ? -1 : 0;
  }

  /** Every row, in index order. */
  *[Symbol.iterator](): IterableIterator<CatalogEntry> {
    for (let i = 0; i < this.count; i += 1) yield this.entryAt(i);
  }

  findBySymbol(symbol: string): CatalogEntry | undefined {
    const row = this.#find(this.#bySymbol, 0, symbol);
    return row === -1 ? undefined : this.entryAt(row);
  }

  findByFileName(fileName: string): CatalogEntry | undefined {
    const row = this.#find(this.#byPath, 2, fileName);
    return row === -1 ? undefined : this.entryAt(row);
  }

  /** The first row with this storage path, or -1. */
  rowOfFileName(fileName: string): number {
    return this.#find(this.#byPath, 2, fileName);
  }

  #field(row: number, field: number): string {
    return fieldAt(this.#located, row * fieldsPerRow + field);
  }

  #find(table: Int32Array, field: number, value: string): number {
    const text = this.#located;
    const mask = table.length - 1;
    let slot = hashOf(value, 0, value.length) & mask;
    while (table[slot] !== 0) {
      const row = (table[slot] as number) - 1;
      if (fieldEquals(text, row * fieldsPerRow + field, value)) return row;
      slot = (slot + 1) & mask;
    }
    return -1;
  }

}

/** Where a catalog's characters are: Latin-1 bytes when every one fits, a string otherwise; and each field's start. */
interface CatalogText {
  readonly latin1: Uint8Array | undefined;
  /** `''` when `latin1` holds the characters. */
  readonly text: string;
  /** Start of each field in the characters, plus the end of the last. */
  readonly offsets: Uint32Array;
}

declare const catalogPartsBrand: unique symbol;

/** What a catalog computes from its fields; only `catalogParts` makes one (so `FileCatalog.inSlices` can hand it over). */
export interface CatalogParts extends CatalogText {
  readonly [catalogPartsBrand]: true;
  readonly bySymbol: Int32Array;
  readonly byPath: Int32Array;
}

/**
 * Computes a catalog's characters, offsets and lookup tables from its fields, pass by pass, and
 * pauses (a bare `yield`) once `rowsPerSlice` rows of a pass are done: the constructor runs it to
 * the end at once, `FileCatalog.inSlices` gives the event loop a turn at each pause.
 */
function* catalogParts(fields: FieldList, rowsPerSlice: number): Generator<void, CatalogParts, void> {
  let left = rowsPerSlice;
  const spent = (): boolean => {
    left -= 1;
    if (left > 0) return false;
    left = rowsPerSlice;
    return true;
  };
  // C1 controls (U+0080..U+009F) stay in a string too: where they differ, Latin-1 and the
  // decoder's windows-1252 (what the WHATWG "latin1" label means) agree on every other byte.
  const notLatin1 = /[^\u0000-\u007f\u00a0-\u00ff]/;
  const offsets = new Uint32Array(fields.length + 1);
  let at = 0;
  let wide = false;
  for (let i = 0; i < fields.length; i += 1) {
    const field = fields.at(i) as string;
    offsets[i] = at;
    at += field.length;
    wide ||= notLatin1.test(field);
    if ((i + 1) % fieldsPerRow === 0 && spent()) yield;
  }
  offsets[fields.length] = at;
  let latin1: Uint8Array | undefined;
  let text = '';
  if (wide) {
    // join gives flat sequential strings, where `+=` would leave a tree of cons strings.
    const pieces: string[] = [];
    let piece: string[] = [];
    for (let i = 0; i < fields.length; i += 1) {
      piece.push(fields.at(i) as string);
      if ((i + 1) % fieldsPerRow === 0 && spent()) {
        pieces.push(piece.join(''));
        piece = [];
        yield;
      }
    }
    pieces.push(piece.join(''));
    text = pieces.join('');
  } else {
    latin1 = new Uint8Array(at);
    let k = 0;
    for (let i = 0; i < fields.length; i += 1) {
      const field = fields.at(i) as string;
      for (let c = 0; c < field.length; c += 1, k += 1) latin1[k] = field.charCodeAt(c);
      if ((i + 1) % fieldsPerRow === 0 && spent()) yield;
    }
  }
  const located: CatalogText = { latin1, text, offsets };
  const bySymbol = yield* lookupTable(located, 0, spent);
  const byPath = yield* lookupTable(located, 2, spent);
  return { ...located, bySymbol, byPath } as CatalogParts;
}

/** Row number + 1 per slot (0: empty), linear probing, at most half full; the first row of a value wins. */
function* lookupTable(located: CatalogText, field: number, spent: () => boolean): Generator<void, Int32Array, void> {
  const count = (located.offsets.length - 1) / fieldsPerRow;
  let size = 8;
  while (size < count * 2) size *= 2;
  const table = new Int32Array(size);
  if (size > ELEMENTS_PER_SLICE) {
    // Its pages faulted in a few at a time, before the rows land all over it.
    for (let start = 0; start < size; start += ELEMENTS_PER_SLICE) {
      table.fill(0, start, start + ELEMENTS_PER_SLICE);
      yield;
    }
  }
  const mask = size - 1;
  for (let row = 0; row < count; row += 1) {
    const i = row * fieldsPerRow + field;
    let slot = hashAt(located, i) & mask;
    while (table[slot] !== 0 && !fieldsEqual(located, ((table[slot] as number) - 1) * fieldsPerRow + field, i)) slot = (slot + 1) & mask;
    if (table[slot] === 0) table[slot] = row + 1;
    if (spent()) yield;
  }
  return table;
}

function runToEnd<T>(steps: Generator<void, T, void>): T {
  for (let step = steps.next(); ; step = steps.next()) if (step.done === true) return step.value;
}

/** The `i`th field (row * 3 + which). */
function fieldAt(located: CatalogText, i: number): string {
  if (located.latin1 !== undefined) return latin1.decode(located.latin1.subarray(located.offsets[i], located.offsets[i + 1]));
  return located.text.slice(located.offsets[i], located.offsets[i + 1]);
}

function fieldEquals(located: CatalogText, i: number, value: string): boolean {
  const start = located.offsets[i] as number;
  if ((located.offsets[i + 1] as number) - start !== value.length) return false;
  const bytes = located.latin1;
  if (bytes === undefined) return located.text.startsWith(value, start);
  for (let k = 0; k < value.length; k += 1) if (bytes[start + k] !== value.charCodeAt(k)) return false;
  return true;
}

/** Whether fields `i` and `j` hold the same characters, compared where they lie. */
function fieldsEqual(located: CatalogText, i: number, j: number): boolean {
  const a = located.offsets[i] as number;
  const b = located.offsets[j] as number;
  const length = (located.offsets[i + 1] as number) - a;
  if ((located.offsets[j + 1] as number) - b !== length) return false;
  const bytes = located.latin1;
  if (bytes === undefined) return located.text.startsWith(located.text.slice(b, b + length), a);
  for (let k = 0; k < length; k += 1) if (bytes[a + k] !== bytes[b + k]) return false;
  return true;
}

/** `hashOf` the `i`th field, read where it lies (Latin-1 bytes are its code units). */
function hashAt(located: CatalogText, i: number): number {
  const start = located.offsets[i] as number;
  const end = located.offsets[i + 1] as number;
  const bytes = located.latin1;
  if (bytes === undefined) return hashOf(located.text, start, end);
  let hash = 0x811c9dc5;
  for (let k = start; k < end; k += 1) {
    hash ^= bytes[k] as number;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * Builds a catalog one index record at a time, so that a streaming parser never holds every
 * record: only the three strings a kept row contributes.
 */
export class FileCatalogBuilder implements IndexRowSink {
  /** Kept rows' fields in chunks: one array of three million strings grew by copying all of it at once. */
  readonly #fields = new FieldChunks();
  readonly #warnings: CatalogWarning[] = [];
  /**
   * Symbols seen, spread over sets by hash: one set of a million grew by rehashing all of it at
   * once, a stall of a tenth of a second at each doubling.
   */
  readonly #seen: Set<string>[] = Array.from({ length: seenShards }, () => new Set<string>());
  /** Release windows of the kept rows, from the first row that has one on (earlier rows unbounded). */
  #from: number[] | undefined;
  #until: number[] | undefined;

  rejected(warning: IndexRowWarning): void {
    this.#warnings.push(warning);
  }

  record(record: IndexRecord): void {
    const symbol = record.Symbol.trim();
    const fileName = record.FileName.trim();
    if (symbol === '') {
      this.#warnings.push({ row: record.row, message: `no Symbol (FileName "${fileName}")` });
      return;
    }
    if (fileName === '') {
      this.#warnings.push({ row: record.row, message: `no FileName (Symbol "${symbol}")` });
      return;
    }
    const seen = this.#seen[hashOf(symbol, 0, symbol.length) & (seenShards - 1)] as Set<string>;
    if (seen.has(symbol)) {
      this.#warnings.push({ row: record.row, message: `duplicate Symbol "${symbol}": the first row is kept` });
      return;
    }
    try {
      validateStoragePath(fileName);
    } catch (error) {
      this.#warnings.push({ row: record.row, message: `unsafe FileName: ${(error as Error).message}` });
      return;
    }
    const from = record.availableFrom?.getTime() ?? Number.NEGATIVE_INFINITY;
    const until = record.availableUntil?.getTime() ?? Number.POSITIVE_INFINITY;
    if (Number.isNaN(from) || Number.isNaN(until)) {
      this.#warnings.push({ row: record.row, message: `invalid release window (Symbol "${symbol}")` });
      return;
    }
    if (from >= until) {
      this.#warnings.push({
        row: record.row,
        message: `AvailableUntil (${new Date(until).toISOString()}) is not after AvailableFrom (${new Date(from).toISOString()}): the file would never be served (Symbol "${symbol}")`,
      });
      return;
    }
    seen.add(symbol);
    if (this.#from === undefined && (Number.isFinite(from) || Number.isFinite(until))) {
      const rows = this.#fields.length / fieldsPerRow;
      this.#from = new Array<number>(rows).fill(Number.NEGATIVE_INFINITY);
      this.#until = new Array<number>(rows).fill(Number.POSITIVE_INFINITY);
    }
    this.#fields.push(symbol, describe(record), fileName);
    this.#from?.push(from);
    this.#until?.push(until);
  }

  build(version = ''): { catalog: FileCatalog; warnings: CatalogWarning[] } {
    const built = { catalog: new FileCatalog(this.#fields, version, this.#windows()), warnings: [...this.#warnings] };
    this.#clear();
    return built;
  }

  /** The same as `build`, the catalog made by `FileCatalog.inSlices` (a turn of the event loop every `budget.stepsPerSlice` rows). */
  async buildInSlices(version: string, budget: SliceBudget): Promise<{ catalog: FileCatalog; warnings: CatalogWarning[] }> {
    // The symbols are no longer needed: not kept through the build's turns.
    for (const seen of this.#seen) seen.clear();
    const built = { catalog: await FileCatalog.inSlices(this.#fields, version, this.#windows(), budget), warnings: [...this.#warnings] };
    this.#clear();
    return built;
  }

  #windows(): CatalogWindows | undefined {
    return this.#from === undefined || this.#until === undefined
      ? undefined
      : { from: Float64Array.from(this.#from), until: Float64Array.from(this.#until) };
  }

  /** Whoever still holds the builder must not hold a second copy of every row. */
  #clear(): void {
    this.#fields.clear();
    for (const seen of this.#seen) seen.clear();
    this.#from = undefined;
    this.#until = undefined;
  }
}

/** Fields in chunks of {@link fieldChunkLength}, each a plain array. */
class FieldChunks implements FieldList {
  #chunks: string[][] = [];
  #length = 0;

  get length(): number {
    return this.#length;
  }

  push(...fields: string[]): void {
    for (const field of fields) {
      if ((this.#length & (fieldChunkLength - 1)) === 0) this.#chunks.push([]);
      (this.#chunks[this.#chunks.length - 1] as string[]).push(field);
      this.#length += 1;
    }
  }

  at(index: number): string | undefined {
    return this.#chunks[index >>> fieldChunkBits]?.[index & (fieldChunkLength - 1)];
  }

  clear(): void {
    this.#chunks = [];
    this.#length = 0;
  }
}

const fieldChunkBits = 13;
/** 8,192 fields: a chunk grows by copying a few kilobytes. */
const fieldChunkLength = 1 << fieldChunkBits;

/** Sets the builder's symbols are spread over (a power of two). */
const seenShards = 64;

function describe(record: IndexRecord): string {
  const portuguese = record.ShortDescriptionPt.trim();
  return portuguese !== '' ? portuguese : record.ShortDescription.trim();
}

/** Decodes bytes 0x00-0x7F and 0xA0-0xFF as the code points of the same numbers: all a catalog keeps as bytes. */
const latin1 = new TextDecoder('latin1');

/** FNV-1a over UTF-16 code units of `text[start, end)`. */
function hashOf(text: string, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function roundUp8(bytes: number): number {
  return Math.ceil(bytes / 8) * 8;
}
