import { posix } from 'node:path';
import contentDisposition from 'content-disposition';
import type { Request, Response } from 'express';
import type { DownloadRequest } from '../../domain/download-policy.js';
import { FileNotFound } from '../../domain/errors.js';
import type { DownloadTarget, FileAccess, PreparedDownload } from '../../application/file-access.js';
import type { CatalogEntry } from '../../domain/file-catalog.js';
import type { Clock, Principal } from '../../domain/ports.js';
import { capToTerm, capToWindow } from '../../domain/subscription.js';
import type { DownloadBudget } from './download-budget.js';
import type { DownloadQuota, Refund } from './download-quota.js';
import { RequestRefused } from './error-responses.js';
import { parseDownloadRequest } from './grammar/download-request.js';
import { publicOrigin } from './oauth-discovery.js';
import { startDownloadAttempt, type DownloadAttempt } from './observability.js';
import { streamBody, TransferFailed } from './stream-body.js';

/** Makes a direct link to a file: storage's own URL (a SAS) or a gateway-signed one. */
export type DirectLinkIssuer = (link: DirectLinkRequest, baseUrl: string) => Promise<string>;

export interface DirectLinkRequest {
  readonly clientId: string;
  readonly symbol: string;
  readonly path: string;
  /** The version the link is for. */
  readonly etag: string;
  readonly expiresAt: Date;
  /** What the download through the link should be saved as. */
  readonly contentDisposition: string;
}

export interface DownloadHandlerDependencies {
  readonly files: FileAccess;
  readonly budget: DownloadBudget;
  /** The monthly byte quota: reserved before the first byte, shown on every download answer. */
  readonly quota: DownloadQuota;
  readonly clock: Clock;
  /** How long a transfer may make no progress before it is cut. */
  readonly idleTimeoutMs: number;
  /** Direct links, when DOWNLOAD_LINKS=on. */
  readonly links: { readonly issue: DirectLinkIssuer; readonly ttlMs: number } | undefined;
  /**
   * PUBLIC_BASE_URL: the origin of the discovery documents and of the links the gateway signs
   * itself; derived from each request when `undefined`.
   */
  readonly publicBaseUrl: string | undefined;
}

