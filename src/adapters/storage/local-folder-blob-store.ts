import { fstatSync, type BigIntStats, type Dirent } from 'node:fs';
import { access, constants, lstat, open, opendir, readdir, realpath, stat, type FileHandle } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { extname, join, sep } from 'node:path';
import { ContentChanged, FileNotFound, StorageUnavailable } from '../../domain/errors.js';
import type {
  BlobContent,
  BlobProperties,
  BlobReadOptions,
  BlobStore,
  BlobSummary,
} from '../../domain/ports.js';
import { validateStoragePath } from '../../domain/storage-path.js';
import { ROWS_PER_SLICE, Slicer, type SliceBudget } from '../../domain/slices.js';
import { EXISTENCE_CHECK } from './existing-blobs.js';
import { ChunkedList, ShardedMap } from './big-collections.js';
import { validateStoragePrefix } from './storage-prefix.js';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.parquet': 'application/vnd.apache.parquet',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.gz': 'application/gzip',
  '.txt': 'text/plain',
};

/** The `Content-Type` a local file is served with, by its extension (none for others). */
export function contentTypeOf(path: string): string | undefined {
  return CONTENT_TYPES[extname(path).toLowerCase()];
}

// The path does not lead to a file: missing, a component is a file, a symlink loop, a name too long.
const ABSENT_CODES = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'ENAMETOOLONG']);

/**
 * A `BlobStore` over a folder of the local file system, for development and tests. Paths are
 * relative to `root`; nothing outside `root` is ever served, including through symlinks.
 *
 * The ETag is built from size and nanosecond mtime, so it survives restarts. Two same-size writes
 * within one file-system timestamp tick share an ETag; publishers should replace files whole.
 */
export class LocalFolderBlobStore implements BlobStore {
  readonly #root: string;
  readonly #slices: SliceBudget;
  #realRoot: Promise<string> | undefined;

  /**
   * @param root Absolute path of the folder that holds the blobs.
   * @param slices How `existing` shares the thread: at most `stepsPerSlice` paths or names looked at between two turns of the event loop.
   */
  constructor(root: string, slices: SliceBudget = { yieldToLoop: () => nextTurn(), stepsPerSlice: ROWS_PER_SLICE }) {
    this.#root = root;
    this.#slices = slices;
  }

  async getProperties(path: string): Promise<BlobProperties | undefined> {
    const file = await this.#resolveInsideRoot(validateStoragePath(path));
    if (file === undefined) return undefined;
    try {
      const stats = await stat(file, { bigint: true });
      return stats.isFile() ? propertiesOf(path, stats) : undefined;
    } catch (error) {
      if (isAbsent(error)) return undefined;
      throw unavailable(error, path);
    }
  }

  async *list(prefix: string): AsyncIterable<BlobSummary> {
    validateStoragePrefix(prefix);
    const lastSlash = prefix.lastIndexOf('/');
    const folder = prefix.slice(0, lastSlash + 1);
    const namePrefix = prefix.slice(lastSlash + 1);
    const start = await this.#resolveInsideRoot(folder);
    if (start === undefined) return;
    yield* this.#walk(start, folder, namePrefix);
  }

