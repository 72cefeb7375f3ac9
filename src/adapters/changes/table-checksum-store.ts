import { createHash } from 'node:crypto';
import { odata, type TableClient } from '@azure/data-tables';
import type { ChecksumStore, Clock, FileVersion } from '../../domain/ports.js';
import { ensureTable, queryEntities, safeKey, tableCall } from './table-storage.js';

export interface TableChecksumStoreOptions {
  readonly clock: Clock;
  /** Memory for checksums read back from the table, in bytes (default 16 MiB); least recently used folders go first. */
  readonly cacheBytes?: number;
  /** How long a folder read from the table is trusted before a version it lacks makes it read again (default 10 s). */
  readonly staleAfterMs?: number;
}

/**
 * The SHA-256 of file versions in Azure Table Storage, one partition per storage folder (row key:
 * the file's name), so that the files of a listing, which share few folders, are found with a
 * query per folder rather than a call per file. Each instance keeps the folders it read in a cache
 * bounded in bytes; a version missing from a folder read more than `staleAfterMs` ago reads the
 * folder again (another instance may have recorded it since). A folder bigger than a quarter of
 * the cache is never cached: its versions are asked by name, 14 a query.
 */
export class TableChecksumStore implements ChecksumStore {
  readonly #table: TableClient;
  readonly #clock: Clock;
  readonly #maxBytes: number;
  readonly #staleAfterMs: number;
  /** Folder → its checksums, in least-recently-used order (a `Map` keeps insertion order). */
  readonly #folders = new Map<string, CachedFolder>();
  #bytes = 0;
  /** Folders found too big to cache whole (a quarter of the cache): looked up by name instead. */
  readonly #largeFolders = new Set<string>();
  #ready: Promise<void> | undefined;

  constructor(table: TableClient, options: TableChecksumStoreOptions) {
    this.#table = table;
    this.#clock = options.clock;
    this.#maxBytes = options.cacheBytes ?? 16 * 1024 * 1024;
    this.#staleAfterMs = options.staleAfterMs ?? 10_000;
  }

  async record(version: FileVersion, sha256: string): Promise<void> {
    await this.#ensure();
    const { folder, name } = split(version.path);
    await tableCall('record a checksum', () =>
      this.#table.upsertEntity({ partitionKey: folderKey(folder), rowKey: nameKey(name), path: version.path, fileEtag: version.etag, sha256 }, 'Replace'),
    );
    const cached = this.#folders.get(folder);
    if (cached !== undefined) {
      const before = cached.entries.get(version.path);
      cached.entries.set(version.path, { etag: version.etag, sha256 });
      this.#account(cached, before === undefined ? entryBytes(version.path) : 0);
    }
  }

