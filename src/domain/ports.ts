/**
 * The ports the domain owns. Adapters in `src/adapters` implement them; nothing here knows about
 * Express, Azure or the file system.
 */

/** What storage knows about one blob. */
export interface BlobProperties {
  /** Path inside the container or folder, `/`-separated, no leading slash. */
  readonly path: string;
  readonly size: number;
  /** Strong entity tag including its double quotes, e.g. `"0x8DC2A4F5B1C2D3E"`. */
  readonly etag: string;
  readonly lastModified: Date;
  readonly contentType?: string;
  readonly contentDisposition?: string;
  readonly contentEncoding?: string;
  readonly contentLanguage?: string;
  readonly cacheControl?: string;
  /** Base64 MD5 of the content, when storage knows it. */
  readonly contentMd5?: string;
  /** User metadata (`x-ms-meta-*` on Azure). */
  readonly metadata: Readonly<Record<string, string>>;
}

/** One entry of a listing: enough to tell that a blob exists and how big it is. */
export interface BlobSummary {
  readonly path: string;
  readonly size: number;
  readonly etag: string;
  readonly lastModified: Date;
}

/** An explicit, satisfiable byte range; both ends inclusive, as in `Content-Range`. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

export interface BlobReadOptions {
  /** The bytes to read; the whole blob when absent. */
  readonly range?: ByteRange;
  /** Read only the version with this entity tag; any other version fails with `ContentChanged`. */
  readonly ifMatch: string;
  /** Aborts the read, e.g. when the subscriber disconnects. */
  readonly signal?: AbortSignal;
}

/** A blob's bytes, streamed. A failure after the first chunk surfaces as an error of the iteration. */
export type BlobContent = AsyncIterable<Uint8Array>;

/**
 * Read-only access to the files a vendor publishes. Every method throws `StorageUnavailable` when
 * storage fails, and `InvalidPath` for a path that could leave the container or folder.
 */
export interface BlobStore {
  /** The blob's properties, or `undefined` when there is no blob at `path`. */
  getProperties(path: string): Promise<BlobProperties | undefined>;
  /** Every blob whose path starts with `prefix` (`''` for all), in no guaranteed order. */
  list(prefix: string): AsyncIterable<BlobSummary>;
  /**
   * Streams the blob's bytes once storage has confirmed the version. Throws `NotFound` when the blob
   * is gone and `ContentChanged` when its entity tag is no longer `options.ifMatch`.
   */
  read(path: string, options: BlobReadOptions): Promise<BlobContent>;
}

/** One data row of a client index, with the columns the gateway uses (others are dropped). */
export interface IndexRecord {
  /** 1-based data row number (the header is row 0), for log messages. */
  readonly row: number;
  readonly Symbol: string;
  readonly ShortDescriptionPt: string;
  readonly ShortDescription: string;
  readonly FileName: string;
}

/** An index row left out of a catalog, and why. */
export interface IndexRowWarning {
  readonly row: number;
  readonly message: string;
}

/** A parsed index and the version of the stored file it came from. */
export interface LoadedIndex {
  readonly records: readonly IndexRecord[];
  /** Rows the parser could not turn into records (e.g. a wrong number of cells). */
  readonly rejectedRows: readonly IndexRowWarning[];
  /** Changes whenever the stored index changes (its entity tag). */
  readonly version: string;
}

/** Where client indexes come from. */
export interface IndexSource {
  /** The index at `path`, or `undefined` when there is none. Throws `IndexMalformed`. */
  load(path: string): Promise<LoadedIndex | undefined>;
  /** The current version of the index at `path` without reading it, or `undefined` when absent. */
  version(path: string): Promise<string | undefined>;
}

/** A registered subscriber. */
export interface ClientRecord {
  readonly clientId: string;
  /** Self-describing hash of the secret (algorithm, parameters, salt, digest); never the secret. */
  readonly secretHash: string;
  /** Storage path of the client's index CSV. */
  readonly indexPath: string;
  readonly enabled: boolean;
}

/** The registry of subscribers. */
export interface ClientRegistry {
  find(clientId: string): Promise<ClientRecord | undefined>;
}

/** Who is calling, once a bearer token has been verified. */
export interface Principal {
  readonly clientId: string;
  readonly indexPath: string;
}

export interface IssuedToken {
  readonly accessToken: string;
  /** Lifetime in whole seconds. */
  readonly expiresIn: number;
}

/** Issues and verifies bearer tokens. */
export interface TokenStore {
  issue(client: ClientRecord): Promise<IssuedToken>;
  /** The caller behind `token`. Throws `InvalidToken` when it is malformed, forged, expired or revoked. */
  verify(token: string): Promise<Principal>;
}

export interface Clock {
  now(): Date;
}
