import { createHash } from 'node:crypto';
import { ContentChanged, FileNotFound } from '../../domain/errors.js';
import type {
  BlobContent,
  BlobProperties,
  BlobReadOptions,
  BlobStore,
  BlobSummary,
  ByteRange,
} from '../../domain/ports.js';
import { validateStoragePath } from '../../domain/storage-path.js';
import { validateStoragePrefix } from './storage-prefix.js';

/** What a test may set when it puts a blob; everything else is derived from the bytes. */
/** `contentMd5` is computed from the bytes and `lastModified` is the time of the put, unless given. */
export type MemoryBlobOptions = Partial<
  Pick<
    BlobProperties,
    'contentType' | 'contentDisposition' | 'contentEncoding' | 'contentLanguage' | 'cacheControl' | 'contentMd5' | 'metadata' | 'lastModified'
  >
>;

interface StoredBlob {
  readonly bytes: Uint8Array;
  readonly properties: BlobProperties;
}

const CHUNK_SIZE = 64 * 1024;

/**
 * A `BlobStore` held in a `Map`, for unit tests. Every `put` makes a new version with a new strong
 * ETag; a `read` streams the version it checked even if the blob is replaced meanwhile.
 */
export class MemoryBlobStore implements BlobStore {
  readonly #blobs = new Map<string, StoredBlob>();
  #versions = 0;

  put(path: string, bytes: Uint8Array | string, options: MemoryBlobOptions = {}): void {
    validateStoragePath(path);
    // A copy (a Buffer's `slice` would be a view), so the caller cannot change a stored version.
    const copy = typeof bytes === 'string' ? new TextEncoder().encode(bytes) : new Uint8Array(bytes);
    this.#versions += 1;
    const digest = createHash('md5').update(copy).digest();
    const { lastModified, contentMd5, metadata, ...httpHeaders } = options;
    const properties: BlobProperties = {
      path,
      size: copy.byteLength,
      etag: `"${this.#versions.toString(16)}-${digest.toString('hex').slice(0, 16)}"`,
      lastModified: lastModified ?? new Date(),
      ...httpHeaders,
      contentMd5: contentMd5 ?? digest.toString('base64'),
      metadata: { ...metadata },
    };
    this.#blobs.set(path, { bytes: copy, properties });
  }

  delete(path: string): void {
    this.#blobs.delete(path);
  }

  async getProperties(path: string): Promise<BlobProperties | undefined> {
    validateStoragePath(path);
    return this.#blobs.get(path)?.properties;
  }

  async *list(prefix: string): AsyncIterable<BlobSummary> {
    validateStoragePrefix(prefix);
    for (const { properties } of [...this.#blobs.values()]) {
      if (!properties.path.startsWith(prefix)) continue;
      yield summaryOf(properties);
    }
  }

  async existing(paths: readonly string[]): Promise<ReadonlyMap<string, BlobSummary>> {
    const found = new Map<string, BlobSummary>();
    for (const path of paths) {
      const properties = await this.getProperties(path);
      if (properties !== undefined) found.set(path, summaryOf(properties));
    }
    return found;
  }

  async probe(signal?: AbortSignal): Promise<void> {
    // Memory always answers, unless the caller has given up already.
    signal?.throwIfAborted();
  }

  async read(path: string, options: BlobReadOptions): Promise<BlobContent> {
    validateStoragePath(path);
    options.signal?.throwIfAborted();
    const blob = this.#blobs.get(path);
    if (blob === undefined) throw new FileNotFound(`No blob at ${JSON.stringify(path)}`);
    if (blob.properties.etag !== options.ifMatch) {
      throw new ContentChanged(`The blob at ${JSON.stringify(path)} is no longer ${options.ifMatch}`);
    }
    const range = options.range ?? { start: 0, end: blob.bytes.byteLength - 1 };
    return chunksOf(blob.bytes, range, options.signal);
  }
}

async function* chunksOf(
  bytes: Uint8Array,
  range: ByteRange,
  signal: AbortSignal | undefined,
): AsyncGenerator<Uint8Array> {
  for (let start = range.start; start <= range.end; start += CHUNK_SIZE) {
    signal?.throwIfAborted();
    yield bytes.slice(start, Math.min(start + CHUNK_SIZE, range.end + 1));
  }
}

function summaryOf(properties: BlobProperties): BlobSummary {
  const { path, size, etag, lastModified, contentMd5 } = properties;
  return { path, size, etag, lastModified, ...(contentMd5 !== undefined && { contentMd5 }) };
}
