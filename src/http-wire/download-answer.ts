import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import contentDisposition from 'content-disposition';
import type { Request, Response } from 'express';
import type { DecidedDownload, DownloadSession, DownloadStart, Downloads } from '../application/downloads.js';
import type { BudgetStanding } from '../domain/errors.js';
import { appendListItem, quotaItem, quotaPolicyItem } from './quota-headers.js';
import { streamBody, TransferFailed } from './stream-body.js';

/**
 * What the two HTTP doors (the native API and the S3-compatible API) share when they answer a
 * download the core decided: the session tied to the response's end, the budget and quota fields,
 * and the body streamed with every byte reported to the core.
 */

/**
 * Starts the core's session for this request and ends it when the answer is over (handed whole to
 * the connection, or the connection ended), with the status the client got. `refused` tells a
 * refusal whose status is 5xx (the S3 API's 503 SlowDown).
 */
export function startDownloadSession(
  downloads: Downloads,
  req: Request,
  res: Response,
  start: Pick<DownloadStart, 'interface' | 'clientId' | 'symbol' | 'path'>,
  refused: () => boolean = () => false,
): DownloadSession {
  const session = downloads.start({
    ...start,
    requestId: String(res.getHeader('X-Request-Id') ?? ''),
    method: req.method,
    range: req.get('range') ?? null,
    log: req.log,
  });
  // 'finish': the whole answer is with the connection; 'close' without 'finish': the connection ended first.
  const end = (): void => void session.end({ status: res.statusCode, finished: res.writableFinished, refused: refused() });
  res.once('finish', end);
  res.once('close', end);
  return session;
}

/**
 * The download budget's and the monthly quota's standing in the `RateLimit-Policy` and `RateLimit`
 * fields (draft-ietf-httpapi-ratelimit-headers), each an item of its own; written once per answer.
 */
export function showStandings(res: Response, session: DownloadSession): void {
  const now = session.now();
  if (res.headersSent) return;
  const budget = session.budget;
  if (budget !== undefined) {
    res.setHeader('RateLimit-Policy', appendListItem(res.getHeader('RateLimit-Policy'), budgetPolicyItem(budget)));
    res.setHeader('RateLimit', appendListItem(res.getHeader('RateLimit'), `"${budget.name}"; r=${budget.remaining}; t=${budget.resetSeconds}`));
  }
  const quota = session.quota;
  if (quota !== undefined) {
    res.setHeader('RateLimit-Policy', appendListItem(res.getHeader('RateLimit-Policy'), quotaPolicyItem(quota)));
    res.setHeader('RateLimit', appendListItem(res.getHeader('RateLimit'), quotaItem(quota, now)));
  }
}

/** The budget's policy item; its partition key is a hash of what it is counted under, never the client id itself. */
function budgetPolicyItem(budget: BudgetStanding): string {
  const partitionKey = Buffer.from(createHash('sha256').update(budget.key).digest('hex').slice(0, 12)).toString('base64');
  return `"${budget.name}"; q=${budget.limit}; w=${budget.windowSeconds}; pk=:${partitionKey}:`;
}

/** How one door answers a decided full or partial download: its own headers, and what it logs. */
export interface DecidedBody {
  readonly session: DownloadSession;
  readonly decided: DecidedDownload;
  /** Aborted when the client leaves: stops the storage read. */
  readonly abort: AbortController;
  readonly idleTimeoutMs: number;
  /** The file's own headers (validators, type, disposition, ...); length, range and status follow. */
  readonly writeHeaders: () => void;
  /** The client left before the first byte. */
  readonly onLeftBeforeStart?: () => void;
  /** The body ended before its last byte, for `reason`. */
  readonly onEndedEarly: (reason: string, error: unknown) => void;
}

/**
 * The tail every download shares, native or S3: storage opened before any header is written (so a
 * changed or vanished file still gets a clean error), the headers and status, then the bytes, each
 * chunk reported to the session, which gives back what was not delivered when it settles.
 */
export async function sendDecidedBody(req: Request, res: Response, body: DecidedBody): Promise<void> {
  const { session, decided, abort } = body;
  const { decision, properties } = decided;
  if (decision.kind !== 'full' && decision.kind !== 'partial') throw new Error(`A ${decision.kind} decision has no body to send`);
  const length = decided.length;
  let content;
  try {
    content = req.method === 'HEAD' ? undefined : await session.open(abort.signal);
  } catch (error) {
    if (!abort.signal.aborted) throw error;
    body.onLeftBeforeStart?.();
    return;
  }
  body.writeHeaders();
  showStandings(res, session);
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
  session.bodyStarted(length);
  try {
    await streamBody(res, content, length, { idleTimeoutMs: body.idleTimeoutMs, onBytes: (count) => session.delivered(count) });
  } catch (error) {
    abort.abort();
    const reason = error instanceof TransferFailed ? error.reason : 'storage-failed';
    session.transferFailed(reason);
    body.onEndedEarly(reason, error);
  }
}

/** Aborted when the client leaves before the answer is complete, so that storage waits end with it. */
export function abortOnClose(res: Response): AbortController {
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  return abort;
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
