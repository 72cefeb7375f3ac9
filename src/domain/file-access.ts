import { decideDownload, type DownloadDecision, type DownloadRequest } from './download-policy.js';
import type { Entitlement } from './entitlement.js';
import { FileNotFound } from './errors.js';
import type { CatalogEntry, FileCatalog } from './file-catalog.js';
import type { BlobContent, BlobProperties, BlobStore, Clock, Principal } from './ports.js';

/** A catalog file that storage has. */
export interface ExistingFile {
  readonly entry: CatalogEntry;
  readonly size: number;
  readonly uploaded: Date;
  readonly etag: string;
  /** Base64 MD5 of the content, when storage has one. */
  readonly md5?: string;
}

export interface ListOptions {
  /** At most this many files. */
  readonly limit: number;
  /** Only files uploaded at or after this moment. */
  readonly modifiedSince?: Date;
}

export interface FileListing {
  /** At most `limit` existing files, in index order. */
  readonly files: readonly ExistingFile[];
  /** How many files `files` holds (as `/catalog`'s count); `/count` gives the total. */
  readonly count: number;
  readonly limit: number;
  /** More existing files than `limit`. */
  readonly truncated: boolean;
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
}

interface KnownFiles {
  readonly at: number;
  readonly files: Promise<ExistingFile[]>;
}

/**
 * The gateway's use cases: what a client may see of storage and what a download request gets.
 * Entitlement is always decided before storage is asked whether a file exists.
 */
export class FileAccess {
  /** Per catalog version: which of its files exist, and when storage said so. */
  readonly #known = new WeakMap<FileCatalog, KnownFiles>();

  constructor(private readonly deps: FileAccessDependencies) {}

  catalog(principal: Principal): Promise<FileCatalog> {
    return this.deps.entitlement.catalogFor(principal);
  }

  async list(principal: Principal, options: ListOptions): Promise<FileListing> {
    const since = options.modifiedSince?.getTime();
    const existing = (await this.existingFiles(principal)).filter((file) => since === undefined || file.uploaded.getTime() >= since);
    const files = existing.slice(0, options.limit);
    return { files, count: files.length, limit: options.limit, truncated: existing.length > options.limit };
  }

  /** The client's existing files by storage path: for clients that page through paths rather than the index. */
  async listByPath(principal: Principal, options: PathListOptions): Promise<PathListing> {
    const byPath = new Map<string, ExistingFile>();
    for (const file of await this.existingFiles(principal)) {
      const path = file.entry.fileName;
      if (!path.startsWith(options.prefix) || byPath.has(path)) continue;
      if (options.after !== undefined && compareUtf8(path, options.after) <= 0) continue;
      byPath.set(path, file);
    }
    const sorted = [...byPath.values()].sort((a, b) => compareUtf8(a.entry.fileName, b.entry.fileName));
    return { files: sorted.slice(0, options.limit), truncated: sorted.length > options.limit };
  }

  async count(principal: Principal): Promise<number> {
    return (await this.existingFiles(principal)).length;
  }

  /** Throws `NotEntitled` or `FileNotFound`. */
  async info(principal: Principal, symbol: string): Promise<FileDetails> {
    const entry = await this.deps.entitlement.entryForSymbol(principal, symbol);
    return { entry, properties: await this.propertiesOf(entry) };
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
   * and `/count` polled by many clients cost storage one listing.
   */
  private async existingFiles(principal: Principal): Promise<ExistingFile[]> {
    const catalog = await this.deps.entitlement.catalogFor(principal);
    const now = this.deps.clock.now().getTime();
    const known = this.#known.get(catalog);
    if (known !== undefined && now - known.at < this.deps.listCacheMs) return known.files;
    const files = this.#findExistingFiles(catalog);
    this.#known.set(catalog, { at: now, files });
    // A failure is not kept: the next request asks storage again.
    files.catch(() => {
      if (this.#known.get(catalog)?.files === files) this.#known.delete(catalog);
    });
    return files;
  }

  async #findExistingFiles(catalog: FileCatalog): Promise<ExistingFile[]> {
    const found = await this.deps.store.existing(catalog.entries.map((entry) => entry.fileName));
    const existing: ExistingFile[] = [];
    for (const entry of catalog.entries) {
      const blob = found.get(entry.fileName);
      if (blob === undefined) continue;
      existing.push({
        entry,
        size: blob.size,
        uploaded: blob.lastModified,
        etag: blob.etag,
        ...(blob.contentMd5 !== undefined && { md5: blob.contentMd5 }),
      });
    }
    return existing;
  }
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
