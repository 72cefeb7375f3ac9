import type { BigIntStats, Dirent } from 'node:fs';
import { open, opendir, realpath, stat, type FileHandle } from 'node:fs/promises';
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
import { EXISTENCE_CHECK, findExistingBlobs } from './existing-blobs.js';
import { validateStoragePrefix } from './storage-prefix.js';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.parquet': 'application/vnd.apache.parquet',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.gz': 'application/gzip',
  '.txt': 'text/plain',
};

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
  #realRoot: Promise<string> | undefined;

  /** @param root Absolute path of the folder that holds the blobs. */
  constructor(root: string) {
    this.#root = root;
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

  existing(paths: readonly string[]): Promise<ReadonlyMap<string, BlobSummary>> {
    return findExistingBlobs(this, paths, EXISTENCE_CHECK);
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
      return handle.createReadStream({ start: range.start, end: range.end, signal: options.signal });
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
    for (const entry of entries) {
      if (!entry.name.startsWith(namePrefix) || !isSafeName(entry.name)) continue;
      const relative = relativeFolder + entry.name;
      if (entry.isDirectory()) {
        yield* this.#walk(join(folder, entry.name), `${relative}/`, '');
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        // Symlinked folders are not followed (no cycles); symlinked files count if inside the root.
        const properties = await this.getProperties(relative);
        if (properties === undefined) continue;
        const { path, size, etag, lastModified } = properties;
        yield { path, size, etag, lastModified };
      }
    }
  }
}

function propertiesOf(path: string, stats: BigIntStats): BlobProperties {
  const contentType = CONTENT_TYPES[extname(path).toLowerCase()];
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
