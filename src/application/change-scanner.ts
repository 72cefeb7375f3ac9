import type { ChangedFile, FileChange, FileChangeType } from '../domain/changes.js';
import { ChangeScannerOverBudget, ContentChanged, FileNotFound, IndexMalformed } from '../domain/errors.js';
import { FileCatalogBuilder } from '../domain/file-catalog.js';
import type {
  BlobStore,
  ChangeLog,
  ChecksumStore,
  ClientRegistry,
  Clock,
  ContentHasher,
  IndexRecord,
  IndexRowSink,
  IndexRowWarning,
  IndexSource,
  ScannedBlob,
  ScannedRow,
  ScanState,
  ScanStateStore,
} from '../domain/ports.js';
import { Slicer, type SliceBudget } from '../domain/slices.js';
import { isReleasedAt } from '../domain/subscription.js';

export interface ChangeScannerDependencies {
  readonly store: BlobStore;
  readonly indexes: IndexSource;
  readonly registry: ClientRegistry;
  readonly log: ChangeLog;
  readonly checksums: ChecksumStore;
  readonly hasher: ContentHasher;
  readonly state: ScanStateStore;
  readonly clock: Clock;
  /**
   * How fast versions stored before the first scan are read to compute their SHA-256, in bytes per
   * second of time between two scans (each scan spends what the time since the previous one allows).
   */
  readonly backlogBytesPerSecond: number;
  /** Long passes (a listing of 100,000 blobs, an index of a million rows) give the event loop a turn every slice. */
  readonly slices: SliceBudget;
  /**
   * The most the scanner may hold, in bytes: the listing of storage and the rows of every index some
   * client names, with their lookups, as counted by `SCANNED_BLOB_BYTES` and `SCANNED_ROW_BYTES`. A
   * scan that would hold more stops with `ChangeScannerOverBudget` before it does.
   */
  readonly maxBytes: number;
}

/**
 * Bytes the scanner holds per blob of the listing besides the characters of its path and ETag: the
 * map's entry, the summary and its date, and the two strings' headers (about 200 measured on Node
 * 20 and 24, in test/application/change-scanner-memory.test.ts).
 */
export const SCANNED_BLOB_BYTES = 240;

/**
 * Bytes the scanner holds per index row besides the characters of its symbol and file name: the
 * row, its entries in the lookups by symbol and by path, and the strings' headers. Measured (as
 * `SCANNED_BLOB_BYTES`) at 100-150 bytes a row when rows share their files and about 290 when each
 * row names a file of its own (its own entry in the lookup by path): counted as the latter.
 */
export const SCANNED_ROW_BYTES = 300;

/** What the scanner counts for one index row: `SCANNED_ROW_BYTES` and the characters of its symbol and file name. */
function rowBytes(symbol: string, fileName: string): number {
  return SCANNED_ROW_BYTES + symbol.length + fileName.length;
}

/** What the scanner counts for one blob of the listing. */
function blobBytes(path: string, blob: ScannedBlob): number {
  return SCANNED_BLOB_BYTES + path.length + blob.etag.length;
}

/** Counts what a scan holds against the budget, and stops the scan before it holds more. */
class HeldBytes {
  bytes = 0;
  blobs = 0;
  indexes = 0;
  rows = 0;
  constructor(private readonly budget: number) {}

  addBlob(path: string, blob: ScannedBlob): void {
    this.blobs += 1;
    this.add(blobBytes(path, blob));
  }

  /** An index's rows, counted as a whole (kept from the last scan). */
  addRows(rows: readonly ScannedRow[], bytes: number): void {
    this.indexes += 1;
    this.rows += rows.length;
    this.add(bytes);
  }

  /** One row of an index being read, counted before the next is made. */
  addRow(bytes: number): void {
    this.rows += 1;
    this.add(bytes);
  }

  /** An index read row by row (`addRow`) is complete. */
  addIndex(): void {
    this.indexes += 1;
  }

  /** Rows counted while parsing an index that turned out malformed (its former rows are kept instead). */
  release(bytes: number, rows: number): void {
    this.bytes -= bytes;
    this.rows -= rows;
  }

  private add(bytes: number): void {
    this.bytes += bytes;
    if (this.bytes > this.budget) throw new ChangeScannerOverBudget(this.bytes, this.budget, { blobs: this.blobs, indexes: this.indexes, rows: this.rows });
  }
}

