import { createHash, type Hash } from 'node:crypto';
import { constants, createReadStream, ftruncateSync, writeFileSync } from 'node:fs';
import { lstat, mkdir, open, readFile, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { GatewayClientError, isClientError } from '../errors.js';
import type { DownloadOptions, DownloadResult } from '../call-types.js';
import { commitFile } from './durable-file.js';
import { PART_STATE_SUFFIX, PART_SUFFIX } from './local-path.js';

export interface TransferRequest {
  readonly symbol: string;
  /** Where the finished file goes; `<destination>.part` holds it while it arrives. */
  readonly destination: string;
  /** The file's storage path, which errors name (the symbol when absent). */
  readonly name?: string;
  /** What the listing says the current version is; its MD5 and SHA-256 are checked when the download is that version. */
  readonly expected?: { readonly etag: string; readonly size: number; readonly md5?: string; readonly sha256?: string };
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

/** What a transfer needs of a gateway client (`GatewayClient` is one). */
export interface FileDownloader {
  download(symbol: string, options: DownloadOptions): Promise<DownloadResult>;
}

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
export async function transferFile(client: FileDownloader, request: TransferRequest): Promise<TransferResult> {
  const partPath = request.destination + PART_SUFFIX;
  const statePath = request.destination + PART_STATE_SUFFIX;
  await mkdir(dirname(request.destination), { recursive: true });
  let bytesTransferred = 0;
  let resumedFrom: number | undefined;
  let lastError: GatewayClientError | undefined;
  // The MD5 and SHA-256 of the part so far; `receive` starts them over when the answer is a whole file.
  let hash = createHash('md5');
  let sha256 = createHash('sha256');
  let sha256Mismatches = 0;
  // The answers whose bytes did not match the gateway's SHA-256.
  const sha256Failures = new WeakSet<GatewayClientError>();
  const name = request.name ?? request.symbol;

  for (let attempt = 1; attempt <= request.maxAttempts; attempt += 1) {
    if (lastError !== undefined) request.onRetry?.(lastError, attempt);
    const part = await readPart(partPath, statePath);
    const offset = part?.offset ?? 0;
    resumedFrom ??= offset;
    // Everything asynchronous is done before the request: between the answer's headers and the
    // first read there must be no wait, or a connection that breaks in that gap takes the bytes
    // already buffered with it (the stream discards them when it errors).
    hash = createHash('md5');
    sha256 = createHash('sha256');
    if (part !== undefined) await hashFile(partPath, [hash, sha256]);
    // O_NOFOLLOW: a link put where the part goes must not take the bytes to its target.
    const file = await open(partPath, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0), 0o644);
    let outcome: TransferResult | GatewayClientError;
    try {
      const result = await client.download(request.symbol, {
        signal: request.signal,
        ...(part !== undefined
          ? { range: { start: part.offset }, ifRange: part.etag }
          : request.localEtag !== undefined && { ifNoneMatch: request.localEtag }),
      });
      outcome = await receive(result, part, file);
    } catch (error) {
      // Refused, unreachable or stopped: an empty part has nothing worth keeping for a resume.
      const empty = (await file.stat()).size === 0;
      await file.close();
      if (empty) await removePart(partPath, statePath);
      throw error;
    }
    await file.close();
    if (outcome instanceof GatewayClientError) {
      lastError = outcome;
      // A SHA-256 mismatch is fetched again once, whole; a second one is the file's error, not the line's.
      if (sha256Failures.has(outcome) && (sha256Mismatches += 1) >= 2) {
        await removePart(partPath, statePath);
        throw new GatewayClientError('integrity_failed', `${name}: ${outcome.message}, again after downloading it a second time`);
      }
      if (outcome.code === 'protocol_error' || outcome.code === 'integrity_failed') await removePart(partPath, statePath);
      continue;
    }
    if (outcome.outcome === 'downloaded') {
      await commitFile(partPath, request.destination);
      await rm(statePath, { force: true });
    } else {
      await removePart(partPath, statePath);
    }
    return outcome;
  }
  throw lastError ?? new GatewayClientError('protocol_error', `download ${request.symbol}: no attempt made`);

  /** Reads one answer into the part; a `GatewayClientError` to retry with (after which a protocol or integrity failure discards the part). */
  async function receive(result: DownloadResult, part: { readonly offset: number; readonly etag: string } | undefined, file: FileHandle): Promise<TransferResult | GatewayClientError> {
    const offset = part?.offset ?? 0;
    if (result.status === 304) {
      if (part === undefined && request.localEtag !== undefined) return { outcome: 'not_modified', etag: result.etag ?? request.localEtag };
      result.body.destroy();
      return new GatewayClientError('protocol_error', '304 to a request that was not conditional');
    }
    if (result.status === 206 && (part === undefined || result.contentRange?.start !== part.offset || (result.etag !== undefined && result.etag !== part.etag))) {
      result.body.destroy();
      return new GatewayClientError('protocol_error', `206 with Content-Range ${result.headers.get('content-range')} for a part of ${offset} bytes`);
    }
    if (result.etag === undefined || result.size === undefined) {
      result.body.destroy();
      return new GatewayClientError('protocol_error', 'a download without ETag or size');
    }
    const append = result.status === 206;
    if (!append) {
      // A 200: the whole (possibly new) version. Synchronous on purpose (see above): start over.
      ftruncateSync(file.fd, 0);
      writeFileSync(statePath, JSON.stringify({ etag: result.etag, size: result.size } satisfies PartState));
      hash = createHash('md5');
      sha256 = createHash('sha256');
    }
    request.onStart?.({ offset: append ? offset : 0, size: result.size, status: result.status });
    // What the listing said counts only for the version it described.
    const listed = request.expected !== undefined && request.expected.etag === result.etag ? request.expected : undefined;
    // No file holds more than it is announced (or listed) to: a body that goes on is cut at once, not written.
    const limit = Math.min(result.size, listed?.size ?? Infinity);

    // Each chunk is written before the next is read, so whatever arrived before a cut, a stall or
    // Ctrl-C is in the part for the next attempt.
    let received = append ? offset : 0;
    let reported = -1;
    const report = (): void => {
      if (received === reported) return;
      reported = received;
      request.onProgress?.(received, result.size);
    };
    const progressTimer = setInterval(report, 200);
    try {
      for await (const chunk of result.body) {
        const bytes = chunk as Buffer;
        if (received + bytes.length > limit) {
          return new GatewayClientError('integrity_failed', `download ${request.symbol}: the gateway sent more than the ${limit} bytes the file has`);
        }
        await file.write(bytes);
        hash.update(bytes);
        sha256.update(bytes);
        bytesTransferred += bytes.length;
        received += bytes.length;
      }
    } catch (error) {
      if (request.signal.aborted) throw new GatewayClientError('aborted', `download ${request.symbol}: aborted`, { cause: error });
      // The part is kept: the next attempt resumes from what arrived.
      return isClientError(error) ? error : new GatewayClientError('network_error', `download ${request.symbol}: the transfer broke after ${received} bytes`, { cause: error });
    } finally {
      clearInterval(progressTimer);
      report();
    }

    const onDisk = (await file.stat()).size;
    if (onDisk !== result.size || (listed !== undefined && onDisk !== listed.size)) {
      return new GatewayClientError('integrity_failed', `received ${onDisk} bytes, the gateway announced ${listed?.size ?? result.size}`);
    }
    const md5 = hash.digest('base64');
    if (listed?.md5 !== undefined && md5 !== listed.md5) {
      return new GatewayClientError('integrity_failed', `MD5 ${md5} differs from the listing's ${listed.md5}`);
    }
    const digest = sha256.digest('hex');
    if (listed?.sha256 !== undefined && digest !== listed.sha256) {
      const mismatch = new GatewayClientError('integrity_failed', `SHA-256 ${digest} differs from the gateway's ${listed.sha256}`);
      sha256Failures.add(mismatch);
      return mismatch;
    }
    return { outcome: 'downloaded', etag: result.etag, size: onDisk, md5, lastModified: result.lastModified, bytesTransferred, resumedFrom: resumedFrom ?? 0 };
  }
}

/** The part to resume, or undefined (and nothing left behind) when there is none worth resuming. */
async function readPart(partPath: string, statePath: string): Promise<{ readonly offset: number; readonly etag: string } | undefined> {
  // lstat: only a regular file is a part; a link in its place is removed, never followed.
  const [size, state] = await Promise.all([lstat(partPath).then((stats) => (stats.isFile() ? stats.size : undefined), () => undefined), readPartState(statePath)]);
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

async function hashFile(path: string, hashes: readonly Hash[]): Promise<void> {
  for await (const chunk of createReadStream(path)) for (const hash of hashes) hash.update(chunk as Buffer);
}

async function removePart(partPath: string, statePath: string): Promise<void> {
  await Promise.all([rm(partPath, { force: true }), rm(statePath, { force: true })]);
}
