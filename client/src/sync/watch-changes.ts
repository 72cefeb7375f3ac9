import { lstat, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChangeEvent, ChangesOptions, ChangeStream } from '../call-types.js';
import { GatewayClientError, isClientError, type ClientErrorCode } from '../errors.js';
import { transferFile } from './file-transfer.js';
import { checkFoldersInside, localPathFor } from './local-path.js';
import { Manifest } from './manifest.js';
import { fileFilter, syncCatalog, type SyncClient, type SyncOptions, type SyncReport } from './sync-catalog.js';

/** What following the feed needs of a gateway client, besides what a sync needs. */
export interface WatchClient extends SyncClient {
  changes(options: ChangesOptions): ChangeStream;
}

export interface WatchOptions extends SyncOptions {
  /** Seconds each request of the feed waits for an event (default 25: below the client's 30 s attempt timeout). */
  readonly waitSeconds?: number;
  /** Told once per mirror: at the start, and again whenever the feed's cursor expired and the mirror was redone. */
  readonly onMirrored?: (report: SyncReport) => void;
  /** Told once per event of the feed, with what the mirror did about it. */
  readonly onChange?: (report: ChangeReport) => void;
  /**
   * Told when the gateway could not be reached or answered 5xx or 429 after the client's own
   * retries (a restart, a deploy): the watch waits `retryInMs` and goes on from where it was.
   */
  readonly onOutage?: (error: GatewayClientError, retryInMs: number) => void;
  /** The first wait after an outage, doubled for each outage in a row up to 60 s (5 s when absent). */
  readonly outageWaitMs?: number;
}

/** The first wait after an outage, doubled for each outage in a row up to the longest. */
const outageFirstWaitMs = 5_000;
const outageLongestWaitMs = 60_000;

/** The codes of a failed file that an outage explains (its status is not kept in a report). */
const outageCodes: ReadonlySet<string> = new Set(['network_error', 'deadline_exceeded']);

/** An error that a later attempt may not meet: the gateway down, restarting or overloaded. */
function isOutage(error: unknown): error is GatewayClientError {
  if (!isClientError(error)) return false;
  if (error.code === 'network_error' || error.code === 'deadline_exceeded') return true;
  return error.code === 'http_error' && error.status !== undefined && (error.status >= 500 || error.status === 429);
}

export type ChangeOutcome = 'downloaded' | 'not_modified' | 'deleted' | 'kept' | 'skipped' | 'failed';

/** One event of the feed and what the mirror did about it. */
export interface ChangeReport {
  readonly id: string;
  readonly type: ChangeEvent['type'];
  readonly path: string;
  readonly symbol: string;
  readonly outcome: ChangeOutcome;
  /** Bytes received for it. */
  readonly bytes: number;
  readonly error?: { readonly code: ClientErrorCode | 'delete_failed'; readonly message: string };
}

const defaultWaitSeconds = 25;

/**
 * `dfg sync --watch`: mirrors the catalog (as `sync`), then follows the change feed from the
 * position that mirror's listing carried (its last page's `changesCursor`), so no change is missed: a released or updated file
 * is downloaded and verified (size, MD5 where listed, SHA-256 where the event has it); a withdrawn
 * one is deleted only with `delete` (and only if the mirror wrote it). A cursor that expired
 * (`410`) mirrors again from a new position. An outage (the gateway unreachable, or answering 5xx
 * or 429 past the client's own retries: a restart, a deploy) is waited out, 5 s then doubling up to
 * 60 s, and the watch goes on from its cursor (a mirror cut short by it is done again). Runs until
 * `signal` aborts; resolves then.
 */