/**
 * A catalog builder whose rows are counted against the scan's budget as they are parsed, so that an
 * index too large for it stops the scan before it is held whole (as `FileCatalogBuilder` does, or
 * as the scanner's rows).
 */
class CountedCatalogBuilder implements IndexRowSink {
  readonly builder = new FileCatalogBuilder();
  bytes = 0;
  rows = 0;
  constructor(private readonly held: HeldBytes) {}

  record(record: IndexRecord): void {
    const bytes = rowBytes(record.Symbol, record.FileName);
    this.bytes += bytes;
    this.rows += 1;
    this.held.addRow(bytes);
    this.builder.record(record);
  }

  rejected(warning: IndexRowWarning): void {
    this.builder.rejected(warning);
  }
}

/** What one scan did, for logs, metrics and tests. */
export interface ScanReport {
  /** The first scan records what exists and finds no change. */
  readonly first: boolean;
  readonly listed: number;
  readonly added: number;
  readonly changed: number;
  readonly removed: number;
  /** Indexes read again because their version changed (or, on the first scan, every index). */
  readonly indexesRead: number;
  /** The storage paths of the indexes whose version changed since the last scan (none on the first). */
  readonly indexesChanged: readonly string[];
  /** Changes appended to the log, all clients together. */
  readonly changes: number;
  /** Bytes read to compute SHA-256 of new versions, and of older ones in the background. */
  readonly hashedBytes: number;
  readonly backlogHashedBytes: number;
  /** Versions stored before the first scan still waiting for their SHA-256. */
  readonly backlogLeft: number;
  /** What the scan holds, counted against its budget (`maxBytes`): the listing and the rows of every index. */
  readonly heldBytes: number;
}

/**
 * Finds what changed in each client's view since the last scan, and logs it.
 *
 * A client's view is its index's rows whose file is stored and whose release window holds the
 * moment. Per scan: storage is listed once and diffed against the last listing; an index is read
 * again only when its version (its entity tag, in that listing) changed, and diffed row by row;
 * window boundaries that passed since the last scan are found in a sorted table built when the
 * index was read. Only the rows these touch are looked at, so a scan costs one listing plus work in
 * proportion to what changed (not to the number of clients, rows or files). Every new version is
 * read once for its SHA-256, before its change is logged.
 *
 * The state (the listing, the rows of each index, the clients, the time of the scan) is saved
 * with the changes found *before* they are appended; whoever loads it appends them unless the log
 * has them already. So a scan that dies halfway, or another instance that takes over, neither
 * loses nor repeats a change.
 */
export class ChangeScanner {
  readonly #deps: ChangeScannerDependencies;
  #state: ScanState | undefined;
  /** Lookups derived from the rows of each index, built once per version read. */
  readonly #views = new Map<string, { readonly rows: readonly ScannedRow[]; readonly view: IndexView }>();
  /** What each index's rows count against the budget, computed once per rows read. */
  readonly #rowBytes = new WeakMap<readonly ScannedRow[], number>();

  constructor(deps: ChangeScannerDependencies) {
    this.#deps = deps;
  }

  /**
   * Drops what this instance remembers of the last scan, so that the next one starts from the
   * saved state: for an instance that (re)gains the scanner lease, since another may have scanned.
   */
  forget(): void {
    this.#state = undefined;
    this.#views.clear();
  }

