import type { FileChange, LoggedChange } from './changes.js';
import type { BudgetStanding } from './errors.js';
import type { DeliveryOutcome, NewWebhookEndpoint, WebhookDeliveryState, WebhookEndpoint } from './webhooks.js';

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
  /** Base64 MD5 of the content, when storage knows it. */
  readonly contentMd5?: string;
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
   * Which of `paths` exist, keyed by path. How it finds out (listing folders, reading properties,
   * how many calls at once) is the store's business.
   */
  existing(paths: readonly string[]): Promise<ReadonlyMap<string, BlobSummary>>;
  /**
   * One cheap call that proves storage answers (for readiness). Throws `StorageUnavailable`, or the
   * abort reason once `signal` (the readiness check's own budget) is aborted.
   */
  probe(signal?: AbortSignal): Promise<void>;
  /**
   * Streams the blob's bytes once storage has confirmed the version. Throws `FileNotFound` when the blob
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
  /** `AvailableFrom`, parsed: the row's file is not served before this moment. Absent: unbounded. */
  readonly availableFrom?: Date;
  /** `AvailableUntil`, parsed: the row's file is not served from this moment on. Absent: unbounded. */
  readonly availableUntil?: Date;
}

/** An index row left out of a catalog, and why. */
export interface IndexRowWarning {
  readonly row: number;
  readonly message: string;
}

/** Takes an index's rows one at a time as they are parsed, so that no index is ever held whole. */
export interface IndexRowSink {
  record(record: IndexRecord): void;
  /** A row the parser could not turn into a record (e.g. a wrong number of cells). */
  rejected(warning: IndexRowWarning): void;
}

/** A parsed index: the sink its rows went to, and the version of the stored file they came from. */
export interface LoadedIndex<S extends IndexRowSink> {
  readonly rows: S;
  /** Changes whenever the stored index changes (its entity tag). */
  readonly version: string;
}

/** Where client indexes come from. */
export interface IndexSource {
  /**
   * Parses the index at `path` into a sink from `newSink` (a fresh one should the index be replaced
   * while read), or gives `undefined` when there is none. Throws `IndexMalformed`.
   */
  load<S extends IndexRowSink>(path: string, newSink: () => S): Promise<LoadedIndex<S> | undefined>;
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
  /** Ids of the access keys the operator issued to the client (for signed-request APIs); none when absent. */
  readonly accessKeyIds?: readonly string[];
  /** When the subscription term starts (inclusive); unbounded when absent. */
  readonly validFrom?: Date;
  /** When the subscription term ends (exclusive); unbounded when absent. */
  readonly validUntil?: Date;
  /** The most bytes the client may take per calendar month (UTC); unlimited when absent. */
  readonly monthlyBytes?: number;
}

/** The registry of subscribers. */
export interface ClientRegistry {
  /** The client with this id, or `undefined`. Throws when the registry cannot be read at all. */
  find(clientId: string): Promise<ClientRecord | undefined>;
  /** The client that holds the access key with this id, or `undefined`. Throws as `find`. */
  findByAccessKey(accessKeyId: string): Promise<ClientRecord | undefined>;
  /** What keeps the registry from being read right now, or `undefined` when it reads (for readiness). */
  problem(): Promise<string | undefined>;
  /** Every registered client, enabled or not (the change scanner computes each one's view). Throws as `find`. */
  all(): Promise<readonly ClientRecord[]>;
}

/**
 * Hashing of client secrets. Verification takes the same time whether or not the secret matches
 * (constant-time comparison).
 */
export interface SecretHasher {
  /** Whether `secret` is the one `hash` was made from; a malformed hash is a mismatch. */
  verify(secret: string, hash: string): Promise<boolean>;
  /** The hash of a secret that no client has, verified for unknown ids so that they cost the same. */
  decoyHash(): Promise<string>;
  /** A short, stable id of a stored hash (never of the secret itself). */
  fingerprint(hash: string): string;
}

/** Who is calling, once a bearer token has been verified. */
export interface Principal {
  readonly clientId: string;
  readonly indexPath: string;
  /** The client's subscription term, when it has bounds (grants made for it end with it). */
  readonly validFrom?: Date;
  readonly validUntil?: Date;
  /** The client's monthly byte quota; unlimited when absent. */
  readonly monthlyBytes?: number;
}

/** What a bearer token says, once its signature and lifetime have been checked. */
export interface TokenClaims {
  readonly clientId: string;
  /** The fingerprint of the client's secret hash when the token was issued. */
  readonly secretFingerprint: string;
}