  /**
   * Which of `paths` exist, at the cost of the files asked about rather than of their folders: each
   * folder is resolved inside the root once, a folder with many wanted files is read once (its
   * names, no more) so that only the wanted names it holds are stat'ed, and each of those costs one
   * `lstat`, {@link statConcurrency} at a time. A symlink gets `getProperties`' realpath check.
   * Throws `InvalidPath` for a path that could leave the store, as `getProperties` does.
   */
  async existing(paths: readonly string[]): Promise<ReadonlyMap<string, BlobSummary>> {
    // A million paths are validated, grouped and matched against their folders in slices, with a
    // turn of the event loop between two: in one piece each pass held it for a second.
    const work = new Slicer(this.#slices);
    // Folders in the order met, each with its wanted paths: arrays, no object or set per file.
    const folderIndex = new ShardedMap<number>();
    const folders: string[] = [];
    const wantedIn: ChunkedList<string>[] = [];
    for (const path of paths) {
      validateStoragePath(path);
      const slash = path.lastIndexOf('/');
      const folder = slash === -1 ? '' : path.slice(0, slash);
      let f = folderIndex.get(folder);
      if (f === undefined) {
        f = folders.length;
        folderIndex.set(folder, f);
        folders.push(folder);
        wantedIn.push(new ChunkedList());
      }
      (wantedIn[f] as ChunkedList<string>).push(path);
      if (work.spent()) await work.pause();
    }
    // Two parallel lists, the storage path and its resolved folder: no object per file.
    const candidates = new ChunkedList<string>();
    const realFolders = new ChunkedList<string>();
    await runConcurrently(folders.length, EXISTENCE_CHECK.concurrency, async (f) => {
      const folder = folders[f] as string;
      const wanted = wantedIn[f] as ChunkedList<string>;
      const real = await this.#resolveInsideRoot(folder);
      if (real === undefined) return;
      const nameStart = folder === '' ? 0 : folder.length + 1;
      let held: ShardedMap<true> | undefined;
      if (wanted.length >= EXISTENCE_CHECK.listThreshold) {
        let names: string[];
        try {
          names = await readdir(real);
        } catch (error) {
          if (isAbsent(error)) return;
          throw unavailable(error, folder);
        }
        held = new ShardedMap();
        for (const name of names) {
          held.set(name, true);
          if (work.spent()) await work.pause();
        }
      }
      for (const path of wanted) {
        if (held === undefined || held.has(path.slice(nameStart))) {
          candidates.push(path);
          realFolders.push(real);
        }
        if (work.spent()) await work.pause();
      }
    });
    const found = new StatTable();
    // One async loop per file in flight, not an async call per file: a file costs one promise.
    let next = 0;
    const statNext = async (): Promise<void> => {
      while (next < candidates.length) {
        const i = next++;
        const path = candidates.at(i);
        let stats: BigIntStats;
        try {
          // Not followed: a plain file in a folder resolved inside the root is inside the root.
          stats = await lstat(`${realFolders.at(i)}${sep}${path.slice(path.lastIndexOf('/') + 1)}`, { bigint: true });
          if (stats.isSymbolicLink()) {
            const target = await this.#resolveInsideRoot(path);
            if (target === undefined) continue;
            stats = await stat(target, { bigint: true });
          }
        } catch (error) {
          if (isAbsent(error)) continue;
          next = candidates.length; // the answer has failed: the other loops stop after their current file
          throw unavailable(error, path);
        }
        if (stats.isFile()) found.add(path, stats);
      }
    };
    await Promise.all(Array.from({ length: Math.min(statConcurrency, candidates.length) }, statNext));
    return found;
  }

  async probe(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const root = await this.#getRealRoot();
    try {
      await access(root, constants.R_OK | constants.X_OK);
    } catch (error) {
      throw unavailable(error, root);
    }
  }

  async read(path: string, options: BlobReadOptions): Promise<BlobContent> {
    const file = await this.#resolveInsideRoot(validateStoragePath(path));
    if (file === undefined) throw new FileNotFound(`No file at ${JSON.stringify(path)}`);
    let handle: FileHandle;
    try {
      handle = await open(file, 'r');
    } catch (error) {
      if (isAbsent(error)) throw new FileNotFound(`No file at ${JSON.stringify(path)}`, { cause: error });
      throw unavailable(error, path);
    }
    try {
      // The ETag comes from the opened handle, so the bytes streamed belong to the version checked.
      const stats = await handle.stat({ bigint: true });
      if (!stats.isFile()) throw new FileNotFound(`No file at ${JSON.stringify(path)}`);
      if (etagOf(stats) !== options.ifMatch) {
        throw new ContentChanged(`The file at ${JSON.stringify(path)} is no longer ${options.ifMatch}`);
      }
      const range = options.range ?? { start: 0, end: Number(stats.size) - 1 };
      if (range.end < range.start) {
        await handle.close();
        return emptyContent();
      }
      return closingOnReturn(versionPinnedChunks(handle, range, options, path), handle);
    } catch (error) {
      await handle.close();
      if (error instanceof FileNotFound || error instanceof ContentChanged) throw error;
      throw unavailable(error, path);
    }
  }

  /** The real path of `relative` when it exists inside the real root; `undefined` otherwise. */
  async #resolveInsideRoot(relative: string): Promise<string | undefined> {
    const realRoot = await this.#getRealRoot();
    let real: string;
    try {
      real = await realpath(join(realRoot, ...relative.split('/')));
    } catch (error) {
      if (isAbsent(error)) return undefined;
      throw unavailable(error, relative);
    }
    return real === realRoot || real.startsWith(realRoot + sep) ? real : undefined;
  }

