import { CHANGES_POSITION_RETRY_MS } from '../domain/changes.js';
import { decideDownload, type DownloadDecision, type DownloadRequest } from '../domain/download-policy.js';
import type { Entitlement } from '../domain/entitlement.js';
import { CursorExpired, FileNotFound } from '../domain/errors.js';
import type { CatalogEntry, FileCatalog } from '../domain/file-catalog.js';
import type { BlobContent, BlobProperties, BlobStore, BlobSummary, BoundedMemory, ChecksumStore, Clock, FileVersion, Principal } from '../domain/ports.js';
import { ELEMENTS_PER_SLICE, ROWS_PER_SLICE, Slicer } from '../domain/slices.js';
import { buildPathOrder, PATH_ORDER_STEPS_PER_SLICE, type PathOrderSource } from './path-order.js';

/** A catalog file that storage has. */
export interface ExistingFile {
  readonly entry: CatalogEntry;
  readonly size: number;
  readonly uploaded: Date;
  readonly etag: string;
  /** Base64 MD5 of the content, when storage has one. */
  readonly md5?: string;
  /** SHA-256 of this version (64 lowercase hex digits), once the change scanner computed it; only in `list`'s answers. */
  readonly sha256?: string;
}

/**
 * Where a listing stopped: the catalog version it was made from, the catalog row to continue at,
 * and the storage path of the last file returned (a check that the row still means the same file).
 */
export interface ListPosition {
  readonly version: string;
  readonly row: number;
  readonly lastFileName: string;
  /** The smallest `changesSeen` of the pages so far, carried so that the last page's is one for the whole listing. */
  readonly changesSeen?: number;
}

export interface ListOptions {
  /** At most this many files. */
  readonly limit: number;
  /** Only files uploaded at or after this moment. */
  readonly modifiedSince?: Date;
  /** Continue where an earlier, truncated listing stopped (its `next`). Throws `CursorExpired` when the index changed since. */
  readonly from?: ListPosition;
}

export interface FileListing {
  /** At most `limit` existing files, in index order. */
  readonly files: readonly ExistingFile[];
  /** How many files `files` holds (as `/catalog`'s count); `/count` gives the total. */
  readonly count: number;
  readonly limit: number;
  /** More existing files than `limit`. */
  readonly truncated: boolean;
  /** Where the next page starts, when `truncated`. */
  readonly next?: ListPosition;
  /**
   * A change log position this page and every earlier page of the listing are known to include:
   * every change logged up to it is in what they show, so following the feed from it misses
   * nothing. The smallest of what the catalog and the storage check it used had seen. `undefined`
   * without a position source, or while the position cannot be read.
   */
  readonly changesSeen: number | undefined;
}

export interface PathListOptions {
  /** Only files whose storage path starts with this (`''` for all). */
  readonly prefix: string;
  /** Only files whose storage path sorts after this one. */
  readonly after?: string;
  /** At most this many files. */
  readonly limit: number;
}

export interface PathListing {
  /** Existing entitled files, each path once, in the byte order of their UTF-8 storage paths. */
  readonly files: readonly ExistingFile[];
  /** More such files than `limit`. */
  readonly truncated: boolean;
}

export interface FileDetails {
  readonly entry: CatalogEntry;
  readonly properties: BlobProperties;
  /** SHA-256 of the version `properties` describe, once computed; only in `info`'s answers. */
  readonly sha256?: string;
}

export type DownloadTarget = { readonly symbol: string } | { readonly path: string };

export interface PreparedDownload extends FileDetails {
  readonly decision: DownloadDecision;
}