/** The claims of a token whose signature and lifetime were checked, and when it expires. */
export interface VerifiedToken extends TokenClaims {
  readonly expiresAt: Date;
}

/** Signs and checks self-contained bearer tokens. Knows nothing of clients being active. */
export interface TokenStore {
  /** A signed token carrying `claims`, valid for `lifetimeSeconds` from now. */
  issue(claims: TokenClaims, lifetimeSeconds: number): Promise<string>;
  /** The claims of `token`. Throws `InvalidToken` when it is malformed, forged or expired. */
  verify(token: string): Promise<VerifiedToken>;
}

/**
 * What a signed token is for. Each purpose is signed under its own key (derived from
 * TOKEN_SIGNING_KEY) with its own `typ` and audience, so a token of one purpose is refused by every
 * other: a download link is never a bearer token, nor an S3 session token a link.
 */
export type TokenPurpose = 'access-token' | 'download-link' | 's3-session-token';

/** What a MAC is for (opaque paging positions, the change feed's cursors); each purpose has its own key, as tokens do. */
export type MacPurpose = 'list-cursor' | 's3-continuation-token' | 'changes-cursor';

/** What a signed token says: who it is about, its purpose's own claims, and when it expires. */
export interface TokenContent<C extends string = string> {
  readonly subject: string;
  /** The purpose's own claims, strings only; never a registered JWT claim name (`sub`, `exp`, ...). */
  readonly claims: Readonly<Record<C, string>>;
  /** Kept to the second (JWT `exp`); the token is refused from that second on. */
  readonly expiresAt: Date;
}

/**
 * The outcome of checking a token: its content, or why it is refused. The reasons are neutral:
 * each caller turns them into its own refusal (`InvalidToken`, `invalid_link`, S3's `ExpiredToken`).
 */
export type TokenCheck<C extends string = string> =
  | { readonly valid: true; readonly token: TokenContent<C> & { readonly issuedAt: Date } }
  | {
      readonly valid: false;
      /** `expired`: signed by this gateway for this purpose, but past its `exp`. `bad-signature`: not signed with this purpose's key. `malformed`: anything else. */
      readonly reason: 'expired' | 'bad-signature' | 'malformed';
      readonly cause?: unknown;
    };

/**
 * The one signer of the gateway: every signed thing (access tokens, download links, S3 session
 * tokens, paging cursors) and the S3 secret access keys go through it. Times come from the
 * gateway's `Clock`.
 */
export interface Signer {
  /** A compact JWT for `purpose` carrying `content`, issued now. */
  signToken<C extends string>(purpose: TokenPurpose, content: TokenContent<C>): Promise<string>;
  /**
   * Checks a token's algorithm, signature, `typ`, issuer, audience and lifetime for `purpose`, and
   * that it carries each of `claims` as a string. Never throws for a bad token.
   */
  verifyToken<C extends string>(purpose: TokenPurpose, token: string, claims: readonly C[]): Promise<TokenCheck<C>>;
  /** A base64url MAC binding `fields` (in order, unambiguously) for `purpose`. */
  mac(purpose: MacPurpose, fields: readonly string[]): string;
  /** Whether `mac` is the MAC of `fields` for `purpose`; compared in constant time. */
  verifyMac(purpose: MacPurpose, fields: readonly string[], mac: string): boolean;
  /**
   * The secret access key of an S3 access key id. Operators hand these secrets to subscribers, so
   * the derivation never changes with the signer's other keys.
   */
  s3SecretAccessKey(accessKeyId: string): string;
  /**
   * The signing secret of a webhook endpoint, as Standard Webhooks shows it: `whsec_` and the
   * base64 of 32 bytes derived (HKDF, purpose `webhook-secret`) from TOKEN_SIGNING_KEY and the
   * endpoint id. Never stored: the same on every instance, shown to its owner once.
   */
  webhookSecret(endpointId: string): string;
  /** The base64 HMAC-SHA-256 of `content` under the endpoint's secret (Standard Webhooks' `v1`). */
  webhookSignature(endpointId: string, content: string): string;
}

/**
 * Memory bounded in bytes for parsed catalogs and what is derived from them (CATALOG_CACHE_MB):
 * when a new value would exceed the bound, the least recently used values go first. Callers state
 * each value's size, so the bound is only as honest as they are.
 */