export async function watchChanges(client: WatchClient, options: WatchOptions): Promise<void> {
  const signal = options.signal ?? new AbortController().signal;
  const selected = fileFilter(options.include ?? [], options.exclude ?? []);
  /** Where the feed goes on from; `undefined` until a mirror gave one (and again after a 410). */
  let cursor: string | undefined;
  let outages = 0;
  /** Whether an event came since the last mirror: a cursor that expires before any did is not mirrored again at once. */
  let followed = false;
  /** Waits as after an outage (5 s doubling to 60 s); false when the signal aborted meanwhile. */
  const waitOut = async (error: GatewayClientError): Promise<boolean> => {
    const retryInMs = Math.min(outageLongestWaitMs, (options.outageWaitMs ?? outageFirstWaitMs) * 2 ** outages);
    outages += 1;
    options.onOutage?.(error, retryInMs);
    try {
      await sleep(retryInMs, undefined, { signal });
      return true;
    } catch {
      return false;
    }
  };
  for (;;) {
    let stream: ReturnType<WatchClient['changes']> | undefined;
    try {
      if (cursor === undefined) {
        const mirrored = await syncCatalog(client, options);
        options.onMirrored?.(mirrored);
        if (signal.aborted) return;
        if (mirrored.authFailed) throw new GatewayClientError('auth_failed', 'the gateway refused the credentials');
        // The mirror's own listing's position (its last page's): every change it did not see is in the
        // feed after it, whichever gateway instance answered each page.
        if (mirrored.changesCursor === undefined) throw new GatewayClientError('protocol_error', 'the gateway has no change feed (its /list answers carry no changesCursor)');
        // A file the mirror could not fetch because the gateway was down: mirror again once it is back (the feed would not bring it).
        const cutShort = mirrored.files.find((file) => file.outcome === 'failed' && file.error !== undefined && outageCodes.has(file.error.code));
        if (cutShort !== undefined) throw new GatewayClientError('network_error', `the mirror could not fetch ${cutShort.path}: ${cutShort.error?.message ?? ''}`);
        cursor = mirrored.changesCursor;
        followed = false;
      }
      const manifest = await Manifest.load(options.dir);
      stream = client.changes({ cursor, wait: options.waitSeconds ?? defaultWaitSeconds, signal });
      for await (const event of stream) {
        outages = 0;
        followed = true;
        const report = selected(event.file.fileName) ? await apply(client, event, manifest, options, signal) : reportOf(event, 'skipped');
        if (signal.aborted) return;
        options.onChange?.(report);
        if (report.error?.code === 'auth_failed') throw new GatewayClientError('auth_failed', report.error.message);
      }
      return;
    } catch (error) {
      if (signal.aborted) return;
      // Older than the feed's retention: mirror again, then follow from a new position.
      if (isClientError(error) && error.serverCode === 'cursor_expired') {
        // Expired before any event came since the mirror (a gateway whose listings still carry a
        // position of a reset log): mirror again only after a wait, never in a tight loop.
        const again = !followed;
        cursor = undefined;
        if (again && !(await waitOut(error))) return;
        continue;
      }
      if (!isOutage(error)) throw error;
      // Resumed after the last page it took whole (a page cut short comes again: at least once).
      if (stream?.cursor !== undefined) cursor = stream.cursor;
      if (!(await waitOut(error))) return;
    }
  }
}

async function apply(client: WatchClient, event: ChangeEvent, manifest: Manifest, options: WatchOptions, signal: AbortSignal): Promise<ChangeReport> {
  const path = event.file.fileName;
  try {
    const destination = localPathFor(options.dir, path);
    if (event.type === 'file.withdrawn') {
      if (options.delete !== true || manifest.get(path) === undefined) return reportOf(event, 'kept');
      if (await checkFoldersInside(options.dir, destination, false)) await rm(destination, { force: true });
      await manifest.delete(path);
      return reportOf(event, 'deleted');
    }
    await checkFoldersInside(options.dir, destination, true);
    const known = manifest.get(path);
    const sizeOnDisk = await lstat(destination).then((stats) => (stats.isFile() ? stats.size : undefined), () => undefined);
    // The version on disk is asked with If-None-Match: an event for what the mirror already has costs no bytes.
    const localEtag = known !== undefined && sizeOnDisk === known.size ? known.etag : undefined;
    const { file } = event;
    const result = await transferFile(client, {
      symbol: file.symbol,
      name: path,
      destination,
      expected: { etag: file.etag, size: file.size, ...(file.sha256 !== undefined && { sha256: file.sha256 }) },
      ...(localEtag !== undefined && { localEtag }),
      signal,
      maxAttempts: options.maxAttempts ?? 3,
    });
    if (result.outcome === 'not_modified') return reportOf(event, 'not_modified');
    await manifest.set(path, {
      symbol: file.symbol,
      etag: result.etag,
      size: result.size,
      md5: result.md5,
      ...(result.lastModified !== undefined && { lastModified: result.lastModified }),
    });
    return { ...reportOf(event, 'downloaded'), bytes: result.bytesTransferred };
  } catch (error) {
    if (signal.aborted) throw error;
    // The gateway is down: the watch waits it out and takes this event again (from the page's start), never loses it.
    if (isOutage(error)) throw error;
    const code = isClientError(error) ? error.code : event.type === 'file.withdrawn' ? 'delete_failed' : 'protocol_error';
    return { ...reportOf(event, 'failed'), error: { code, message: error instanceof Error ? error.message : String(error) } };
  }
}

function reportOf(event: ChangeEvent, outcome: ChangeOutcome): ChangeReport {
  return { id: event.id, type: event.type, path: event.file.fileName, symbol: event.file.symbol, outcome, bytes: 0 };
}