  async lookup(versions: readonly FileVersion[]): Promise<ReadonlyMap<string, string>> {
    const found = new Map<string, string>();
    const byFolder = new Map<string, FileVersion[]>();
    for (const version of versions) {
      const { folder } = split(version.path);
      let list = byFolder.get(folder);
      if (list === undefined) byFolder.set(folder, (list = []));
      list.push(version);
    }
    for (const [folder, list] of byFolder) {
      let cached: CachedFolder | undefined = this.#folders.get(folder);
      const now = this.#clock.now().getTime();
      const complete = cached !== undefined && list.every((v) => cached?.entries.get(v.path)?.etag === v.etag);
      if (this.#largeFolders.has(folder)) cached = await this.#readNames(folder, list);
      else if (cached === undefined || (!complete && now - cached.readAt >= this.#staleAfterMs)) cached = (await this.#readFolder(folder, now)) ?? (await this.#readNames(folder, list));
      else this.#touch(folder, cached);
      for (const version of list) {
        const known = cached.entries.get(version.path);
        if (known !== undefined && known.etag === version.etag) found.set(version.path, known.sha256);
      }
    }
    return found;
  }

  /**
   * The checksums of `versions` of a folder too big to cache whole, asked by name: 14 names a
   * query (Table Storage allows 15 comparisons in a filter, one is the partition's), never cached.
   */
  async #readNames(folder: string, versions: readonly FileVersion[]): Promise<CachedFolder> {
    await this.#ensure();
    const entries = new Map<string, { etag: string; sha256: string }>();
    const keys = [...new Set(versions.map((v) => nameKey(split(v.path).name)))];
    for (let start = 0; start < keys.length; start += 14) {
      const names = keys.slice(start, start + 14).map((key) => odata`RowKey eq ${key}`);
      const filter = `${odata`PartitionKey eq ${folderKey(folder)}`} and (${names.join(' or ')})`;
      for await (const row of queryEntities<{ path: string; fileEtag: string; sha256: string }>(this.#table, filter, ['path', 'fileEtag', 'sha256'])) {
        entries.set(row.path, { etag: row.fileEtag, sha256: row.sha256 });
      }
    }
    return { entries, readAt: 0, bytes: 0 };
  }

  /** The whole folder, cached; `undefined` (and the folder remembered as large) when it would take more than a quarter of the cache. */
  async #readFolder(folder: string, now: number): Promise<CachedFolder | undefined> {
    await this.#ensure();
    const entries = new Map<string, { etag: string; sha256: string }>();
    let bytes = 0;
    const filter = odata`PartitionKey eq ${folderKey(folder)}`;
    for await (const row of queryEntities<{ path: string; fileEtag: string; sha256: string }>(this.#table, filter, ['path', 'fileEtag', 'sha256'])) {
      entries.set(row.path, { etag: row.fileEtag, sha256: row.sha256 });
      bytes += entryBytes(row.path);
      if (bytes > this.#maxBytes / 4) {
        if (this.#largeFolders.size >= MAX_LARGE_FOLDERS) this.#largeFolders.delete(this.#largeFolders.values().next().value as string);
        this.#largeFolders.add(folder);
        return undefined;
      }
    }
    const old = this.#folders.get(folder);
    if (old !== undefined) {
      this.#folders.delete(folder);
      this.#bytes -= old.bytes;
    }
    const cached: CachedFolder = { entries, readAt: now, bytes: 0 };
    this.#folders.set(folder, cached);
    this.#account(cached, bytes);
    return cached;
  }

  #touch(folder: string, cached: CachedFolder): void {
    this.#folders.delete(folder);
    this.#folders.set(folder, cached);
  }

  #account(cached: CachedFolder, bytes: number): void {
    cached.bytes += bytes;
    this.#bytes += bytes;
    for (const [folder, oldest] of this.#folders) {
      if (this.#bytes <= this.#maxBytes) break;
      // The folder just read (at most a quarter of the bound) is kept for the call that read it.
      if (oldest === cached) continue;
      this.#folders.delete(folder);
      this.#bytes -= oldest.bytes;
    }
  }

  #ensure(): Promise<void> {
    this.#ready ??= ensureTable(this.#table).catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }
}

/** Folders remembered as too big to cache, at most (the oldest forgotten first). */
const MAX_LARGE_FOLDERS = 10_000;

interface CachedFolder {
  readonly entries: Map<string, { etag: string; sha256: string }>;
  readonly readAt: number;
  bytes: number;
}

/** What one cached checksum costs: the path twice (key and text), an etag, 64 hex digits, the objects. */
function entryBytes(path: string): number {
  return 2 * path.length * 2 + 40 + 64 + 120;
}

function split(path: string): { folder: string; name: string } {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? { folder: '', name: path } : { folder: path.slice(0, slash), name: path.slice(slash + 1) };
}

/** Keys are at most 1 KiB: a long folder or name is keyed by its SHA-256 (the path itself is kept in the entity). */
function folderKey(folder: string): string {
  return boundedKey('f_', folder);
}

function nameKey(name: string): string {
  return boundedKey('n_', name);
}

function boundedKey(prefix: string, text: string): string {
  const safe = safeKey(text);
  return safe.length <= 400 ? `${prefix}${safe}` : `h${prefix}${createHash('sha256').update(text).digest('hex')}`;
}
