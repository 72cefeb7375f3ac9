import { posix } from 'node:path';
import contentDisposition from 'content-disposition';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { DownloadRequest } from '../../domain/download-policy.js';
import type { DownloadTarget, FileAccess, PreparedDownload } from '../../domain/file-access.js';
import type { Principal } from '../../domain/ports.js';
import type { DownloadLimiter } from './download-rate-limit.js';
import { sendError, sendMappedError } from './error-mapping.js';
import { streamBody } from './stream-body.js';

export interface DownloadHandlerDependencies {
  readonly files: FileAccess;
  readonly limiter: DownloadLimiter;
  readonly logger: Logger;
}

/** Responses depend on the caller's entitlement: only the caller's own cache may keep them. */
const downloadCacheControl = 'private';

/**
 * `GET|HEAD /download/<symbol>` and `GET|HEAD /<path>`: asks the domain for a decision, then writes
 * exactly that decision. 304s are neither counted nor refused by the rate limit.
 */
export async function handleDownload(
  deps: DownloadHandlerDependencies,
  req: Request,
  res: Response,
  principal: Principal,
  target: DownloadTarget,
): Promise<void> {
  let prepared: PreparedDownload | undefined;
  let failure: unknown;
  try {
    prepared = await deps.files.prepareDownload(principal, target, downloadRequestOf(req));
  } catch (error) {
    failure = error;
  }
  if (prepared?.decision.kind !== 'notModified' && (await deps.limiter(req, res, principal)) === 'limited') return;
  if (prepared === undefined) return sendMappedError(res, failure, deps.logger, { clientId: principal.clientId });

  const { decision, properties } = prepared;
  switch (decision.kind) {
    case 'notModified':
      setValidators(res, prepared);
      res.status(304).end();
      return;
    case 'preconditionFailed':
      return sendError(res, 412, 'Precondition failed', decision.reason);
    case 'rangeNotSatisfiable':
      res.set('Content-Range', `bytes */${decision.size}`);
      return sendError(res, 416, 'Range not satisfiable', `The requested range is not satisfiable for a file of ${decision.size} bytes`);
    case 'full':
    case 'partial':
      break;
  }

  const length = decision.kind === 'partial' ? decision.range.end - decision.range.start + 1 : properties.size;
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  // Open storage before any header is written, so a changed or vanished file still gets a clean error.
  const content = req.method === 'HEAD' ? undefined : await openOrReport(deps, res, prepared, abort.signal, principal);
  if (req.method !== 'HEAD' && content === undefined) return;

  setValidators(res, prepared);
  // setHeader, not res.set: Express would append a charset to the blob's own content type.
  res.setHeader('Content-Type', properties.contentType ?? 'application/octet-stream');
  res.setHeader('Content-Disposition', properties.contentDisposition ?? attachmentFor(prepared.entry.fileName));
  res.setHeader('Content-Length', String(length));
  res.setHeader('Accept-Ranges', 'bytes');
  if (decision.kind === 'partial') {
    res.set('Content-Range', `bytes ${decision.range.start}-${decision.range.end}/${properties.size}`);
  }
  res.status(decision.kind === 'partial' ? 206 : 200);
  if (content === undefined) {
    res.end();
    return;
  }
  try {
    await streamBody(res, content, length);
  } catch (error) {
    if (abort.signal.aborted) deps.logger.info({ clientId: principal.clientId, file: prepared.entry.fileName }, 'download cancelled by the client');
    else deps.logger.error({ err: error, clientId: principal.clientId, file: prepared.entry.fileName }, 'download failed mid-stream; connection destroyed');
  }
}

async function openOrReport(
  deps: DownloadHandlerDependencies,
  res: Response,
  prepared: PreparedDownload,
  signal: AbortSignal,
  principal: Principal,
) {
  try {
    return await deps.files.open(prepared, signal);
  } catch (error) {
    sendMappedError(res, error, deps.logger, { clientId: principal.clientId, file: prepared.entry.fileName });
    return undefined;
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
  });
}

function downloadRequestOf(req: Request): DownloadRequest {
  return {
    method: req.method === 'HEAD' ? 'HEAD' : 'GET',
    ifMatch: req.get('if-match'),
    ifNoneMatch: req.get('if-none-match'),
    ifModifiedSince: req.get('if-modified-since'),
    ifUnmodifiedSince: req.get('if-unmodified-since'),
    range: req.get('range'),
    ifRange: req.get('if-range'),
  };
}