export interface BoundedMemory {
  get(key: string): object | undefined;
  /** Keeps `value`, accounted as `bytes`; a value bigger than the whole bound is not kept. */
  set(key: string, value: object, bytes: number): void;
  delete(key: string): void;
}

/** What the bounded memory holds and has done, for the metrics. */
export interface BoundedMemoryStats {
  readonly bytes: number;
  readonly maxBytes: number;
  readonly entries: number;
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
}

export interface Clock {
  now(): Date;
}

/** A reservation asked of a quota ledger. */
export interface QuotaReservationRequest {
  readonly clientId: string;
  /** The period's key, e.g. `2026-11`. */
  readonly period: string;
  readonly bytes: number;
  /** The most the period may count; a reservation that would pass it is refused whole. */
  readonly limit: number;
  /** When the ledger may forget this period's count. */
  readonly expiresAt: Date;
}

/**
 * Bytes counted per client and period. `reserve` is atomic: of concurrent reservations (on any
 * instance sharing the ledger) no two can both spend the same remaining bytes. Keys are registered
 * client ids only (callers reserve after authentication), so the ledger is bounded by the registry.
 */
export interface QuotaLedger {
  /** Adds `bytes` when `used + bytes <= limit`; `used` is the count before this reservation. */
  reserve(request: QuotaReservationRequest): Promise<{ readonly granted: boolean; readonly used: number }>;
  /** Takes `bytes` back off the count (never below zero). */
  refund(request: { readonly clientId: string; readonly period: string; readonly bytes: number }): Promise<void>;
  /** The count of the client in the period (0 when nothing was counted). */
  used(clientId: string, period: string): Promise<number>;
}

/**
 * Which version of each file every client has been counted a download for within the download
 * window. Range readers (parquet readers, fsspec and other HTTP file systems) read one file by many
 * partial requests: those of one client for one file version within the window count once
 * together, so only the first of them is counted. Keys are registered clients' ids and their
 * catalog paths, bounded by the adapter (an LRU in memory, expiring keys in Redis).
 */
export interface CountedVersions {
  /** The version (entity tag) of `path` counted for `clientId` within the window, if any. */
  counted(clientId: string, path: string): Promise<string | undefined>;
  /**
   * Records `etag` as the version of `path` counted for `clientId`, atomically: `true` when it was
   * not already (the caller must count this download now), `false` when it was (the request is free).
   */
  claim(clientId: string, path: string, etag: string): Promise<boolean>;
  /** Takes back a claim whose download was then refused, unless another version was claimed since. */
  release(clientId: string, path: string, etag: string): Promise<void>;
}

/**
 * A client's download budget: downloads per window, counted on every instance alike when the
 * store is shared. Throws `RateLimited` when it is spent, `LimitsUnavailable` when its store fails
 * and RATE_LIMIT_ON_STORE_ERROR=deny.
 */
export interface DownloadLimit {
  /** Refuses (`RateLimited`) a client whose budget is already spent, counting nothing. */
  refuseIfSpent(clientId: string): Promise<void>;
  /** Counts one download; refuses (`RateLimited`, the count kept, as the window's) past the limit. */
  count(clientId: string): Promise<BudgetStanding | undefined>;
}

/** One change to a client's count in a period: a reservation (positive) or a refund (negative). */
export interface QuotaJournalEntry {
  readonly clientId: string;
  /** The period's key, e.g. `2026-11`. */
  readonly period: string;
  /** Bytes added to the count (a reservation) or, negative, taken off it (a refund). */
  readonly delta: number;
}

/**
 * The durable record of a quota ledger's changes, kept beside a ledger that can lose its counts
 * (Redis without persistence, restarted or failed over): the counts it lost are rebuilt from it.
 * Every instance of the fleet records into the same journal and reads every instance's records.
 * The journal keeps the current and the previous period; older periods are forgotten.
 */
export interface QuotaJournal {
  /**
   * Records `entry` before resolving (written to the file system, not only queued). Rejects when it
   * cannot; the caller decides whether the change goes on unrecorded.
   */
  record(entry: QuotaJournalEntry): Promise<void>;
  /**
   * Every client's total in `period` over every instance's records, never below zero; a client
   * without records is absent. Changes still being recorded (in flight) may be missing.
   */
  totals(period: string): Promise<ReadonlyMap<string, number>>;
}

/**
 * A client's request budget: authenticated requests per window, whichever API, counted on every
 * instance alike when the store is shared. Throws `RateLimited` past it, `LimitsUnavailable` when its
 * store fails and RATE_LIMIT_ON_STORE_ERROR=deny.
 */