export interface FileAccessDependencies {
  readonly entitlement: Entitlement;
  readonly store: BlobStore;
  readonly clock: Clock;
  /** How long which catalog files exist is reused before storage is asked again (LIST_CACHE_SECONDS). */
  readonly listCacheMs: number;
  /** Where which catalog files exist is kept, in the same bound as the catalogs (CATALOG_CACHE_MB). */
  readonly memory: BoundedMemory;
  /** Gives the event loop a turn between slices of a long computation (the path order of a listing). */
  readonly yieldToLoop: () => Promise<void>;
  /** The SHA-256 of file versions the change scanner computed. */
  readonly checksums: ChecksumStore;
  /**
   * The change log's position now (the change feed's), read before each storage check of which
   * files exist: a listing's `changesSeen`. `undefined` (it never rejects) when it cannot be read
   * now: the storage check goes on without a position, and is redone within a second. Absent:
   * listings carry none.
   */
  readonly changesPosition?: () => Promise<number | undefined>;
}

/** A listing's path order, as kept in the bounded memory. */
interface PathOrder {
  /** The `version` of the existence list it was built from. */
  readonly existingVersion: number;
  readonly rows: Uint32Array;
}

/** The entry object, the typed array's object and its buffer's, beside the rows' 4 bytes each. */
const pathOrderObjectBytes = 160;

interface KnownFiles {
  readonly at: number;
  readonly files: ExistingFiles;
  /** The change log's position read before storage was asked (see `FileListing.changesSeen`). */
  readonly changesSeen: number | undefined;
}

/**
 * The gateway's use cases: what a client may see of storage and what a download request gets.
 * Entitlement is always decided before storage is asked whether a file exists.
 */
export class FileAccess {
  /** Storage listings under way, per catalog, so that concurrent requests share one. */
  readonly #finding = new Map<number, Promise<KnownFiles>>();
  /** Path orders under way, per catalog, so that concurrent listings share one build. */
  readonly #ordering = new Map<number, { readonly existingVersion: number; readonly rows: Promise<Uint32Array> }>();

  constructor(private readonly deps: FileAccessDependencies) {}

  catalog(principal: Principal): Promise<FileCatalog> {
    return this.deps.entitlement.catalogFor(principal);
  }

  /**
   * The change log's position a catalog `catalog()` gave is known to include (`/catalog`'s
   * `changesCursor`); `undefined` without a position source, or while it cannot be read.
   */
  catalogChangesSeen(catalog: FileCatalog): number | undefined {
    return this.deps.entitlement.changesSeen(catalog);
  }