  async scan(): Promise<ScanReport> {
    const { clock, log } = this.#deps;
    let now = clock.now();
    let previous = this.#state ?? (await this.#deps.state.load());
    // An instance whose clock is behind the last scanner's never sees time run backwards (a window
    // would seem to close again): it scans as of the later of the two.
    if (previous !== undefined && now.getTime() < previous.scannedAt.getTime()) now = previous.scannedAt;
    if (previous?.pending !== undefined) {
      // A scan that saved its changes but may have died before appending them.
      if ((await log.head()) === previous.pending.after) await log.append(previous.pending.changes);
      const { pending: _appended, ...rest } = previous;
      previous = rest;
    }
    const held = new HeldBytes(this.#deps.maxBytes);
    const blobs = new Map<string, ScannedBlob>();
    for await (const blob of this.#deps.store.list('')) {
      const scanned = { etag: blob.etag, size: blob.size, lastModified: blob.lastModified };
      held.addBlob(blob.path, scanned);
      blobs.set(blob.path, scanned);
    }
    const clients = new Map<string, string>();
    for (const client of await this.#deps.registry.all()) if (client.enabled) clients.set(client.clientId, client.indexPath);

    if (previous === undefined) return this.#firstScan(now, blobs, clients, held);

    const changedPaths: string[] = [];
    let added = 0;
    let changed = 0;
    let removed = 0;
    const slicer = new Slicer(this.#deps.slices);
    for (const [path, blob] of blobs) {
      if (slicer.spent()) await slicer.pause();
      const before = previous.blobs.get(path);
      if (before === undefined) added += 1;
      else if (before.etag !== blob.etag) changed += 1;
      else continue;
      changedPaths.push(path);
    }
    for (const path of previous.blobs.keys()) {
      if (slicer.spent()) await slicer.pause();
      if (blobs.has(path)) continue;
      removed += 1;
      changedPaths.push(path);
    }

    // The indexes first: a scan over its budget stops before it reads and hashes the new versions.
    const indexes = new Map<string, { version: string | undefined; rows: readonly ScannedRow[] }>();
    const reread = new Set<string>();
    for (const indexPath of new Set(clients.values())) {
      const before = previous.indexes.get(indexPath);
      const listed = blobs.get(indexPath)?.etag;
      if (before !== undefined && before.version === listed) {
        held.addRows(before.rows, this.#bytesOf(before.rows));
        indexes.set(indexPath, before);
        continue;
      }
      const read = await this.#readIndex(indexPath, before?.rows ?? [], listed, held);
      indexes.set(indexPath, read);
      reread.add(indexPath);
    }

    const hashes = new Map<string, string>();
    let hashedBytes = 0;
    for (const path of changedPaths) {
      const blob = blobs.get(path);
      if (blob === undefined) continue;
      const sha256 = await this.#hash(path, blob);
      if (sha256 === undefined) continue;
      hashes.set(path, sha256);
      hashedBytes += blob.size;
    }

    const context: DiffContext = { before: previous, blobs, indexes, since: previous.scannedAt.getTime(), at: now.getTime() };
    const byIndex = new Map<string, readonly SymbolChange[]>();
    const found: { clientId: string; change: SymbolChange }[] = [];
    for (const clientId of [...clients.keys()].sort()) {
      const indexPath = clients.get(clientId) as string;
      const formerIndex = previous.clients.get(clientId);
      // A client first seen is recorded as it is: it lists what exists, as on the first scan.
      if (formerIndex === undefined) continue;
      let changes: readonly SymbolChange[];
      if (formerIndex === indexPath) {
        changes = byIndex.get(indexPath) ?? (await this.#indexChanges(indexPath, changedPaths, reread.has(indexPath), context));
        byIndex.set(indexPath, changes);
      } else {
        changes = await this.#viewChanges(formerIndex, indexPath, undefined, context);
      }
      for (const change of changes) found.push({ clientId, change });
    }

    const known = await this.#deps.checksums.lookup(
      found.filter(({ change }) => !hashes.has(change.file.fileName)).map(({ change }) => ({ path: change.file.fileName, etag: change.file.etag })),
    );
    const changes: FileChange[] = found.map(({ clientId, change }) => {
      const sha256 = change.file.etag === blobs.get(change.file.fileName)?.etag ? (hashes.get(change.file.fileName) ?? known.get(change.file.fileName)) : known.get(change.file.fileName);
      return { clientId, type: change.type, time: now, file: sha256 === undefined ? change.file : { ...change.file, sha256 } };
    });

    const backlog = previous.backlog.filter((path) => blobs.has(path) && !hashes.has(path));
    let state: ScanState = { scannedAt: now, blobs, indexes, clients, backlog };
    const moved =
      changedPaths.length > 0 || reread.size > 0 || backlog.length !== previous.backlog.length || !sameClients(previous.clients, clients);
    if (changes.length > 0) {
      state = { ...state, pending: { after: await log.head(), changes } };
      await this.#deps.state.save(state);
      await log.append(changes);
      const { pending: _appended, ...rest } = state;
      state = rest;
    } else if (moved) {
      await this.#deps.state.save(state);
    }
    this.#state = state;
    await this.#keepViews(indexes);

    const elapsedSeconds = Math.max(0, Math.min(300, (now.getTime() - previous.scannedAt.getTime()) / 1000));
    const backlogHashedBytes = await this.#hashBacklog(state, elapsedSeconds * this.#deps.backlogBytesPerSecond);
    return {
      first: false,
      listed: blobs.size,
      added,
      changed,
      removed,
      indexesRead: reread.size,
      indexesChanged: [...reread],
      changes: changes.length,
      hashedBytes,
      backlogHashedBytes,
      backlogLeft: this.#state.backlog.length,
      heldBytes: held.bytes,
    };
  }

  async #firstScan(now: Date, blobs: Map<string, ScannedBlob>, clients: Map<string, string>, held: HeldBytes): Promise<ScanReport> {
    const indexes = new Map<string, { version: string | undefined; rows: readonly ScannedRow[] }>();
    for (const indexPath of new Set(clients.values())) {
      indexes.set(indexPath, await this.#readIndex(indexPath, [], blobs.get(indexPath)?.etag, held));
    }
    const state: ScanState = { scannedAt: now, blobs, indexes, clients, backlog: [...blobs.keys()] };
    await this.#deps.state.save(state);
    this.#state = state;
    await this.#keepViews(indexes);
    return {
      first: true,
      listed: blobs.size,
      added: 0,
      changed: 0,
      removed: 0,
      indexesRead: indexes.size,
      indexesChanged: [],
      changes: 0,
      hashedBytes: 0,
      backlogHashedBytes: 0,
      backlogLeft: state.backlog.length,
      heldBytes: held.bytes,
    };
  }

  /** What `rows` count against the budget (rows kept from the last scan, or loaded with its state). */
  #bytesOf(rows: readonly ScannedRow[]): number {
    let bytes = this.#rowBytes.get(rows);
    if (bytes === undefined) {
      bytes = 0;
      for (const row of rows) bytes += rowBytes(row.symbol, row.fileName);
      this.#rowBytes.set(rows, bytes);
    }
    return bytes;
  }

  /**
   * The rows of the index at `indexPath`. An index that cannot be parsed keeps its former rows (its
   * clients' views do not change until it is fixed), recorded under its new version so that it is
   * not read again each scan.
   */
  async #readIndex(
    indexPath: string,
    former: readonly ScannedRow[],
    listed: string | undefined,
    held: HeldBytes,
  ): Promise<{ version: string | undefined; rows: readonly ScannedRow[] }> {
    let counted: CountedCatalogBuilder | undefined;
    try {
      // Each row is counted as it is parsed (a scan over its budget stops there), not again below.
      const loaded = await this.#deps.indexes.load(indexPath, () => {
        // Read again (replaced while read): what the first read counted is not held.
        if (counted !== undefined) held.release(counted.bytes, counted.rows);
        counted = new CountedCatalogBuilder(held);
        return counted;
      });
      if (loaded === undefined) return { version: undefined, rows: [] };
      const { catalog } = await loaded.rows.builder.buildInSlices(loaded.version, this.#deps.slices);
      const rows: ScannedRow[] = [];
      let bytes = 0;
      const slicer = new Slicer(this.#deps.slices);
      for (const entry of catalog) {
        if (slicer.spent()) await slicer.pause();
        const row = {
          symbol: entry.symbol,
          fileName: entry.fileName,
          from: entry.availableFrom?.getTime() ?? null,
          until: entry.availableUntil?.getTime() ?? null,
        };
        bytes += rowBytes(row.symbol, row.fileName);
        rows.push(row);
      }
      held.addIndex();
      this.#rowBytes.set(rows, bytes);
      return { version: loaded.version, rows };
    } catch (error) {
      if (!(error instanceof IndexMalformed)) throw error;
      if (counted !== undefined) held.release(counted.bytes, counted.rows);
      held.addRows(former, this.#bytesOf(former));
      return { version: listed, rows: former };
    }
  }

  /** The changes of the view of every client of `indexPath` that kept it: only the rows touched. */
  async #indexChanges(indexPath: string, changedPaths: readonly string[], reread: boolean, context: DiffContext): Promise<readonly SymbolChange[]> {
    const beforeRows = context.before.indexes.get(indexPath)?.rows ?? [];
    const afterRows = context.indexes.get(indexPath)?.rows ?? [];
    const after = await this.#view(indexPath, afterRows, true);
    const before = beforeRows === afterRows ? after : await this.#view(indexPath, beforeRows);
    const slicer = new Slicer(this.#deps.slices);
    const candidates = new Set<string>();
    for (const path of changedPaths) {
      if (slicer.spent()) await slicer.pause();
      for (const symbol of before.byPath.get(path) ?? []) candidates.add(symbol);
      for (const symbol of after.byPath.get(path) ?? []) candidates.add(symbol);
    }
    if (reread) {
      for (const [symbol, row] of after.bySymbol) {
        if (slicer.spent()) await slicer.pause();
        if (!sameRow(row, before.bySymbol.get(symbol))) candidates.add(symbol);
      }
      for (const symbol of before.bySymbol.keys()) {
        if (slicer.spent()) await slicer.pause();
        if (!after.bySymbol.has(symbol)) candidates.add(symbol);
      }
    }
    for (const view of new Set([before, after])) for (const symbol of view.boundariesWithin(context.since, context.at)) candidates.add(symbol);
    return this.#viewChanges(indexPath, indexPath, candidates, context);
  }

  /** Compares the view of the rows of `formerIndex` then with those of `indexPath` now, for `candidates` (every symbol when absent). */
  async #viewChanges(formerIndex: string, indexPath: string, candidates: ReadonlySet<string> | undefined, context: DiffContext): Promise<readonly SymbolChange[]> {
    const before = await this.#view(formerIndex, context.before.indexes.get(formerIndex)?.rows ?? []);
    const after = await this.#view(indexPath, context.indexes.get(indexPath)?.rows ?? [], true);
    const symbols = candidates ?? new Set([...before.bySymbol.keys(), ...after.bySymbol.keys()]);
    const changes: SymbolChange[] = [];
    const slicer = new Slicer(this.#deps.slices);
    // Sorted (only the rows touched): the same order on every instance.
    for (const symbol of [...symbols].sort()) {
      if (slicer.spent()) await slicer.pause();
      const old = before.bySymbol.get(symbol);
      const now = after.bySymbol.get(symbol);
      const oldBlob = old === undefined ? undefined : context.before.blobs.get(old.fileName);
      const newBlob = now === undefined ? undefined : context.blobs.get(now.fileName);
      const wasIn = old !== undefined && oldBlob !== undefined && released(old, context.since);
      const isIn = now !== undefined && newBlob !== undefined && released(now, context.at);
      let type: FileChangeType | undefined;
      if (!wasIn && isIn) type = 'file.released';
      else if (wasIn && !isIn) type = 'file.withdrawn';
      else if (wasIn && isIn && (old.fileName !== now.fileName || oldBlob.etag !== newBlob.etag)) type = 'file.updated';
      if (type === undefined) continue;
      const row = (type === 'file.withdrawn' ? old : now) as ScannedRow;
      const blob = (type === 'file.withdrawn' ? (context.blobs.get(row.fileName) ?? oldBlob) : newBlob) as ScannedBlob;
      changes.push({ type, file: changedFile(row, blob) });
    }
    return changes;
  }

  /** The lookups of `rows`, built once per version of the index; kept when they are its rows now (`current`). */
  async #view(indexPath: string, rows: readonly ScannedRow[], current = false): Promise<IndexView> {
    const kept = this.#views.get(indexPath);
    if (kept !== undefined && kept.rows === rows) return kept.view;
    const view = await IndexView.build(rows, this.#deps.slices);
    if (current) this.#views.set(indexPath, { rows, view });
    return view;
  }

  /** Keeps the lookups of the indexes in `indexes` (their current rows) and forgets the others. */
  async #keepViews(indexes: ReadonlyMap<string, { readonly rows: readonly ScannedRow[] }>): Promise<void> {
    for (const indexPath of this.#views.keys()) if (!indexes.has(indexPath)) this.#views.delete(indexPath);
    for (const [indexPath, { rows }] of indexes) {
      const kept = this.#views.get(indexPath);
      if (kept === undefined || kept.rows !== rows) this.#views.set(indexPath, { rows, view: await IndexView.build(rows, this.#deps.slices) });
    }
  }

  /** Reads one version for its SHA-256 and records it; `undefined` when the version is gone already. */
  async #hash(path: string, blob: ScannedBlob): Promise<string | undefined> {
    try {
      const sha256 = await this.#deps.hasher.sha256(await this.#deps.store.read(path, { ifMatch: blob.etag }));
      await this.#deps.checksums.record({ path, etag: blob.etag }, sha256);
      return sha256;
    } catch (error) {
      // Replaced or deleted since the listing: the next scan sees the version that replaced it.
      if (error instanceof ContentChanged || error instanceof FileNotFound) return undefined;
      throw error;
    }
  }

  /** Hashes versions stored before the first scan, up to `budget` bytes (at least one when there is any budget). */
  async #hashBacklog(state: ScanState, budget: number): Promise<number> {
    if (budget <= 0 || state.backlog.length === 0) return 0;
    let spent = 0;
    let done = 0;
    while (done < state.backlog.length && spent < budget) {
      const batch = state.backlog.slice(done, done + 100);
      const versions = batch.flatMap((path) => {
        const blob = state.blobs.get(path);
        return blob === undefined ? [] : [{ path, etag: blob.etag }];
      });
      // Another instance may have hashed some before it lost the lease.
      const known = await this.#deps.checksums.lookup(versions);
      for (const path of batch) {
        if (spent >= budget) break;
        done += 1;
        const blob = state.blobs.get(path);
        if (blob === undefined || known.has(path)) continue;
        if ((await this.#hash(path, blob)) !== undefined) spent += blob.size;
      }
    }
    // Progress is kept in the checksum store; the saved backlog is trimmed with the next saved state.
    this.#state = { ...state, backlog: state.backlog.slice(done) };
    return spent;
  }
}

interface SymbolChange {
  readonly type: FileChangeType;
  readonly file: ChangedFile;
}

interface DiffContext {
  readonly before: ScanState;
  readonly blobs: ReadonlyMap<string, ScannedBlob>;
  readonly indexes: ReadonlyMap<string, { readonly rows: readonly ScannedRow[] }>;
  /** The previous scan's moment and this one's, in milliseconds. */
  readonly since: number;
  readonly at: number;
}

/** The rows of one index by symbol and by path, and their window boundaries in time order. */
class IndexView {
  readonly bySymbol = new Map<string, ScannedRow>();
  readonly byPath = new Map<string, string[]>();
  #times = new Float64Array(0);
  #symbols: string[] = [];

  static async build(rows: readonly ScannedRow[], slices: SliceBudget): Promise<IndexView> {
    const view = new IndexView();
    const slicer = new Slicer(slices);
    const boundaries: { time: number; symbol: string }[] = [];
    for (const row of rows) {
      if (slicer.spent()) await slicer.pause();
      view.bySymbol.set(row.symbol, row);
      const symbols = view.byPath.get(row.fileName);
      if (symbols === undefined) view.byPath.set(row.fileName, [row.symbol]);
      else symbols.push(row.symbol);
      if (row.from !== null) boundaries.push({ time: row.from, symbol: row.symbol });
      if (row.until !== null) boundaries.push({ time: row.until, symbol: row.symbol });
    }
    // One sort, of the rows that have a window only (a comparison is a few nanoseconds).
    boundaries.sort((a, b) => a.time - b.time);
    view.#times = Float64Array.from(boundaries, (b) => b.time);
    view.#symbols = boundaries.map((b) => b.symbol);
    return view;
  }

  /** The symbols of the rows with a window boundary in `(since, at]`. */
  boundariesWithin(since: number, at: number): string[] {
    const found: string[] = [];
    for (let i = firstAbove(this.#times, since); i < this.#times.length && (this.#times[i] as number) <= at; i += 1) found.push(this.#symbols[i] as string);
    return found;
  }
}

function firstAbove(times: Float64Array, value: number): number {
  let low = 0;
  let high = times.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((times[middle] as number) <= value) low = middle + 1;
    else high = middle;
  }
  return low;
}

function released(row: ScannedRow, at: number): boolean {
  return isReleasedAt(row.from ?? Number.NEGATIVE_INFINITY, row.until ?? Number.POSITIVE_INFINITY, at);
}

function sameRow(a: ScannedRow, b: ScannedRow | undefined): boolean {
  return b !== undefined && a.fileName === b.fileName && a.from === b.from && a.until === b.until;
}

function sameClients(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [clientId, indexPath] of a) if (b.get(clientId) !== indexPath) return false;
  return true;
}

function changedFile(row: ScannedRow, blob: ScannedBlob): ChangedFile {
  return { symbol: row.symbol, fileName: row.fileName, size: blob.size, etag: blob.etag, uploaded: blob.lastModified };
}
