import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { GatewayClientError, isClientError } from '../errors.js';
import type { DownloadResult, GatewayClient } from '../gateway-client.js';
import { commitFile } from './durable-file.js';
import { PART_STATE_SUFFIX, PART_SUFFIX } from './local-path.js';

export interface TransferRequest {
  readonly symbol: string;
  /** Where the finished file goes; `<destination>.part` holds it while it arrives. */
  readonly destination: string;
  /** What the listing says the current version is; its MD5 is checked when the download is that version. */
  readonly expected?: { readonly etag: string; readonly size: number; readonly md5?: string };
  /** The version already on disk at `destination`: asked with `If-None-Match`, so an unchanged file costs no bytes. */
  readonly localEtag?: string;
  readonly signal: AbortSignal;
  /** Attempts for failures the transfer itself can repair: a cut connection, a size or MD5 mismatch, a bad 206. */
  readonly maxAttempts: number;
  readonly onStart?: (event: { readonly offset: number; readonly size: number | undefined; readonly status: number }) => void;
  readonly onProgress?: (received: number, size: number | undefined) => void;
  readonly onRetry?: (error: GatewayClientError, attempt: number) => void;
}

export type TransferResult =
  | { readonly outcome: 'not_modified'; readonly etag: string }
  | {
      readonly outcome: 'downloaded';
      readonly etag: string;
      readonly size: number;
      readonly md5: string;
      readonly lastModified: string | undefined;
      /** Bytes received over the network in this run (a resumed file counts only the rest). */
      readonly bytesTransferred: number;
      /** Where the first attempt resumed from (0: from the start). */
      readonly resumedFrom: number;
    };

/** The version a `.part` holds, kept beside it so that a later run can resume it with `If-Range`. */
interface PartState {
  readonly etag: string;
  readonly size: number;
}

/**
 * Downloads one file into `<destination>.part`, resuming a part left by an earlier run with `Range`
 * and `If-Range`, and moves it into place only once its size (and MD5, when known) is right.
 *
 * - a `206` is appended only when its `Content-Range` starts exactly at the part's size and it is the
 *   part's version; a `200` means the file changed (`If-Range` failed): the part is truncated and
 *   the new version fetched whole, never spliced onto the old bytes;
 * - a connection cut mid-body keeps the part and the next attempt resumes it;
 * - an abort (Ctrl-C) keeps the part and its state, for the next run.
 */
