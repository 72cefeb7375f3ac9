import type { Readable } from 'node:stream';
import type { components } from './generated/api-types.js';

/*
 * The options and answers of the gateway client's calls, apart from the client itself so that the
 * sync, which the client offers as `sync()`, can name them without importing the client.
 */

export type Catalog = components['schemas']['Catalog'];
export type FileList = components['schemas']['FileList'];
export type ListedFile = components['schemas']['ListedFile'];

/** Every listed file, and a change feed position the whole listing is known to include. */
export interface ListSnapshot {
  readonly files: ListedFile[];
  /** The last page's `changesCursor`: follow `changes()` from it (absent from a gateway without a change feed). */
  readonly changesCursor?: string;
}
export type FileCount = components['schemas']['FileCount'];
export type FileInfo = components['schemas']['FileInfo'];
export type S3Credentials = components['schemas']['S3Credentials'];
export type Account = components['schemas']['Account'];
export type ChangeFeed = components['schemas']['ChangeFeed'];
export type ChangeEvent = components['schemas']['ChangeEvent'];

export interface CallOptions {
  readonly signal?: AbortSignal;
}

export interface ListOptions extends CallOptions {
  /** 1-10000, the gateway's default 1000. */
  readonly limit?: number | undefined;
  /** Only files uploaded at or after this moment. */
  readonly modifiedSince?: Date | string | undefined;
  /** The `nextCursor` of the previous page: continue after it (its `modifiedSince` is kept). */
  readonly cursor?: string | undefined;
}

export interface ChangesOptions extends CallOptions {
  /**
   * Where to start: a `changesCursor` of `/list` or `/catalog`, or the `cursor` of an earlier
   * stream. The oldest event the gateway keeps when absent.
   */
  readonly cursor?: string | undefined;
  /**
   * Seconds each request waits for an event (a long poll, at most 60 and 5 below the attempt
   * timeout): the stream then follows the feed until the signal aborts or the loop breaks. Without
   * it (or 0) the stream ends once it has caught up.
   */
  readonly wait?: number | undefined;
  /** Events per request, 1-1000 (the gateway's default 500). */
  readonly limit?: number | undefined;
}

/** The caller's events, oldest first, following `nextCursor`; `410 cursor_expired` ends it with an error (list again). */
export interface ChangeStream extends AsyncIterable<ChangeEvent> {
  /** Where a later stream continues without repeating what this one has yielded: the cursor after the last page fully read. */
  readonly cursor: string | undefined;
}

export interface DownloadOptions extends CallOptions {
  /** Bytes from `start` to `end` inclusive (to the end of the file when `end` is absent). */
  readonly range?: { readonly start: number; readonly end?: number } | undefined;
  /** Only send the range if the file is still this version (a strong ETag); the whole file otherwise. */
  readonly ifRange?: string | undefined;
  /** 304 (no body) when the file is still one of these versions. */
  readonly ifNoneMatch?: string | undefined;
}

/** `Content-Range: bytes <start>-<end>/<size>` of a 206. */
export interface ContentRange {
  readonly start: number;
  readonly end: number;
  readonly size: number;
}

export interface DownloadResult {
  /** 200 the whole file, 206 the range asked for, 304 not modified (empty body). */
  readonly status: 200 | 206 | 304;
  readonly etag: string | undefined;
  readonly lastModified: string | undefined;
  /** The whole file's size (from `Content-Length` of a 200, or `Content-Range` of a 206). */
  readonly size: number | undefined;
  /** Bytes in this body. */
  readonly contentLength: number | undefined;
  readonly contentRange: ContentRange | undefined;
  readonly headers: Headers;
  /**
   * The bytes; cut with an `idle_timeout` error if none arrive for `idleTimeoutMs`. Read it with
   * `pipeline()` or `for await`, which report a broken transfer (an error is never thrown at the process).
   */
  readonly body: Readable;
}
