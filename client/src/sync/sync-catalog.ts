import { lstat, mkdir, rm } from 'node:fs/promises';
import picomatch from 'picomatch';
import type { CallOptions, Catalog, ListedFile, ListOptions, ListSnapshot } from '../call-types.js';
import { GatewayClientError, isClientError, type ClientErrorCode } from '../errors.js';
import type { RetryEvent } from '../resilient-fetch.js';
import { AdaptiveConcurrency } from './adaptive-concurrency.js';
import { transferFile, type FileDownloader } from './file-transfer.js';
import { checkFoldersInside, localPathFor } from './local-path.js';
import { Manifest } from './manifest.js';

/**
 * What a sync needs of a gateway client: the methods it calls, no more. `GatewayClient` has them
 * and offers `sync()` itself, so the client imports the sync and the sync never imports the client.
 */
export interface SyncClient extends FileDownloader {
  /** Read only with `delete`: which paths are still in the catalog. */
  catalog(options: CallOptions): Promise<Catalog>;
  listSnapshot(options: Omit<ListOptions, 'cursor'>): Promise<ListSnapshot>;
  /** Told before every retry wait; returns the unsubscribe. */
  onRetry(listener: (event: RetryEvent) => void): () => void;
}

export interface SyncOptions {
  /** The local mirror; created when missing. */
  readonly dir: string;
  /** Transfers at once at most (default 4); halved on 429, grown back by one after a run of successes. */
  readonly concurrency?: number;
  /** Storage-path globs (picomatch): only matching files are mirrored. */
  readonly include?: readonly string[];
  /** Storage-path globs: matching files are left alone. */
  readonly exclude?: readonly string[];
  /** Only files uploaded at or after this moment (`GET /list?modifiedSince=`). */
  readonly modifiedSince?: Date | string;
  /** Decide and report, change nothing. */
  readonly dryRun?: boolean;
  /** Delete local files the mirror wrote whose path left the catalog. */
  readonly delete?: boolean;
  /** Refuse to delete anything when more than this many files would go (default 100). */
  readonly maxDelete?: number;
  /** Attempts per file for cut connections and size/MD5 mismatches (default 3). */
  readonly maxAttempts?: number;
  /** Abort to stop: transfers in flight keep their `.part` for the next run. */
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: SyncEvent) => void;
}

export type FileOutcome = 'downloaded' | 'unchanged' | 'not_modified' | 'deleted' | 'would_download' | 'would_delete' | 'failed' | 'interrupted';

export interface FileReport {
  readonly path: string;
  readonly symbol: string;
  readonly outcome: FileOutcome;
  /** Bytes received for this file in this run. */
  readonly bytes: number;
  readonly resumedFrom?: number;
  readonly error?: { readonly code: ClientErrorCode | 'delete_failed'; readonly message: string };
}

export interface SyncReport {
  readonly files: readonly FileReport[];
  readonly downloaded: number;
  readonly unchanged: number;
  readonly failed: number;
  readonly deleted: number;
  readonly bytesTransferred: number;
  /** The signal aborted before every file was done. */
  readonly interrupted: boolean;
  /** The gateway refused the credentials; the rest of the sync was stopped. */
  readonly authFailed: boolean;
  /** Always false since `/list` pages with cursors (kept so reports keep their shape). */
  readonly listingTruncated: boolean;
  /** Why deletions were refused (`--max-delete` exceeded), if they were. */
  readonly deleteRefused?: string;
  /** The listing's `changesCursor`: the change feed followed from it misses nothing this mirror did not see. */
  readonly changesCursor?: string;
}

export type SyncEvent =
  | { readonly type: 'plan'; readonly listed: number; readonly toTransfer: number; readonly bytes: number; readonly unchanged: number; readonly toDelete: number; readonly listingTruncated: boolean }
  | { readonly type: 'file-start'; readonly path: string; readonly symbol: string; readonly size: number | undefined; readonly offset: number; readonly status: number }
  | { readonly type: 'file-progress'; readonly path: string; readonly received: number; readonly size: number | undefined }
  | { readonly type: 'file-retry'; readonly path: string; readonly attempt: number; readonly code: ClientErrorCode; readonly message: string }
  | { readonly type: 'file-done'; readonly report: FileReport }
  | { readonly type: 'throttled'; readonly concurrency: number; readonly retryAfterMs: number | undefined; readonly delayMs: number }
  | { readonly type: 'done'; readonly report: Omit<SyncReport, 'files'> };

/** One listed file and what the mirror will do with it. */
interface PlannedFile {
  readonly path: string;
  readonly listed: ListedFile;
  readonly destination: string;
  readonly action: 'unchanged' | 'transfer';
  readonly localEtag?: string;
}

/**
 * Mirrors the caller's catalog into `options.dir`. `/list` gives each existing file's storage path,
 * ETag, size and MD5 (`/catalog` is read only with `delete`, for the paths still in the catalog,
 * stored or not: a listing with `modifiedSince` names only some); a file whose ETag the manifest already has
 * (and whose size on disk is right) costs no request, one the manifest knows under another ETag is
 * asked with `If-None-Match`, everything else is downloaded (resuming any `.part`) and verified.
 */