export interface RequestLimit {
  /** Counts one request; refuses (`RateLimited`, the count kept) past the limit. */
  count(clientId: string): Promise<BudgetStanding | undefined>;
}

/** A key's count in a rate-limit window, and when the window resets. */
export interface WindowCount {
  readonly totalHits: number;
  readonly resetTime: Date | undefined;
}

/**
 * Counts per key over a fixed window: the store every request limit is counted in (each instance's
 * memory, or Redis shared by the fleet). Its shape is express-rate-limit's `Store`, which the HTTP
 * adapter's middleware takes as it is. Keys are registered clients or addresses, bounded by the adapter.
 */
export interface RateLimitStore {
  /** Whether the counts are this instance's only. */
  readonly localKeys?: boolean;
  /** The window's length, before the first call. */
  init?(options: { readonly windowMs: number }): void | Promise<void>;
  get?(key: string): Promise<WindowCount | undefined>;
  /** Adds one to the key's count in the current window (a new window when there is none). */
  increment(key: string): Promise<WindowCount>;
  /** Takes one back, never below zero; a window that ended is not brought back. */
  decrement(key: string): Promise<void>;
  resetKey(key: string): Promise<void>;
}

/** Makes a store for one limit; each limit gets its own, initialised with its own window. */
export type RateLimitStores = (name: string) => RateLimitStore;

/** Makes the counted versions of a download window of `windowMs`. */
export type CountedVersionsFactory = (windowMs: number) => CountedVersions;

/**
 * The durable, ordered log of changes (Azure Table Storage on Azure, an embedded file on the local
 * folder store). Only the one scanner of the fleet appends; every instance reads.
 *
 * Each log has an *origin*, fixed when the log is first created and never changed: the creation
 * time in milliseconds times 1000 (0 for a log made before origins existed). Positions start at
 * origin + 1 and increase by one per change appended. A log made later (the old one deleted: a
 * reset) thus starts above every position of the earlier one (unless that one appended more than
 * 1000 changes per millisecond of its life), so a cursor or a webhook's position kept from the
 * earlier log is recognisably from before this one: it is below the origin.
 */
export interface ChangeLog {
  /** Appends `changes` in this order after the last one, and returns them with their ids and positions. */
  append(changes: readonly FileChange[]): Promise<readonly LoggedChange[]>;
  /**
   * At most `limit` of `clientId`'s changes after position `after` (exclusive), in order. A position
   * below the origin reads from the log's first change.
   */
  read(clientId: string, after: number, limit: number): Promise<readonly LoggedChange[]>;
  /** The position of the last change appended; the origin before the first. */
  head(): Promise<number>;
  /** The last position pruned: a reader that stopped before it may have missed changes; the origin before any pruning. */
  horizon(): Promise<number>;
  /**
   * The position of the last of `clientId`'s own changes pruned, and never below the origin: the
   * origin when none was. A reader of that client that stopped before it missed a change (a reader
   * before the origin read an earlier log, and missed whatever this one holds and that one lost);
   * one at or after it missed none, however far behind `horizon` it is (a quiet client keeps its cursor).
   */
  prunedThrough(clientId: string): Promise<number>;
  /** Forgets every change found before `before` (CHANGES_RETENTION_DAYS). */
  prune(before: Date): Promise<void>;
}

/** One version of a stored file. */
export interface FileVersion {
  readonly path: string;
  /** Strong entity tag with its quotes. */
  readonly etag: string;
}

/**
 * The SHA-256 of file versions, as the change scanner computed them (it reads every new version
 * once). Kept in the fleet's durable store beside the change log, so every instance serves the same.
 */
export interface ChecksumStore {
  /** Records the SHA-256 (64 lowercase hex digits) of one version. */
  record(version: FileVersion, sha256: string): Promise<void>;
  /** The known SHA-256 of each of `versions` that has one, keyed by path (only for that exact etag). */
  lookup(versions: readonly FileVersion[]): Promise<ReadonlyMap<string, string>>;
}

/** What changes of an endpoint as its deliveries go: where it stands, and whether it was disabled. */
export interface WebhookEndpointUpdate {
  readonly delivery: WebhookDeliveryState;
  /** Disables the endpoint, saying why; absent: its `enabled` is left as it is. */
  readonly disabled?: NonNullable<WebhookEndpoint['disabled']>;
}

