import { posix } from 'node:path';
import contentDisposition from 'content-disposition';
import type { Request, Response } from 'express';
import type { DownloadTarget, FileAccess, PreparedDownload } from '../../domain/file-access.js';
import type { Clock, Principal } from '../../domain/ports.js';
import { RequestRefused } from './error-responses.js';
import { parseDownloadRequest } from './grammar/download-request.js';
import { startDownloadAttempt } from './observability.js';
import type { DownloadLimiter } from './rate-limits.js';
import { streamBody, TransferFailed } from './stream-body.js';

export interface DownloadHandlerDependencies {
  readonly files: FileAccess;
  readonly limiter: DownloadLimiter;
  readonly clock: Clock;
  /** How long a transfer may make no progress before it is cut. */
  readonly idleTimeoutMs: number;
}

/** Responses depend on the caller's entitlement: only the caller's own cache may keep them. */
const downloadCacheControl = 'private';
/**
 * A stored file is never a page of the gateway's origin: a browser shows an HTML or SVG file served
 * inline as a sandboxed, script-less document of its own (`X-Content-Type-Options: nosniff` is on
 * every response, see http-app.ts).
 */
const downloadSafetyHeaders = { 'Content-Security-Policy': 'sandbox' };

/**
 * `GET|HEAD /download/<symbol>` and `GET|HEAD /<path>`: parses the request's conditionals, asks the
 * domain for a decision, then writes exactly that decision; refusals are thrown for the error
 * renderer. 304s are neither counted nor refused by the rate limit.
 */
export async function handleDownload(
  deps: DownloadHandlerDependencies,
  req: Request,
  res: Response,
  principal: Principal,
  target: DownloadTarget,
): Promise<void> {
  // Attached before any storage wait: a client that leaves while storage is slow cancels what is
  // left to do, and is not an error.
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const where = { clientId: principal.clientId, ...('symbol' in target ? { symbol: target.symbol } : { path: target.path }) };
  // The request's own logger: every line carries its request id.
  const logger = req.log;
  const attempt = startDownloadAttempt(res, {
    clientId: principal.clientId,
    symbol: 'symbol' in target ? target.symbol : null,
    path: 'path' in target ? target.path : null,
    range: req.get('range') ?? null,
    fileSize: null,
    etag: null,
    bytesSent: 0,
    failure: undefined,
  });

  const request = parseDownloadRequest(req.method, (name) => req.get(name), deps.clock.now());
  // Only a revalidation can end in 304, which is never counted nor refused: any other request is
  // counted first, so that a client over its budget costs no entitlement check nor storage call.
  const mayBeNotModified = request.ifNoneMatch !== undefined || request.ifModifiedSince !== undefined;
  if (!mayBeNotModified) await deps.limiter(req, res, principal);
  let prepared: PreparedDownload | undefined;
  let failure: unknown;
  try {
    prepared = await deps.files.prepareDownload(principal, target, request);
  } catch (error) {
    failure = error;
  }
  if (abort.signal.aborted) {
    logger.debug(where, 'client left before the download was decided');
    return;
  }
  if (mayBeNotModified && prepared?.decision.kind !== 'notModified') await deps.limiter(req, res, principal);
  if (prepared === undefined) throw failure;

  const { decision, properties } = prepared;
  attempt.symbol = prepared.entry.symbol;
  attempt.path = prepared.entry.fileName;
  attempt.fileSize = properties.size;
  attempt.etag = properties.etag;
  switch (decision.kind) {
    case 'notModified':
      setValidators(res, prepared);
      res.status(304).end();
      return;
    case 'preconditionFailed':
      throw new RequestRefused('precondition_failed', decision.reason);
    case 'rangeNotSatisfiable':
      throw new RequestRefused('range_not_satisfiable', `The requested range is not satisfiable for a file of ${decision.size} bytes`, {
        size: decision.size,
      });
    case 'full':
    case 'partial':
      break;
  }

  const length = decision.kind === 'partial' ? decision.range.end - decision.range.start + 1 : properties.size;
  // Open storage before any header is written, so a changed or vanished file still gets a clean error.
  let content;
  try {
    content = req.method === 'HEAD' ? undefined : await deps.files.open(prepared, abort.signal);
  } catch (error) {
    if (!abort.signal.aborted) throw error;
    logger.debug(where, 'client left before the download started');
    return;
  }

  setValidators(res, prepared);
  // setHeader, not res.set: Express would append a charset to the blob's own content type.
  res.setHeader('Content-Type', properties.contentType ?? 'application/octet-stream');
  res.setHeader('Content-Disposition', properties.contentDisposition ?? attachmentFor(prepared.entry.fileName));
  res.setHeader('Content-Length', String(length));
  res.setHeader('Accept-Ranges', 'bytes');
  if (decision.kind === 'partial') {
    res.setHeader('Content-Range', `bytes ${decision.range.start}-${decision.range.end}/${properties.size}`);
  }
  res.status(decision.kind === 'partial' ? 206 : 200);
  if (content === undefined) {
    res.end();
    return;
  }
  try {
    await streamBody(res, content, length, {
      idleTimeoutMs: deps.idleTimeoutMs,
      onBytes: (count) => (attempt.bytesSent += count),
    });
  } catch (error) {
    abort.abort();
    const reason = error instanceof TransferFailed ? error.reason : 'storage-failed';
    attempt.failure = reason;
    const fields = { ...where, file: prepared.entry.fileName, reason, err: error };
    if (reason === 'aborted') logger.info(fields, 'download cancelled by the client');
    else if (reason === 'reader-idle') logger.warn(fields, 'download cut: the client stopped reading');
    else logger.error(fields, 'download failed mid-stream; connection destroyed');
  }
}

/**
 * `attachment; filename="<ASCII fallback>"; filename*=UTF-8''<name>` for names beyond ASCII
 * (RFC 6266 section 4.3), so every client gets a safe name and modern ones the exact one.
 */
function attachmentFor(fileName: string): string {
  const name = posix.basename(fileName);
  const asciiFallback = name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^\x20-\x7e]/g, '_');
  return contentDisposition(name, { fallback: asciiFallback });
}

function setValidators(res: Response, prepared: PreparedDownload): void {
  res.set({
    ETag: prepared.properties.etag,
    'Last-Modified': prepared.properties.lastModified.toUTCString(),
    'Cache-Control': downloadCacheControl,
    ...downloadSafetyHeaders,
  });
}
