import type { Readable } from 'node:stream';
import type { components } from './generated/api-types.js';

/*
 * The options and answers of the gateway client's calls, apart from the client itself so that the
 * sync, which the client offers as `sync()`, can name them without importing the client.
 */

export type Catalog = components['schemas']['Catalog'];
export type FileList = components['schemas']['FileList'];
export type ListedFile = components['schemas']['ListedFile'];
export type FileCount = components['schemas']['FileCount'];
export type FileInfo = components['schemas']['FileInfo'];
export type S3Credentials = components['schemas']['S3Credentials'];
export type Account = components['schemas']['Account'];

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