export async function syncCatalog(client: SyncClient, options: SyncOptions): Promise<SyncReport> {
  const stop = new AbortController();
  const signal = options.signal === undefined ? stop.signal : AbortSignal.any([options.signal, stop.signal]);
  const emit = options.onEvent ?? ((): void => undefined);
  const { dir } = options;

  const [catalog, listed] = await Promise.all([
    options.delete === true ? client.catalog({ signal }) : undefined,
    client.listSnapshot({ signal, ...(options.modifiedSince !== undefined && { modifiedSince: options.modifiedSince }) }),
  ]);
  // The snapshot follows the listing's cursors to its end: nothing is left out any more.
  const listing = { files: listed.files, truncated: false };
  const changesCursor = listed.changesCursor;
  if (options.dryRun !== true) await mkdir(dir, { recursive: true });
  const manifest = await Manifest.load(dir);
  const selected = fileFilter(options.include ?? [], options.exclude ?? []);

  const reports: FileReport[] = [];
  const finish = (report: FileReport): void => {
    reports.push(report);
    emit({ type: 'file-done', report });
  };

  const planned: PlannedFile[] = [];
  // Several symbols may name one storage path: it is one file, fetched once (two transfers would share its .part).
  const plannedPaths = new Set<string>();
  for (const listed of listing.files) {
    const path = listed.fileName;
    if (!selected(path) || plannedPaths.has(path)) continue;
    plannedPaths.add(path);
    let destination: string;
    try {
      destination = localPathFor(dir, path);
    } catch (error) {
      finish(failedReport(path, listed.symbol, error));
      continue;
    }
    planned.push(await planFile(path, listed, destination, manifest));
  }

  const catalogPaths = new Set(catalog?.files.map((file) => file.FileName));
  const leaving = catalog === undefined ? [] : manifest.paths().filter((path) => !catalogPaths.has(path));
  const maxDelete = options.maxDelete ?? 100;
  const deleteRefused =
    leaving.length > maxDelete ? `${leaving.length} files left the catalog, more than --max-delete ${maxDelete}: none deleted` : undefined;
  const toDelete = deleteRefused === undefined ? leaving : [];
  const transfers = planned.filter((file) => file.action === 'transfer');
  emit({
    type: 'plan',
    listed: listing.files.length,
    toTransfer: transfers.length,
    bytes: transfers.reduce((sum, file) => sum + file.listed.size, 0),
    unchanged: planned.length - transfers.length,
    toDelete: toDelete.length,
    listingTruncated: listing.truncated,
  });
  for (const file of planned) {
    if (file.action === 'unchanged') finish({ path: file.path, symbol: file.listed.symbol, outcome: 'unchanged', bytes: 0 });
  }

  if (options.dryRun === true) {
    for (const file of transfers) finish({ path: file.path, symbol: file.listed.symbol, outcome: 'would_download', bytes: 0 });
    for (const path of toDelete) finish({ path, symbol: manifest.get(path)?.symbol ?? '', outcome: 'would_delete', bytes: 0 });
  } else {
    let authFailed = false;
    const limiter = new AdaptiveConcurrency(options.concurrency ?? 4);
    const unsubscribe = client.onRetry((event) => {
      if (event.reason !== 'rate_limited') return;
      limiter.throttled();
      emit({ type: 'throttled', concurrency: limiter.limit, retryAfterMs: event.retryAfterMs, delayMs: event.delayMs });
    });
    try {
      await Promise.all(
        transfers.map(async (file) => {
          await limiter.acquire();
          try {
            if (signal.aborted) {
              finish({ path: file.path, symbol: file.listed.symbol, outcome: 'interrupted', bytes: 0 });
              return;
            }
            const report = await mirrorFile(client, dir, file, manifest, signal, options.maxAttempts ?? 3, emit);
            if (report.outcome === 'failed' && report.error?.code === 'auth_failed') {
              // Every other file would be refused the same way: stop rather than hammer the token endpoint.
              authFailed = true;
              stop.abort(new GatewayClientError('auth_failed', 'the gateway refused the credentials'));
            }
            if (report.outcome !== 'failed' && report.outcome !== 'interrupted') limiter.succeeded();
            finish(report);
          } finally {
            limiter.release();
          }
        }),
      );
    } finally {
      unsubscribe();
    }
    if (!signal.aborted) {
      for (const path of toDelete) finish(await deleteFile(dir, path, manifest));
    }
    return summarise(reports, { signal: options.signal, authFailed, listingTruncated: listing.truncated, deleteRefused, changesCursor }, emit);
  }
  return summarise(reports, { signal: options.signal, authFailed: false, listingTruncated: listing.truncated, deleteRefused, changesCursor }, emit);
}