  async list(principal: Principal, options: ListOptions): Promise<FileListing> {
    const arrived = this.deps.clock.now().getTime();
    let catalog = await this.deps.entitlement.catalogFor(principal);
    if (options.from !== undefined && options.from.version !== catalog.version) {
      // A page of another instance of the fleet may have come from a newer version of the index than
      // the one kept here: the stored index is asked before the cursor is refused as expired.
      catalog = (await this.deps.entitlement.recheckedCatalogFor(principal, arrived)) ?? catalog;
    }
    const start = startRow(catalog, options.from);
    const since = options.modifiedSince?.getTime() ?? -Infinity;
    const known = this.#freshKnownFiles(catalog);
    let page: Page;
    let storageSeen: number | undefined;
    if (options.from !== undefined && known === undefined) {
      // A later page whose listing is no longer fresh asks storage about the rows it reaches, not the whole catalog.
      storageSeen = await this.deps.changesPosition?.();
      page = await this.#pageFromStorage(catalog, start, since, options.limit);
    } else {
      const used = known ?? (await this.#loadExistingFiles(catalog));
      storageSeen = used.changesSeen;
      page = pageOf(catalog, used.files, start, since, options.limit);
    }
    // What this page shows is as old as the older of its two sources; an earlier page's may be older still.
    // (A cursor made before cursors carried a position has nothing to add.)
    const earlier = options.from?.changesSeen;
    const changesSeen = oldest([this.deps.entitlement.changesSeen(catalog), storageSeen, ...(earlier !== undefined ? [earlier] : [])]);
    const next =
      page.truncated && page.lastRow !== -1
        ? {
            version: catalog.version,
            row: page.lastRow + 1,
            lastFileName: catalog.fileNameAt(page.lastRow),
            ...(changesSeen !== undefined && { changesSeen }),
          }
        : undefined;
    const files = await this.#withChecksums(page.files);
    return { files, count: files.length, limit: options.limit, truncated: page.truncated, ...(next !== undefined && { next }), changesSeen };
  }

  /**
   * The client's existing files by storage path, each path once, for clients that page through
   * paths rather than the index. The path order is built once per catalog and existence list, in
   * slices that give the event loop a turn (see path-order.ts), shared by concurrent listings and
   * kept in the bounded memory, so each page costs a binary search and its own files.
   */
  async listByPath(principal: Principal, options: PathListOptions): Promise<PathListing> {
    const catalog = await this.deps.entitlement.catalogFor(principal);
    const existing = await this.existingFiles(catalog);
    const order = await this.#pathOrder(catalog, existing);
    const pathAt = (i: number): string => catalog.fileNameAt(order[i] ?? 0);
    let i = lowerBound(order.length, (k) => compareUtf8(pathAt(k), options.prefix) >= 0);
    if (options.after !== undefined) {
      const after = options.after;
      i = Math.max(i, lowerBound(order.length, (k) => compareUtf8(pathAt(k), after) > 0));
    }
    const files: ExistingFile[] = [];
    for (; i < order.length && pathAt(i).startsWith(options.prefix); i += 1) {
      if (files.length === options.limit) return { files, truncated: true };
      files.push(existing.fileAt(catalog, existing.firstAtOrAfter(order[i] ?? 0)));
    }
    return { files, truncated: false };
  }

  /**
   * Catalog rows storage has, one per distinct path, in the byte order of the UTF-8 paths: built
   * once per existence list (concurrent listings share the build), from the order of the
   * catalog's previous existence list when the memory still has it. The kept entry holds only the
   * rows and the existence list's version, never the list itself, so its size is its whole cost.
   */
  #pathOrder(catalog: FileCatalog, existing: ExistingFiles): Promise<Uint32Array> {
    const key = `by-path:${catalog.serial}`;
    const kept = this.deps.memory.get(key) as PathOrder | undefined;
    if (kept !== undefined && kept.existingVersion === existing.version) return Promise.resolve(kept.rows);
    const building = this.#ordering.get(catalog.serial);
    if (building !== undefined && building.existingVersion === existing.version) return building.rows;
    // A build for an older existence list still under way is the previous order of this one.
    const previous = building !== undefined ? building.rows.catch(() => kept?.rows) : Promise.resolve(kept?.rows);
    const source: PathOrderSource = {
      catalogRows: catalog.count,
      existingCount: existing.count,
      existingRowAt: (i) => existing.rowAt(i),
      isFirstOfPath: (row) => catalog.rowOfFileName(catalog.fileNameAt(row)) === row,
      comparePaths: (a, b) => catalog.compareFileNamesAt(a, b),
    };
    const budget = { yieldToLoop: this.deps.yieldToLoop, stepsPerSlice: PATH_ORDER_STEPS_PER_SLICE };
    const entry = { existingVersion: existing.version, rows: previous.then((rows) => buildPathOrder(source, budget, rows)) };
    this.#ordering.set(catalog.serial, entry);
    entry.rows
      .then((rows) => this.deps.memory.set(key, { existingVersion: existing.version, rows } satisfies PathOrder, rows.buffer.byteLength + pathOrderObjectBytes))
      // A failed build is not kept: the next listing builds again (and the listing that waited on it fails).
      .catch(() => undefined)
      .finally(() => {
        if (this.#ordering.get(catalog.serial) === entry) this.#ordering.delete(catalog.serial);
      });
    return entry.rows;
  }

  async count(principal: Principal): Promise<number> {
    return (await this.existingFiles(await this.deps.entitlement.catalogFor(principal))).count;
  }

  /** Throws `NotEntitled` or `FileNotFound`. */
  async info(principal: Principal, symbol: string): Promise<FileDetails> {
    const entry = await this.deps.entitlement.entryForSymbol(principal, symbol);
    const properties = await this.propertiesOf(entry);
    const sha256 = await this.checksumOf({ path: entry.fileName, etag: properties.etag });
    return { entry, properties, ...(sha256 !== undefined && { sha256 }) };
  }

  /** The SHA-256 of one version of a file, once computed (for a door that serves that version whole). */
  async checksumOf(version: FileVersion): Promise<string | undefined> {
    return (await this.deps.checksums.lookup([version])).get(version.path);
  }

  /** A page of files with the SHA-256 of each version that has one: one lookup for the whole page. */
  async #withChecksums(files: readonly ExistingFile[]): Promise<readonly ExistingFile[]> {
    if (files.length === 0) return files;
    const known = await this.deps.checksums.lookup(files.map((file) => ({ path: file.entry.fileName, etag: file.etag })));
    if (known.size === 0) return files;
    // New objects: the files of the existence list are shared by every listing of the catalog.
    return files.map((file) => {
      const sha256 = known.get(file.entry.fileName);
      return sha256 === undefined ? file : { ...file, sha256 };
    });
  }