export async function transferFile(client: Pick<GatewayClient, 'download'>, request: TransferRequest): Promise<TransferResult> {
  const partPath = request.destination + PART_SUFFIX;
  const statePath = request.destination + PART_STATE_SUFFIX;
  await mkdir(dirname(request.destination), { recursive: true });
  let bytesTransferred = 0;
  let resumedFrom: number | undefined;
  let lastError: GatewayClientError | undefined;

  for (let attempt = 1; attempt <= request.maxAttempts; attempt += 1) {
    if (lastError !== undefined) request.onRetry?.(lastError, attempt);
    const part = await readPart(partPath, statePath);
    const offset = part?.offset ?? 0;
    resumedFrom ??= offset;
    const result = await client.download(request.symbol, {
      signal: request.signal,
      ...(part !== undefined
        ? { range: { start: part.offset }, ifRange: part.etag }
        : request.localEtag !== undefined && { ifNoneMatch: request.localEtag }),
    });

    if (result.status === 304) {
      if (part === undefined && request.localEtag !== undefined) return { outcome: 'not_modified', etag: result.etag ?? request.localEtag };
      lastError = await discard(result, partPath, statePath, 'protocol_error', '304 to a request that was not conditional');
      continue;
    }
    if (result.status === 206 && (part === undefined || result.contentRange?.start !== part.offset || (result.etag !== undefined && result.etag !== part.etag))) {
      lastError = await discard(result, partPath, statePath, 'protocol_error', `206 with Content-Range ${result.headers.get('content-range')} for a part of ${offset} bytes`);
      continue;
    }
    const append = result.status === 206;
    if (result.etag === undefined || result.size === undefined) {
      lastError = await discard(result, partPath, statePath, 'protocol_error', 'a download without ETag or size');
      continue;
    }
    request.onStart?.({ offset: append ? offset : 0, size: result.size, status: result.status });
    if (!append) await writeFile(statePath, JSON.stringify({ etag: result.etag, size: result.size } satisfies PartState));

    const hash = createHash('md5');
    if (append) await hashFile(partPath, hash);
    // Each chunk is written before the next is read, so whatever arrived before a cut, a stall or
    // Ctrl-C is in the part for the next attempt; nothing received is dropped from a write queue.
    let received = append ? offset : 0;
    let reported = -1;
    const report = (): void => {
      if (received === reported) return;
      reported = received;
      request.onProgress?.(received, result.size);
    };
    const progressTimer = setInterval(report, 200);
    const file = await open(partPath, append ? 'a' : 'w');
    let broken: unknown;
    try {
      for await (const chunk of result.body) {
        const bytes = chunk as Buffer;
        await file.write(bytes);
        hash.update(bytes);
        bytesTransferred += bytes.length;
        received += bytes.length;
      }
    } catch (error) {
      broken = error;
    } finally {
      clearInterval(progressTimer);
      await file.close();
      report();
    }
    if (broken !== undefined) {
      if (request.signal.aborted) throw new GatewayClientError('aborted', `download ${request.symbol}: aborted`, { cause: broken });
      lastError = isClientError(broken) ? broken : new GatewayClientError('network_error', `download ${request.symbol}: the transfer broke after ${received} bytes`, { cause: broken });
      continue;
    }

    // What the listing said counts only for the version it described.
    const listed = request.expected !== undefined && request.expected.etag === result.etag ? request.expected : undefined;
    const onDisk = (await stat(partPath)).size;
    if (onDisk !== result.size || (listed !== undefined && onDisk !== listed.size)) {
      lastError = await discardPart(partPath, statePath, 'integrity_failed', `received ${onDisk} bytes, the gateway announced ${listed?.size ?? result.size}`);
      continue;
    }
    const md5 = hash.digest('base64');
    const expectedMd5 = listed?.md5;
    if (expectedMd5 !== undefined && md5 !== expectedMd5) {
      lastError = await discardPart(partPath, statePath, 'integrity_failed', `MD5 ${md5} differs from the listing's ${expectedMd5}`);
      continue;
    }
    await commitFile(partPath, request.destination);
    await rm(statePath, { force: true });
    return { outcome: 'downloaded', etag: result.etag, size: onDisk, md5, lastModified: result.lastModified, bytesTransferred, resumedFrom: resumedFrom ?? 0 };
  }
  throw lastError ?? new GatewayClientError('protocol_error', `download ${request.symbol}: no attempt made`);
}

/** The part to resume, or undefined (and nothing left behind) when there is none worth resuming. */
async function readPart(partPath: string, statePath: string): Promise<{ readonly offset: number; readonly etag: string } | undefined> {
  const [size, state] = await Promise.all([stat(partPath).then((stats) => stats.size, () => undefined), readPartState(statePath)]);
  if (size !== undefined && size > 0 && state !== undefined && size < state.size) return { offset: size, etag: state.etag };
  // No state, an empty part, or one as long as (or longer than) its version: nothing to resume from.
  await Promise.all([rm(partPath, { force: true }), rm(statePath, { force: true })]);
  return undefined;
}

async function readPartState(statePath: string): Promise<PartState | undefined> {
  try {
    const value = JSON.parse(await readFile(statePath, 'utf8')) as Partial<PartState>;
    return typeof value.etag === 'string' && typeof value.size === 'number' ? { etag: value.etag, size: value.size } : undefined;
  } catch {
    return undefined;
  }
}

async function hashFile(path: string, hash: Hash): Promise<void> {
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
}

async function discard(result: DownloadResult, partPath: string, statePath: string, code: 'protocol_error', message: string): Promise<GatewayClientError> {
  result.body.destroy();
  return discardPart(partPath, statePath, code, message);
}

async function discardPart(partPath: string, statePath: string, code: 'protocol_error' | 'integrity_failed', message: string): Promise<GatewayClientError> {
  await Promise.all([rm(partPath, { force: true }), rm(statePath, { force: true })]);
  return new GatewayClientError(code, message);
}