/**
 * The webhook endpoints of every client and where each stands in the change log (Azure Table
 * Storage on Azure, a file beside CLIENTS_FILE on the local folder store), so that pending
 * deliveries survive a restart. Keyed by client id and endpoint id; at most
 * `MAX_WEBHOOKS_PER_CLIENT` per client. Secrets are never stored (the signer derives them).
 */
export interface WebhookRegistry {
  /**
   * Registers an endpoint under a new id and returns it, enabled, its delivery state at
   * `startsAfter`. Throws `WebhookLimitReached` when the client already has the most it may.
   */
  add(endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint>;
  /** The client's endpoints, oldest first. */
  list(clientId: string): Promise<readonly WebhookEndpoint[]>;
  /** Every client's enabled endpoints (for delivery): at most `MAX_WEBHOOKS_PER_CLIENT` per client. */
  enabled(): Promise<readonly WebhookEndpoint[]>;
  /** Removes the client's endpoint `id`; `false` when the client has none by that id. */
  remove(clientId: string, id: string): Promise<boolean>;
  /**
   * Records an endpoint's delivery state (and disables it when told to); `false`, and nothing
   * written, when the endpoint was removed meanwhile (a removed endpoint never comes back).
   */
  update(clientId: string, id: string, update: WebhookEndpointUpdate): Promise<boolean>;
}

/** One signed delivery, ready to send. */
export interface WebhookRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * Sends webhook deliveries: one `POST`, no redirect followed, the whole exchange cut after 10 s,
 * and only to the addresses the gateway may call (checked on the address it connects to, so a
 * name that resolves elsewhere at delivery time is refused too). Never throws: every failure is
 * an outcome.
 */
export interface WebhookSender {
  send(request: WebhookRequest): Promise<DeliveryOutcome>;
}

/** Which webhook URLs the gateway may call (https to public addresses, unless WEBHOOK_ALLOW_PRIVATE=on). */
export interface WebhookTargets {
  /** What is wrong with `url` as an endpoint (after resolving its host), or `undefined` when nothing is. */
  problem(url: string): Promise<string | undefined>;
}

/** Computes digests of content as it streams by. */
export interface ContentHasher {
  /** The SHA-256 of every byte of `content`, as 64 lowercase hex digits. */
  sha256(content: BlobContent): Promise<string>;
}

/** One stored version as the scanner last saw it. */
export interface ScannedBlob {
  readonly etag: string;
  readonly size: number;
  readonly lastModified: Date;
}

/** One row of an index as the scanner last read it: what decides a client's view. */
export interface ScannedRow {
  readonly symbol: string;
  readonly fileName: string;
  /** Release window in milliseconds, `null` for an unbounded side. */
  readonly from: number | null;
  readonly until: number | null;
}

/**
 * What the change scanner knew after its last scan, kept durably so that another instance taking
 * over neither loses nor repeats changes.
 */
export interface ScanState {
  /** When the scan that produced this state listed storage. */
  readonly scannedAt: Date;
  /** Every stored blob, by path. */
  readonly blobs: ReadonlyMap<string, ScannedBlob>;
  /** Every index some client names, by path: its version and rows (an absent index has none). */
  readonly indexes: ReadonlyMap<string, { readonly version: string | undefined; readonly rows: readonly ScannedRow[] }>;
  /** The enabled clients and the index each one names. */
  readonly clients: ReadonlyMap<string, string>;
  /** Versions stored before the first scan whose SHA-256 is still to be computed (paths). */
  readonly backlog: readonly string[];
  /**
   * Changes found by this scan, saved before they are appended: the log's head was `after` then,
   * so whoever loads the state appends them unless the head has moved past them already.
   */
  readonly pending?: { readonly after: number; readonly changes: readonly FileChange[] };
}

/**
 * Where the scan state lives: a blob in the system container of the account on Azure (never in
 * the vendor's data container, where listings would show it), a file on the local folder store.
 */
export interface ScanStateStore {
  /** The last state saved, or `undefined` before the first scan. */
  load(): Promise<ScanState | undefined>;
  /** Replaces the state, whole. */
  save(state: ScanState): Promise<void>;
}

/**
 * The right to run the change scanner, held by one instance of the fleet at a time (a blob lease on
 * Azure, a lock file locally). A holder that stops renewing loses it when it expires, so another
 * instance takes over.
 */
export interface ScannerLease {
  /** Takes the lease if it is free or expired, or renews it when this holder has it; whether it is held now. */
  acquire(): Promise<boolean>;
  /** Gives the lease up, if held, so another instance may take it at once. */
  release(): Promise<void>;
}