  /**
   * The caller's catalog entry for the target, from its (cached) catalog: storage is not asked
   * whether the file exists. Throws `NotEntitled` (and what `Entitlement.catalogFor` throws).
   */
  resolve(principal: Principal, target: DownloadTarget): Promise<CatalogEntry> {
    return 'symbol' in target
      ? this.deps.entitlement.entryForSymbol(principal, target.symbol)
      : this.deps.entitlement.entryForPath(principal, target.path);
  }

  /** Decides the response to a request for an entry from the file's current properties. Throws `FileNotFound`. */
  async decide(entry: CatalogEntry, request: DownloadRequest): Promise<PreparedDownload> {
    const properties = await this.propertiesOf(entry);
    return { entry, properties, decision: decideDownload(properties, request, this.deps.clock.now()) };
  }

  /**
   * Decides a download through a direct link made for version `etag` of an entry (resolved, as any
   * download, from the link client's current catalog): only that version is served, any other
   * gets `preconditionFailed`. Throws `FileNotFound`.
   */
  async decideLinked(entry: CatalogEntry, etag: string, request: DownloadRequest): Promise<PreparedDownload> {
    const properties = await this.propertiesOf(entry);
    const decision: DownloadDecision =
      properties.etag === etag
        ? decideDownload(properties, request, this.deps.clock.now())
        : { kind: 'preconditionFailed', reason: 'The file changed since the link was made: ask for a new link' };
    return { entry, properties, decision };
  }

  /**
   * The bytes of a prepared full or partial download, pinned to the version whose headers were
   * decided: throws `ContentChanged` if the file changed since.
   */
  open(prepared: PreparedDownload, signal?: AbortSignal): Promise<BlobContent> {
    const range = prepared.decision.kind === 'partial' ? prepared.decision.range : undefined;
    return this.deps.store.read(prepared.entry.fileName, {
      ifMatch: prepared.properties.etag,
      ...(range !== undefined && { range }),
      ...(signal !== undefined && { signal }),
    });
  }

  private async propertiesOf(entry: CatalogEntry): Promise<BlobProperties> {
    const properties = await this.deps.store.getProperties(entry.fileName);
    if (properties === undefined) {
      throw new FileNotFound(`File "${entry.fileName}" for symbol "${entry.symbol}" does not exist`);
    }
    return properties;
  }