/** One download to serve: whose, of what, decided how. */
export interface DownloadOrder {
  readonly clientId: string;
  readonly target: DownloadTarget;
  /**
   * The catalog entry asked for, from memory (the registry and the cached catalog), and the client
   * whose term caps links and whose quota the bytes count against: refusals (not entitled, a
   * revoked link) are thrown before the budget is looked at or storage asked.
   */
  readonly resolve: () => Promise<{ readonly entry: CatalogEntry; readonly subscriber: Principal }>;
  /** Decides the answer from the file's current properties and the parsed request. */
  readonly decide: (entry: CatalogEntry, request: DownloadRequest) => Promise<PreparedDownload>;
  /** Charged to the monthly quota (a signed link's bytes were charged when it was made). */
  readonly charged: boolean;
  /** Answer 307 to a direct link instead of sending the bytes (`?redirect=true`). */
  readonly redirect: boolean;
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
 * Every download (`GET|HEAD /download/<symbol>`, `GET|HEAD /<path>`, a signed link): parses the
 * request's conditionals, asks the domain for a decision, then writes exactly that decision;
 * refusals are thrown for the error renderer. Every answer but a 304 is counted against the
 * client's download budget, once per file version within the window (`DownloadBudget`).
 */
export async function handleDownload(deps: DownloadHandlerDependencies, req: Request, res: Response, order: DownloadOrder): Promise<void> {
  // Attached before any storage wait: a client that leaves while storage is slow cancels what is
  // left to do, and is not an error.
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const { target } = order;
  const where = { clientId: order.clientId, ...('symbol' in target ? { symbol: target.symbol } : { path: target.path }) };
  // The request's own logger: every line carries its request id.
  const logger = req.log;
  const attempt = startDownloadAttempt(res, {
    clientId: order.clientId,
    symbol: 'symbol' in target ? target.symbol : null,
    path: 'path' in target ? target.path : null,
    range: req.get('range') ?? null,
  });

  const request = parseDownloadRequest(req.method, (name) => req.get(name), deps.clock.now());
  const { entry, subscriber } = await order.resolve();
  attempt.symbol = entry.symbol;
  attempt.path = entry.fileName;
  // Only a revalidation can end in 304, which is never counted nor refused: any other request of
  // a client whose budget is spent is refused now (unless it already has this file counted), so
  // that it costs no storage call.
  const mayBeNotModified = request.ifNoneMatch !== undefined || request.ifModifiedSince !== undefined;
  if (!mayBeNotModified) await deps.budget.admit(order.clientId, entry.fileName);
  let prepared: PreparedDownload;
  try {
    prepared = await order.decide(entry, request);
  } catch (error) {
    if (abort.signal.aborted) {
      logger.debug(where, 'client left before the download was decided');
      return;
    }
    if (error instanceof FileNotFound) await deps.budget.countUnversioned(req, res, order.clientId);
    throw error;
  }
  if (abort.signal.aborted) {
    logger.debug(where, 'client left before the download was decided');
    return;
  }
  if (prepared.decision.kind !== 'notModified') {
    await deps.budget.count(req, res, order.clientId, entry.fileName, prepared.properties.etag);
  }

  const { decision, properties } = prepared;
  attempt.symbol = prepared.entry.symbol;
  attempt.path = prepared.entry.fileName;
  attempt.fileSize = properties.size;
  attempt.etag = properties.etag;
  switch (decision.kind) {
    case 'notModified':
      await deps.quota.show(res, logger, subscriber);
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

  if (order.redirect && deps.links !== undefined && req.method === 'GET') {
    // RFC 9110 section 15.4.8: 307 keeps the method; the client asks storage (or the signed URL)
    // for the bytes, with its own Range and conditionals if it has them.
    const link = await chargedLink(deps.links, deps, req, res, subscriber, prepared);
    attempt.linked = true;
    attempt.quotaBytes = properties.size;
    // The location is a credential for the file: never cached.
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Location', link.url);
    res.status(307).end();
    return;
  }

  await sendDecidedBody(deps, req, res, {
    prepared,
    subscriber,
    attempt,
    abort,
    charged: order.charged,
    writeHeaders: () => {
      setValidators(res, prepared);
      // setHeader, not res.set: Express would append a charset to the blob's own content type.
      res.setHeader('Content-Type', properties.contentType ?? 'application/octet-stream');
      res.setHeader('Content-Disposition', dispositionOf(prepared));
    },
    onLeftBeforeStart: () => logger.debug(where, 'client left before the download started'),
    onEndedEarly: (reason, error) => {
      const fields = { ...where, file: prepared.entry.fileName, reason, err: error };
      if (reason === 'aborted') logger.info(fields, 'download cancelled by the client');
      else if (reason === 'reader-idle') logger.warn(fields, 'download cut: the client stopped reading');
      else logger.error(fields, 'download failed mid-stream; connection destroyed');
    },
  });
}

/** How one API answers a decided full or partial download: its own headers, and what it logs. */
export interface DecidedBody {
  readonly prepared: PreparedDownload;
  /** The client whose monthly quota the body is drawn from. */
  readonly subscriber: Principal;
  readonly attempt: DownloadAttempt;
  /** Aborted when the client leaves: stops the storage read. */
  readonly abort: AbortController;
  /** Whether the body is drawn from the monthly quota (not for a link's download, charged when the link was made). */
  readonly charged: boolean;
  /** The file's own headers (validators, type, disposition, ...); length, range and status follow. */
  readonly writeHeaders: () => void;
  /** The client left before the first byte. */
  readonly onLeftBeforeStart?: () => void;
  /** The body ended before its last byte, for `reason`. */
  readonly onEndedEarly: (reason: string, error: unknown) => void;
}

/**
 * The tail every download shares, native or S3: the body's bytes reserved from the monthly quota
 * before the first of them moves (a HEAD costs nothing), storage opened before any header is
 * written (so a changed or vanished file still gets a clean error), the headers and status, then
 * the bytes, with what did not reach the connection given back.
 */
export async function sendDecidedBody(
  deps: Pick<DownloadHandlerDependencies, 'files' | 'quota' | 'idleTimeoutMs'>,
  req: Request,
  res: Response,
  body: DecidedBody,
): Promise<void> {
  const { prepared, attempt, abort } = body;
  const { decision, properties } = prepared;
  if (decision.kind !== 'full' && decision.kind !== 'partial') throw new Error(`A ${decision.kind} decision has no body to send`);
  const length = decision.kind === 'partial' ? decision.range.end - decision.range.start + 1 : properties.size;
  let refund: Refund = async () => undefined;
  if (body.charged && req.method !== 'HEAD') {
    const given = await deps.quota.charge(res, req.log, body.subscriber, length);
    attempt.quotaBytes = length;
    refund = async (unsent) => {
      attempt.quotaBytes -= unsent;
      await given(unsent);
    };
  } else await deps.quota.show(res, req.log, body.subscriber);
  let content;
  try {
    content = req.method === 'HEAD' ? undefined : await deps.files.open(prepared, abort.signal);
  } catch (error) {
    await refund(length);
    if (!abort.signal.aborted) throw error;
    body.onLeftBeforeStart?.();
    return;
  }
  body.writeHeaders();
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
  attempt.bodyLength = length;
  try {
    await streamBody(res, content, length, {
      idleTimeoutMs: deps.idleTimeoutMs,
      onBytes: (count) => (attempt.bytesSent += count),
    });
  } catch (error) {
    abort.abort();
    // What did not reach the connection is given back.
    await refund(length - attempt.bytesSent);
    const reason = error instanceof TransferFailed ? error.reason : 'storage-failed';
    attempt.failure = reason;
    body.onEndedEarly(reason, error);
  }
}

/**
 * `GET /link/<symbol>`: entitlement and the file's current version exactly as for a download,
 * counted as a download of that version, then a direct link to it.
 */
export async function handleLinkRequest(deps: DownloadHandlerDependencies, req: Request, res: Response, principal: Principal, symbol: string): Promise<void> {
  const links = deps.links;
  if (links === undefined) throw new Error('Direct links are off: the route should not exist');
  const attempt = startDownloadAttempt(res, {
    clientId: principal.clientId,
    symbol,
    path: null,
    range: null,
  });
  const entry = await deps.files.resolve(principal, { symbol });
  attempt.path = entry.fileName;
  await deps.budget.admit(principal.clientId, entry.fileName);
  let prepared: PreparedDownload;
  try {
    // No conditionals: a link is for the file as it is now.
    prepared = await deps.files.decide(entry, parseDownloadRequest('GET', () => undefined, deps.clock.now()));
  } catch (error) {
    if (error instanceof FileNotFound) await deps.budget.countUnversioned(req, res, principal.clientId);
    throw error;
  }
  await deps.budget.count(req, res, principal.clientId, entry.fileName, prepared.properties.etag);
  attempt.fileSize = prepared.properties.size;
  attempt.etag = prepared.properties.etag;
  const link = await chargedLink(links, deps, req, res, principal, prepared);
  attempt.linked = true;
  attempt.quotaBytes = prepared.properties.size;
  res.set('Cache-Control', 'no-store').status(200).json({
    url: link.url,
    expiresAt: link.expiresAt.toISOString(),
    size: prepared.properties.size,
    etag: prepared.properties.etag,
  });
}

/**
 * A direct link, with its file's whole size charged to the monthly quota first (storage, not the
 * gateway, moves those bytes, so they are counted when the link is made) and given back if no link
 * could be made.
 */
async function chargedLink(
  links: NonNullable<DownloadHandlerDependencies['links']>,
  deps: Pick<DownloadHandlerDependencies, 'clock' | 'publicBaseUrl' | 'quota'>,
  req: Request,
  res: Response,
  subscriber: Principal,
  prepared: PreparedDownload,
): Promise<{ readonly url: string; readonly expiresAt: Date }> {
  const size = prepared.properties.size;
  const refund = await deps.quota.charge(res, req.log, subscriber, size);
  try {
    return await issueLink(links, deps, req, subscriber, prepared);
  } catch (error) {
    await refund(size);
    throw error;
  }
}

async function issueLink(
  links: NonNullable<DownloadHandlerDependencies['links']>,
  deps: Pick<DownloadHandlerDependencies, 'clock' | 'publicBaseUrl'>,
  req: Request,
  subscriber: Principal,
  prepared: PreparedDownload,
): Promise<{ readonly url: string; readonly expiresAt: Date }> {
  // No link outlives the subscription term or the file's release window; whole seconds, rounded
  // down: what a SAS or a JWT can say.
  const wanted = new Date(deps.clock.now().getTime() + links.ttlMs);
  const capped = capToWindow(capToTerm(wanted, subscriber), prepared.entry);
  const expiresAt = new Date(Math.floor(capped.getTime() / 1000) * 1000);
  const url = await links.issue(
    {
      clientId: subscriber.clientId,
      symbol: prepared.entry.symbol,
      path: prepared.entry.fileName,
      etag: prepared.properties.etag,
      expiresAt,
      contentDisposition: dispositionOf(prepared),
    },
    publicOrigin(deps.publicBaseUrl, req),
  );
  return { url, expiresAt };
}

/** The blob's own `Content-Disposition`, or an attachment named after the file. */
function dispositionOf(prepared: PreparedDownload): string {
  return prepared.properties.contentDisposition ?? attachmentFor(prepared.entry.fileName);
}

/**
 * `attachment; filename="<ASCII fallback>"; filename*=UTF-8''<name>` for names beyond ASCII
 * (RFC 6266 section 4.3), so every client gets a safe name and modern ones the exact one.
 */
export function attachmentFor(fileName: string): string {
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