  #getRealRoot(): Promise<string> {
    this.#realRoot ??= realpath(this.#root).catch((error: unknown) => {
      this.#realRoot = undefined;
      throw unavailable(error, this.#root);
    });
    return this.#realRoot;
  }

  async *#walk(folder: string, relativeFolder: string, namePrefix: string): AsyncGenerator<BlobSummary> {
    let entries: Dirent[];
    try {
      entries = [];
      for await (const entry of await opendir(folder)) entries.push(entry);
    } catch (error) {
      // A folder removed or replaced by a file while walking just has nothing to list.
      if (isAbsent(error)) return;
      throw unavailable(error, relativeFolder);
    }
    const wanted = entries.filter((entry) => entry.name.startsWith(namePrefix) && isSafeName(entry.name));
    // Plain files of a folder already resolved inside the root need no realpath each: they are
    // stat'ed a batch at a time, so a folder of 100,000 files costs little more than readdir + stat.
    for (let start = 0; start < wanted.length; start += statBatch) {
      const batch = wanted.slice(start, start + statBatch);
      const summaries = await Promise.all(batch.map((entry) => (entry.isFile() ? this.#statFile(folder, relativeFolder, entry.name) : undefined)));
      for (const [i, entry] of batch.entries()) {
        const relative = relativeFolder + entry.name;
        if (entry.isDirectory()) {
          yield* this.#walk(join(folder, entry.name), `${relative}/`, '');
        } else if (entry.isFile()) {
          const summary = summaries[i];
          if (summary !== undefined) yield summary;
        } else if (entry.isSymbolicLink()) {
          // Symlinked folders are not followed (no cycles); symlinked files count if inside the root.
          const properties = await this.getProperties(relative);
          if (properties === undefined) continue;
          const { path, size, etag, lastModified } = properties;
          yield { path, size, etag, lastModified };
        }
      }
    }
  }

  async #statFile(folder: string, relativeFolder: string, name: string): Promise<BlobSummary | undefined> {
    try {
      const stats = await stat(join(folder, name), { bigint: true });
      if (!stats.isFile()) return undefined;
      return { path: relativeFolder + name, size: Number(stats.size), etag: etagOf(stats), lastModified: stats.mtime };
    } catch (error) {
      if (isAbsent(error)) return undefined;
      throw unavailable(error, relativeFolder + name);
    }
  }
}

/** Files stat'ed at once while listing a folder. */
const statBatch = 64;

/** Files stat'ed at once by `existing`: as many as a listing's batch, enough to keep libuv's threads busy. */
const statConcurrency = 64;