  /**
   * The catalog's files that storage has, in index order: asked of storage at most once per
   * `listCacheMs` for a catalog version (concurrent requests share the answer), so that `/list`
   * and `/count` polled by many clients cost storage one listing. Kept in the bounded memory.
   */
  private async existingFiles(catalog: FileCatalog): Promise<ExistingFiles> {
    return (this.#freshKnownFiles(catalog) ?? (await this.#loadExistingFiles(catalog))).files;
  }

  /** Asks storage which of the catalog's files exist (concurrent callers share one check), and keeps the answer. */
  #loadExistingFiles(catalog: FileCatalog): Promise<KnownFiles> {
    const key = existingKey(catalog);
    let finding = this.#finding.get(catalog.serial);
    if (finding === undefined) {
      // A failure is not kept: the next request asks storage again.
      finding = this.#findExistingFiles(catalog)
        .then(({ files, changesSeen }) => {
          // Its age starts when the answer is kept, not when the check began: a check that outlasts
          // listCacheMs would otherwise be stale on arrival, and redone by every request.
          const known: KnownFiles = { at: this.deps.clock.now().getTime(), files, changesSeen };
          this.deps.memory.set(key, known, files.bytes);
          return known;
        })
        .finally(() => this.#finding.delete(catalog.serial));
      this.#finding.set(catalog.serial, finding);
    }
    return finding;
  }

  #freshKnownFiles(catalog: FileCatalog): KnownFiles | undefined {
    const known = this.deps.memory.get(existingKey(catalog)) as KnownFiles | undefined;
    if (known === undefined) return undefined;
    // Kept without the change position it should have (the log could not be read): asked again soon, the position with it.
    const missing = this.deps.changesPosition !== undefined && known.changesSeen === undefined;
    const freshFor = missing ? Math.min(CHANGES_POSITION_RETRY_MS, this.deps.listCacheMs) : this.deps.listCacheMs;
    return this.deps.clock.now().getTime() - known.at < freshFor ? known : undefined;
  }

  /**
   * A page read from storage from catalog row `start` on: windows of `limit + 1` rows, doubling,
   * until the page is full and one more file shows it is truncated, or the catalog ends.
   */
  async #pageFromStorage(catalog: FileCatalog, start: number, since: number, limit: number): Promise<Page> {
    const files: ExistingFile[] = [];
    let lastRow = -1;
    let window = limit + 1;
    for (let row = start; row < catalog.count; window *= 2) {
      const end = Math.min(catalog.count, row + window);
      const paths: string[] = [];
      for (let r = row; r < end; r += 1) paths.push(catalog.fileNameAt(r));
      const found = await this.deps.store.existing(paths);
      for (; row < end; row += 1) {
        const blob = found.get(catalog.fileNameAt(row));
        if (blob === undefined || blob.lastModified.getTime() < since) continue;
        if (files.length === limit) return { files, truncated: true, lastRow };
        files.push(existingFileOf(catalog.entryAt(row), blob));
        lastRow = row;
      }
    }
    return { files, truncated: false, lastRow };
  }

  async #findExistingFiles(catalog: FileCatalog): Promise<{ readonly files: ExistingFiles; readonly changesSeen: number | undefined }> {
    // Read before storage is asked: a change logged up to it happened before the listing sees storage.
    const changesSeen = await this.deps.changesPosition?.();
    // A million rows: the paths are gathered, and the answer read, in slices that give the event loop turns.
    const work = new Slicer({ yieldToLoop: this.deps.yieldToLoop, stepsPerSlice: ROWS_PER_SLICE });
    const paths: string[] = new Array<string>(catalog.count);
    for (let row = 0; row < catalog.count; row += 1) {
      paths[row] = catalog.fileNameAt(row);
      if (work.spent()) await work.pause();
    }
    const found = await this.deps.store.existing(paths);
    return { files: await ExistingFiles.of(catalog, found, work), changesSeen };
  }
}

function existingKey(catalog: FileCatalog): string {
  return `existing:${catalog.serial}`;
}

interface Page {
  readonly files: ExistingFile[];
  readonly truncated: boolean;
  /** The catalog row of the last file in `files`, or -1. */
  readonly lastRow: number;
}

