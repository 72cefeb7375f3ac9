import type { Request, Response } from 'express';
import type { DecidedDownload, DownloadSession, Downloads, LinkMakers } from '../../application/downloads.js';
import type { DownloadTarget } from '../../application/file-access.js';
import type { Clock, Principal } from '../../domain/ports.js';
import { abortOnClose, attachmentFor, sendDecidedBody, showStandings, startDownloadSession } from '../../http-wire/download-answer.js';
import { parseDownloadRequest } from '../../http-wire/grammar/download-request.js';
import { RequestRefused } from './error-responses.js';
import { publicOrigin } from './oauth-discovery.js';

/** Direct links and how long they work (DOWNLOAD_LINKS=on, or the portal's own). */
export interface DirectLinks {
  readonly makers: LinkMakers;
  readonly ttlMs: number;
}

export interface DownloadHandlerDependencies {
  readonly downloads: Downloads;
  readonly clock: Clock;
  /** How long a transfer may make no progress before it is cut. */
  readonly idleTimeoutMs: number;
  /** Direct links, when DOWNLOAD_LINKS=on. */
  readonly links: DirectLinks | undefined;
  /**
   * PUBLIC_BASE_URL: the origin of the discovery documents and of the links the gateway signs
   * itself; derived from each request when `undefined`.
   */
  readonly publicBaseUrl: string | undefined;
}

/** One download to serve: whose, of what. */
export interface DownloadOrder {
  /** The client the download is billed to (a signed link's holder). */
  readonly clientId: string;
  readonly target: DownloadTarget;
  /**
   * The client, once it is known to be allowed to download now (a signed link's holder is checked
   * on every use); refusals are thrown before anything is counted or storage asked.
   */
  readonly principal: () => Promise<Principal>;
  /** A signed link's version: any other gets 412. */
  readonly pinnedEtag?: string;
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
 * Every native download (`GET|HEAD /download/<symbol>`, `GET|HEAD /<path>`, a signed link): parses
 * the request, hands it to the core's download session (which decides, counts and reserves), then
 * writes exactly that decision; refusals are thrown for the error renderer.
 */
export async function handleDownload(deps: DownloadHandlerDependencies, req: Request, res: Response, order: DownloadOrder): Promise<void> {
  // Attached before any storage wait: a client that leaves while storage is slow cancels what is
  // left to do, and is not an error.
  const abort = abortOnClose(res);
  const { target } = order;
  const where = { clientId: order.clientId, ...('symbol' in target ? { symbol: target.symbol } : { path: target.path }) };
  const logger = req.log;
  const session = startDownloadSession(deps.downloads, req, res, {
    interface: 'native',
    clientId: order.clientId,
    symbol: 'symbol' in target ? target.symbol : null,
    path: 'path' in target ? target.path : null,
  });
  const request = parseDownloadRequest(req.method, (name) => req.get(name), deps.clock.now());
  const principal = await order.principal();
  const redirect = order.redirect && deps.links !== undefined && req.method === 'GET';
  let decided: DecidedDownload;
  try {
    decided = await session.decide({
      principal,
      target,
      request,
      ...(order.pinnedEtag !== undefined && { pinnedEtag: order.pinnedEtag }),
      redirect,
    });
  } catch (error) {
    if (abort.signal.aborted) {
      logger.debug(where, 'client left before the download was decided');
      return;
    }
    showStandings(res, session);
    throw error;
  }
  if (abort.signal.aborted) {
    logger.debug(where, 'client left before the download was decided');
    return;
  }
  const { decision } = decided;
  switch (decision.kind) {
    case 'notModified':
      showStandings(res, session);
      setValidators(res, decided);
      res.status(304).end();
      return;
    case 'preconditionFailed':
      showStandings(res, session);
      throw new RequestRefused('precondition_failed', decision.reason);
    case 'rangeNotSatisfiable':
      showStandings(res, session);
      throw new RequestRefused('range_not_satisfiable', `The requested range is not satisfiable for a file of ${decision.size} bytes`, {
        size: decision.size,
      });
    case 'full':
    case 'partial':
      break;
  }

  if (redirect && deps.links !== undefined) {
    // RFC 9110 section 15.4.8: 307 keeps the method; the client asks storage (or the signed URL)
    // for the bytes, with its own Range and conditionals if it has them.
    const link = await linkFor(deps, deps.links, req, session, principal, decided);
    showStandings(res, session);
    // The location is a credential for the file: never cached.
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Location', link.url);
    res.status(307).end();
    return;
  }

  await sendDecidedBody(req, res, {
    session,
    decided,
    abort,
    idleTimeoutMs: deps.idleTimeoutMs,
    writeHeaders: () => {
      setValidators(res, decided);
      // setHeader, not res.set: Express would append a charset to the blob's own content type.
      res.setHeader('Content-Type', decided.properties.contentType ?? 'application/octet-stream');
      res.setHeader('Content-Disposition', dispositionOf(decided));
    },
    onLeftBeforeStart: () => logger.debug(where, 'client left before the download started'),
    onEndedEarly: (reason, error) => {
      const fields = { ...where, file: decided.entry.fileName, reason, err: error };
      if (reason === 'aborted') logger.info(fields, 'download cancelled by the client');
      else if (reason === 'reader-idle') logger.warn(fields, 'download cut: the client stopped reading');
      else logger.error(fields, 'download failed mid-stream; connection destroyed');
    },
  });
}

/**
 * `GET /link/<symbol>` and the portal's links: entitlement and the file's current version exactly
 * as for a download, then a direct link to it (the core decides which kind, and what it costs).
 */
export async function handleLinkRequest(
  deps: DownloadHandlerDependencies,
  links: DirectLinks,
  req: Request,
  res: Response,
  principal: Principal,
  symbol: string,
): Promise<void> {
  const session = startDownloadSession(deps.downloads, req, res, { interface: 'native', clientId: principal.clientId, symbol, path: null });
  let link;
  try {
    link = await linkFor(deps, links, req, session, principal, undefined, symbol);
  } finally {
    showStandings(res, session);
  }
  res.set('Cache-Control', 'no-store').status(200).json({
    url: link.url,
    expiresAt: link.expiresAt.toISOString(),
    size: link.size,
    etag: link.etag,
  });
}

function linkFor(
  deps: DownloadHandlerDependencies,
  links: DirectLinks,
  req: Request,
  session: DownloadSession,
  principal: Principal,
  decided: DecidedDownload | undefined,
  symbol = decided?.entry.symbol ?? '',
): ReturnType<DownloadSession['link']> {
  return session.link(
    {
      principal,
      symbol,
      ttlMs: links.ttlMs,
      baseUrl: publicOrigin(deps.publicBaseUrl, req),
      makers: links.makers,
      dispositionOf,
    },
    decided,
  );
}

/** The blob's own `Content-Disposition`, or an attachment named after the file. */
function dispositionOf(decided: Pick<DecidedDownload, 'entry' | 'properties'>): string {
  return decided.properties.contentDisposition ?? attachmentFor(decided.entry.fileName);
}

function setValidators(res: Response, decided: DecidedDownload): void {
  res.set({
    ETag: decided.properties.etag,
    'Last-Modified': decided.properties.lastModified.toUTCString(),
    'Cache-Control': downloadCacheControl,
    ...downloadSafetyHeaders,
  });
}