/** Runs `task` for each of `0..count`, `concurrency` at a time, without an object or a queue entry per item. */
async function runConcurrently(count: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    try {
      while (next < count) await task(next++);
    } catch (error) {
      next = count; // the whole run has failed: the other workers stop after their current task
      throw error;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/**
 * What `existing` found, as a read-only map from storage path to summary that keeps a size, a time
 * and a tag per file and builds the summary when asked. A catalog's existence check holds its
 * answer until the domain has read it; as an object and a `Date` per file, that answer survived
 * into V8's old generation and its collection was a sixth of a 100,000-file check. The numbers live
 * in JavaScript arrays rather than typed arrays: V8 hands their pages back after a collection,
 * where freed typed arrays (malloc'd) leave holes under the catalog's own that the process keeps;
 * they and the index by path grow in small parts (big-collections.ts), so that filling the table
 * for a million files never holds the event loop.
 */
class StatTable implements ReadonlyMap<string, BlobSummary> {
  readonly #slots = new ShardedMap<number>();
  /** The path of each slot, in the order found. */
  readonly #paths = new ChunkedList<string>();
  readonly #sizes = new ChunkedList<number>();
  readonly #modifiedMs = new ChunkedList<number>();
  readonly #etags = new ChunkedList<string>();

  /** A path asked about twice (catalog rows may share one) keeps one slot. */
  add(path: string, stats: BigIntStats): void {
    if (this.#slots.has(path)) return;
    this.#slots.set(path, this.#sizes.length);
    this.#paths.push(path);
    this.#sizes.push(Number(stats.size));
    this.#modifiedMs.push(Number(stats.mtimeMs));
    this.#etags.push(etagOf(stats));
  }

  get size(): number {
    return this.#slots.size;
  }

  has(path: string): boolean {
    return this.#slots.has(path);
  }

  get(path: string): BlobSummary | undefined {
    const slot = this.#slots.get(path);
    return slot === undefined ? undefined : this.#summary(path, slot);
  }

  forEach(callback: (value: BlobSummary, key: string, map: ReadonlyMap<string, BlobSummary>) => void, thisArg?: unknown): void {
    let slot = 0;
    for (const path of this.#paths) callback.call(thisArg, this.#summary(path, slot++), path, this);
  }

  *entries(): MapIterator<[string, BlobSummary]> {
    let slot = 0;
    for (const path of this.#paths) yield [path, this.#summary(path, slot++)];
  }

  *keys(): MapIterator<string> {
    yield* this.#paths;
  }

  *values(): MapIterator<BlobSummary> {
    let slot = 0;
    for (const path of this.#paths) yield this.#summary(path, slot++);
  }

  [Symbol.iterator](): MapIterator<[string, BlobSummary]> {
    return this.entries();
  }

  #summary(path: string, slot: number): BlobSummary {
    return { path, size: this.#sizes.at(slot), etag: this.#etags.at(slot), lastModified: new Date(this.#modifiedMs.at(slot)) };
  }
}

function propertiesOf(path: string, stats: BigIntStats): BlobProperties {
  const contentType = contentTypeOf(path);
  return {
    path,
    size: Number(stats.size),
    etag: etagOf(stats),
    lastModified: stats.mtime,
    ...(contentType !== undefined && { contentType }),
    metadata: {},
  };
}

function etagOf(stats: BigIntStats): string {
  return `"${stats.size.toString(16)}-${stats.mtimeNs.toString(16)}"`;
}

function isSafeName(name: string): boolean {
  try {
    validateStoragePath(name);
    return true;
  } catch {
    return false;
  }
}

function isAbsent(error: unknown): boolean {
  return error instanceof Error && ABSENT_CODES.has((error as NodeJS.ErrnoException).code ?? '');
}

function unavailable(error: unknown, path: string): StorageUnavailable {
  return new StorageUnavailable(`The local folder failed on ${JSON.stringify(path)}`, {
    cause: error,
    retryable: false,
  });
}

async function* emptyContent(): AsyncGenerator<Uint8Array> {}

/**
 * A generator's `finally` only runs once it has started: returning an iteration that never began
 * must still close the file.
 */
function closingOnReturn(chunks: AsyncGenerator<Uint8Array>, handle: FileHandle): BlobContent {
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => chunks.next(),
      return: async () => {
        await chunks.return(undefined);
        await handle.close().catch(() => undefined);
        return { done: true, value: undefined };
      },
    }),
  };
}

/** Bytes read per chunk: large enough that the version check after each read costs little. */
const READ_CHUNK_BYTES = 1024 * 1024;

/**
 * The bytes of `range`, each chunk checked to belong to the version announced (`ifMatch`): after
 * every read the open file is stat'ed again, and a change of size or modification time (a file
 * rewritten in place during the download) fails the iteration with `ContentChanged`, so the
 * gateway destroys the connection rather than send bytes of two versions under one ETag. A chunk
 * is only handed on once a check after its read passed. Closes the file however the iteration ends.
 */
async function* versionPinnedChunks(
  handle: FileHandle,
  range: { readonly start: number; readonly end: number },
  options: BlobReadOptions,
  path: string,
): AsyncGenerator<Uint8Array> {
  try {
    let position = range.start;
    while (position <= range.end) {
      options.signal?.throwIfAborted();
      const length = Math.min(READ_CHUNK_BYTES, range.end - position + 1);
      const buffer = Buffer.allocUnsafe(length);
      const { bytesRead } = await handle.read(buffer, 0, length, position);
      // fstat on an open descriptor is one cheap system call: done synchronously, off the thread pool.
      const now = fstatSync(handle.fd, { bigint: true });
      if (bytesRead === 0 || etagOf(now) !== options.ifMatch) {
        throw new ContentChanged(`The file at ${JSON.stringify(path)} changed while it was being read`);
      }
      position += bytesRead;
      yield bytesRead === length ? buffer : buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}