/** A page of at most `limit` files from catalog row `start` on, uploaded at or after `since`. */
function pageOf(catalog: FileCatalog, existing: ExistingFiles, start: number, since: number, limit: number): Page {
  const files: ExistingFile[] = [];
  let lastRow = -1;
  for (let i = existing.firstAtOrAfter(start); i < existing.count; i += 1) {
    if (existing.uploadedAt(i) < since) continue;
    if (files.length === limit) return { files, truncated: true, lastRow };
    files.push(existing.fileAt(catalog, i));
    lastRow = existing.rowAt(i);
  }
  return { files, truncated: false, lastRow };
}

function existingFileOf(entry: CatalogEntry, blob: BlobSummary): ExistingFile {
  return {
    entry,
    size: blob.size,
    uploaded: blob.lastModified,
    etag: blob.etag,
    ...(blob.contentMd5 !== undefined && { md5: blob.contentMd5 }),
  };
}

/** The smallest of the positions, or `undefined` when any is (a source without one makes the whole unknown). */
function oldest(positions: ReadonlyArray<number | undefined>): number | undefined {
  let smallest = Infinity;
  for (const position of positions) {
    if (position === undefined) return undefined;
    smallest = Math.min(smallest, position);
  }
  return smallest;
}

/** The first of `0..length` for which `isAtOrPast` holds (it holds for every index after it too). */
function lowerBound(length: number, isAtOrPast: (index: number) => boolean): number {
  let low = 0;
  let high = length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (isAtOrPast(middle)) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** The row to start a listing at; throws `CursorExpired` when the position is from another version of the catalog. */
function startRow(catalog: FileCatalog, from: ListPosition | undefined): number {
  if (from === undefined) return 0;
  const sameRow = from.row >= 1 && from.row <= catalog.count && catalog.fileNameAt(from.row - 1) === from.lastFileName;
  if (from.version !== catalog.version || !sameRow) {
    throw new CursorExpired('The index changed since this listing started: list again without a cursor');
  }
  return from.row;
}

let nextExistingVersion = 1;

/**
 * Which rows of a catalog storage has, with what `/list` tells of each, in typed arrays and strings
 * of entity tags and MD5s: about 40 bytes and the tags' characters per file. The tags stay in the
 * pieces they were gathered in, one per slice: one string of all of them was one copy of some
 * 30 MB of fresh memory, which held the event loop for a third of a second on a busy machine.
 */
class ExistingFiles {
  readonly count: number;
  readonly bytes: number;
  /** Unique per existence list, so that a path order is never taken for another list's. */
  readonly version = nextExistingVersion++;

  private constructor(
    private readonly rows: Uint32Array,
    private readonly sizes: Float64Array,
    private readonly uploaded: Float64Array,
    /** Entity tag then MD5 (`''` when none) of each file, located by `tagOffsets` within its piece. */
    private readonly tagPieces: readonly string[],
    /** The first file of each piece of `tagPieces`, ascending. */
    private readonly pieceFirstFiles: readonly number[],
    private readonly tagOffsets: Uint32Array,
    /** 2 when some character of the tags does not fit in Latin-1 (V8 then keeps two bytes a character). */
    charBytes: 1 | 2,
  ) {
    this.count = rows.length;
    const tagCharacters = tagPieces.reduce((sum, piece) => sum + piece.length, 0);
    // The object, four typed arrays and two arrays; a piece costs its string's header and a slot in each array.
    this.bytes =
      7 * 160 + rows.byteLength + sizes.byteLength + uploaded.byteLength + tagOffsets.byteLength + tagPieces.length * 32 + tagCharacters * charBytes;
  }

  /** Reads `found` row by row of the catalog, one row a step of `work`. */
  static async of(catalog: FileCatalog, found: ReadonlyMap<string, BlobSummary>, work: Slicer): Promise<ExistingFiles> {
    // One lookup per row: each catalog path is sliced once, and a summary is only read where storage has the file.
    // Typed arrays of the most rows there can be, cut to size at the end: no array of a million numbers growing.
    const rows = new Uint32Array(catalog.count);
    const sizes = new Float64Array(catalog.count);
    const uploaded = new Float64Array(catalog.count);
    const tagOffsets = new Uint32Array(2 * catalog.count);
    const tagPieces: string[] = [];
    const pieceFirstFiles: number[] = [];
    let tags: string[] = [];
    let count = 0;
    let at = 0;
    const endPiece = (): void => {
      tagPieces.push(tags.join(''));
      tags = [];
      at = 0;
    };
    for (let row = 0; row < catalog.count; row += 1) {
      const blob = found.get(catalog.fileNameAt(row));
      if (blob !== undefined) {
        if (tags.length === 0) pieceFirstFiles.push(count);
        rows[count] = row;
        sizes[count] = blob.size;
        uploaded[count] = blob.lastModified.getTime();
        const md5 = blob.contentMd5 ?? '';
        tagOffsets[2 * count] = at;
        tagOffsets[2 * count + 1] = at + blob.etag.length;
        at += blob.etag.length + md5.length;
        tags.push(blob.etag, md5);
        count += 1;
      }
      if (work.spent()) {
        if (tags.length > 0) endPiece();
        await work.pause();
      }
    }
    if (tags.length > 0) endPiece();
    const charBytes = tagPieces.some((piece) => /[^\u0000-\u00ff]/.test(piece)) ? 2 : 1;
    return new ExistingFiles(
      await cutToSize(rows, count, work),
      await cutToSize(sizes, count, work),
      await cutToSize(uploaded, count, work),
      tagPieces,
      pieceFirstFiles,
      await cutToSize(tagOffsets, 2 * count, work),
      charBytes,
    );
  }

  /** The first file at or after catalog row `row`. */
  firstAtOrAfter(row: number): number {
    let low = 0;
    let high = this.count;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.rows[middle] as number) < row) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  uploadedAt(i: number): number {
    return this.uploaded[i] as number;
  }

  /** The catalog row of the `i`th file. */
  rowAt(i: number): number {
    return this.rows[i] as number;
  }

  fileAt(catalog: FileCatalog, i: number): ExistingFile {
    // The piece holding file i: the last whose first file is at or before it.
    const piece = lowerBound(this.pieceFirstFiles.length, (p) => (this.pieceFirstFiles[p] as number) > i) - 1;
    const tags = this.tagPieces[piece] as string;
    const tagsEnd = this.pieceFirstFiles[piece + 1] === i + 1 || i + 1 === this.count ? tags.length : (this.tagOffsets[2 * i + 2] as number);
    const etag = tags.slice(this.tagOffsets[2 * i], this.tagOffsets[2 * i + 1]);
    const md5 = tags.slice(this.tagOffsets[2 * i + 1], tagsEnd);
    const row = this.rows[i] as number;
    return {
      entry: catalog.entryAt(row),
      size: this.sizes[i] as number,
      uploaded: new Date(this.uploaded[i] as number),
      etag,
      ...(md5 !== '' && { md5 }),
    };
  }
}

/**
 * `array`'s first `length` elements in an array of their own (itself when it has no more): copied a
 * slice of `work` at a time, since the copy's first write to each page of fresh memory costs a page fault.
 */
async function cutToSize<T extends Uint32Array | Float64Array>(array: T, length: number, work: Slicer): Promise<T> {
  if (length === array.length) return array;
  const cut = (array instanceof Uint32Array ? new Uint32Array(length) : new Float64Array(length)) as T;
  for (let start = 0; start < length; start += ELEMENTS_PER_SLICE) {
    cut.set(array.subarray(start, Math.min(length, start + ELEMENTS_PER_SLICE)), start);
    await work.pause();
  }
  return cut;
}

/**
 * Orders strings as their UTF-8 bytes would be: by code point, which differs from JavaScript's
 * UTF-16 order only where a surrogate pair meets U+E000..U+FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(j) ?? 0;
    if (x !== y) return x < y ? -1 : 1;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  if (i < a.length) return 1;
  return j < b.length ? -1 : 0;
}
