import type { IndexRecord, IndexRowSink, IndexRowWarning } from './ports.js';
import { validateStoragePath } from './storage-path.js';
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

/** Fields per row in the string table: symbol, description, file name. */
const fieldsPerRow = 3;
/** V8's header of a sequential string, and of a typed array with its buffer (64-bit, no pointer compression). */
const stringHeaderBytes = 16;
const typedArrayBytes = 160;
/** The catalog object itself and its fields. */
const catalogObjectBytes = 120;

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
  readonly #bySymbol: Int32Array;
  readonly #byPath: Int32Array;
  readonly #windows: CatalogWindows | undefined;

  /**
   * Use `fromIndex` or a `FileCatalogBuilder`: `fields` are symbol, description and file name of
   * each row in turn; `windows`, when given, one release window per row.
   */
  constructor(fields: readonly string[], version = '', windows?: CatalogWindows) {
    this.version = version;
    this.count = fields.length / fieldsPerRow;
    this.serial = nextSerial++;
    // join gives one flat sequential string, where `+=` would leave a tree of cons strings.
    const joined = fields.join('');
    // C1 controls (U+0080..U+009F) stay in a string too: where they differ, Latin-1 and the
    // decoder's windows-1252 (what the WHATWG "latin1" label means) agree on every other byte.
    const wide = /[^\u0000-\u007f\u00a0-\u00ff]/.test(joined);
    this.#latin1 = wide ? undefined : latin1BytesOf(joined);
    this.#text = wide ? joined : '';
    const offsets = new Uint32Array(fields.length + 1);
    let at = 0;
    for (let i = 0; i < fields.length; i += 1) {
      offsets[i] = at;
      at += (fields[i] as string).length;
    }
    offsets[fields.length] = at;
    this.#offsets = offsets;
    if (windows !== undefined && (windows.from.length !== this.count || windows.until.length !== this.count)) {
      throw new RangeError(`A catalog of ${this.count} rows needs as many release windows`);
    }
    this.#windows = windows;
    this.#bySymbol = this.#table(0);
    this.#byPath = this.#table(2);
    this.bytes =
      catalogObjectBytes +
      stringHeaderBytes +
      roundUp8(2 * version.length) +
      (wide ? stringHeaderBytes + roundUp8(2 * joined.length) : typedArrayBytes + roundUp8(joined.length)) +
      3 * typedArrayBytes +
      this.#offsets.byteLength +
      this.#bySymbol.byteLength +
      this.#byPath.byteLength +
      (windows === undefined ? 0 : 2 * typedArrayBytes + windows.from.byteLength + windows.until.byteLength);
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
    const i = row * fieldsPerRow + field;
    if (this.#latin1 !== undefined) return latin1.decode(this.#latin1.subarray(this.#offsets[i], this.#offsets[i + 1]));
    return this.#text.slice(this.#offsets[i], this.#offsets[i + 1]);
  }

  #fieldEquals(row: number, field: number, value: string): boolean {
    const i = row * fieldsPerRow + field;
    const start = this.#offsets[i] as number;
    if ((this.#offsets[i + 1] as number) - start !== value.length) return false;
    const bytes = this.#latin1;
    if (bytes === undefined) return this.#text.startsWith(value, start);
    for (let k = 0; k < value.length; k += 1) if (bytes[start + k] !== value.charCodeAt(k)) return false;
    return true;
  }

  /** Row number + 1 per slot (0: empty), linear probing, at most half full; the first row of a value wins. */
  #table(field: number): Int32Array {
    let size = 8;
    while (size < this.count * 2) size *= 2;
    const table = new Int32Array(size);
    const mask = size - 1;
    for (let row = 0; row < this.count; row += 1) {
      const value = this.#field(row, field);
      let slot = hashOf(value, 0, value.length) & mask;
      while (table[slot] !== 0 && !this.#fieldEquals((table[slot] as number) - 1, field, value)) slot = (slot + 1) & mask;
      if (table[slot] === 0) table[slot] = row + 1;
    }
    return table;
  }

  #find(table: Int32Array, field: number, value: string): number {
    const mask = table.length - 1;
    let slot = hashOf(value, 0, value.length) & mask;
    while (table[slot] !== 0) {
      const row = (table[slot] as number) - 1;
      if (this.#fieldEquals(row, field, value)) return row;
      slot = (slot + 1) & mask;
    }
    return -1;
  }
}

/**
 * Builds a catalog one index record at a time, so that a streaming parser never holds every
 * record: only the three strings a kept row contributes.
 */
export class FileCatalogBuilder implements IndexRowSink {
  readonly #fields: string[] = [];
  readonly #warnings: CatalogWarning[] = [];
  readonly #seen = new Set<string>();
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
    if (this.#seen.has(symbol)) {
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
    this.#seen.add(symbol);
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
    const windows =
      this.#from === undefined || this.#until === undefined
        ? undefined
        : { from: Float64Array.from(this.#from), until: Float64Array.from(this.#until) };
    const built = { catalog: new FileCatalog(this.#fields, version, windows), warnings: [...this.#warnings] };
    // Whoever still holds the builder must not hold a second copy of every row.
    this.#fields.length = 0;
    this.#seen.clear();
    this.#from = undefined;
    this.#until = undefined;
    return built;
  }
}

function describe(record: IndexRecord): string {
  const portuguese = record.ShortDescriptionPt.trim();
  return portuguese !== '' ? portuguese : record.ShortDescription.trim();
}

/** Decodes bytes 0x00-0x7F and 0xA0-0xFF as the code points of the same numbers: all a catalog keeps as bytes. */
const latin1 = new TextDecoder('latin1');

/** `text`'s code units as bytes; every one is below 0x100. */
function latin1BytesOf(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i += 1) bytes[i] = text.charCodeAt(i);
  return bytes;
}

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