async function planFile(path: string, listed: ListedFile, destination: string, manifest: Manifest): Promise<PlannedFile> {
  const known = manifest.get(path);
  // lstat: a link put where a mirrored file was is not that file, whatever it points to.
  const sizeOnDisk = await lstat(destination).then((stats) => (stats.isFile() ? stats.size : undefined), () => undefined);
  if (known === undefined || sizeOnDisk !== known.size) return { path, listed, destination, action: 'transfer' };
  if (known.etag === listed.etag) return { path, listed, destination, action: 'unchanged' };
  // The listing may lag storage by a few seconds (LIST_CACHE_SECONDS): let the download decide, with a 304 if we are current.
  return { path, listed, destination, action: 'transfer', localEtag: known.etag };
}

async function mirrorFile(
  client: FileDownloader,
  dir: string,
  file: PlannedFile,
  manifest: Manifest,
  signal: AbortSignal,
  maxAttempts: number,
  emit: (event: SyncEvent) => void,
): Promise<FileReport> {
  const { path, listed } = file;
  try {
    await checkFoldersInside(dir, file.destination, true);
    const result = await transferFile(client, {
      symbol: listed.symbol,
      name: path,
      destination: file.destination,
      expected: {
        etag: listed.etag,
        size: listed.size,
        ...(listed.md5 !== undefined && { md5: listed.md5 }),
        ...(listed.sha256 !== undefined && { sha256: listed.sha256 }),
      },
      ...(file.localEtag !== undefined && { localEtag: file.localEtag }),
      signal,
      maxAttempts,
      onStart: ({ offset, size, status }) => emit({ type: 'file-start', path, symbol: listed.symbol, size, offset, status }),
      onProgress: (received, size) => emit({ type: 'file-progress', path, received, size }),
      onRetry: (error, attempt) => emit({ type: 'file-retry', path, attempt, code: error.code, message: error.message }),
    });
    if (result.outcome === 'not_modified') return { path, symbol: listed.symbol, outcome: 'not_modified', bytes: 0 };
    await manifest.set(path, {
      symbol: listed.symbol,
      etag: result.etag,
      size: result.size,
      md5: result.md5,
      ...(result.lastModified !== undefined && { lastModified: result.lastModified }),
    });
    return { path, symbol: listed.symbol, outcome: 'downloaded', bytes: result.bytesTransferred, resumedFrom: result.resumedFrom };
  } catch (error) {
    if (signal.aborted && !isClientError(error, 'auth_failed')) return { path, symbol: listed.symbol, outcome: 'interrupted', bytes: 0 };
    return failedReport(path, listed.symbol, error);
  }
}

async function deleteFile(dir: string, path: string, manifest: Manifest): Promise<FileReport> {
  const symbol = manifest.get(path)?.symbol ?? '';
  try {
    const target = localPathFor(dir, path);
    if (await checkFoldersInside(dir, target, false)) await rm(target, { force: true });
    await manifest.delete(path);
    return { path, symbol, outcome: 'deleted', bytes: 0 };
  } catch (error) {
    return { path, symbol, outcome: 'failed', bytes: 0, error: { code: 'delete_failed', message: error instanceof Error ? error.message : String(error) } };
  }
}

function failedReport(path: string, symbol: string, error: unknown): FileReport {
  if (isClientError(error)) return { path, symbol, outcome: 'failed', bytes: 0, error: { code: error.code, message: error.message } };
  // A local failure (disk full, permissions, a folder where a file should go) fails this file only.
  return { path, symbol, outcome: 'failed', bytes: 0, error: { code: 'protocol_error', message: error instanceof Error ? error.message : String(error) } };
}

/** Include globs (any must match, when given) and exclude globs (none may match) over storage paths. */
export function fileFilter(include: readonly string[], exclude: readonly string[]): (path: string) => boolean {
  const included = include.length === 0 ? () => true : picomatch([...include], { dot: true });
  const excluded = exclude.length === 0 ? () => false : picomatch([...exclude], { dot: true });
  return (path) => included(path) && !excluded(path);
}

function summarise(
  files: readonly FileReport[],
  state: {
    readonly signal: AbortSignal | undefined;
    readonly authFailed: boolean;
    readonly listingTruncated: boolean;
    readonly deleteRefused: string | undefined;
    readonly changesCursor: string | undefined;
  },
  emit: (event: SyncEvent) => void,
): SyncReport {
  const count = (...outcomes: FileOutcome[]): number => files.filter((file) => outcomes.includes(file.outcome)).length;
  const summary = {
    downloaded: count('downloaded'),
    unchanged: count('unchanged', 'not_modified'),
    failed: count('failed'),
    deleted: count('deleted'),
    bytesTransferred: files.reduce((sum, file) => sum + file.bytes, 0),
    interrupted: state.signal?.aborted === true,
    authFailed: state.authFailed,
    listingTruncated: state.listingTruncated,
    ...(state.deleteRefused !== undefined && { deleteRefused: state.deleteRefused }),
  };
  emit({ type: 'done', report: summary });
  return { files, ...summary, ...(state.changesCursor !== undefined && { changesCursor: state.changesCursor }) };
}
