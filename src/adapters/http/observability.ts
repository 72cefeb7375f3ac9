import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { AuditTrail, DownloadInterface, DownloadOutcome, TokenOutcome } from '../audit/audit-trail.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { addressOf } from './rate-limits.js';
import type { TransferFailure } from './stream-body.js';
import { MAX_CLIENT_ID_LENGTH, requestedClientId } from './token-endpoint.js';

/** An incoming `X-Request-Id` worth keeping: short, and nothing that could break a log or a header. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/**
 * The request id of a request: the client's `X-Request-Id` when it is sane, a new UUID otherwise.
 * It is echoed in the response's `X-Request-Id` and carried by every log line of the request.
 */
export function requestIdOf(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

/** What the download handler learns of one attempt, for the audit trail and the metrics. */
export interface DownloadAttempt {
  readonly clientId: string;
  symbol: string | null;
  path: string | null;
  readonly range: string | null;
  fileSize: number | null;
  etag: string | null;
  bytesSent: number;
  /**
   * The length of the body being sent, once its transfer starts. When `bytesSent` reaches it, every
   * byte was handed to the connection: the download is complete even if the client closed before
   * the response's own end (bytes sent are bytes handed over, as everywhere in the audit trail).
   */
  bodyLength: number | null;
  /** Why the transfer ended early, when it did. */
  failure: TransferFailure | undefined;
  /** Answered with a direct link (307) rather than the bytes. */
  linked: boolean;
  /** Which API served it; the native one when absent. */
  readonly interface?: DownloadInterface;
  /** What counts against the monthly byte quota: the body bytes sent, or a link's file size. */
  quotaBytes: number;
}

/** Where the download handler keeps the attempt it is serving. */
export function downloadAttemptOf(res: Response): DownloadAttempt | undefined {
  return res.locals['download'] as DownloadAttempt | undefined;
}

/** What identifies an attempt when it starts; its progress starts empty. */
export type DownloadAttemptStart = Pick<DownloadAttempt, 'clientId' | 'symbol' | 'path' | 'range' | 'interface'>;

export function startDownloadAttempt(res: Response, start: DownloadAttemptStart): DownloadAttempt {
  const attempt: DownloadAttempt = {
    ...start,
    fileSize: null,
    etag: null,
    bytesSent: 0,
    bodyLength: null,
    failure: undefined,
    linked: false,
    quotaBytes: 0,
  };
  res.locals['download'] = attempt;
  return attempt;
}

/** Marks the request as the token endpoint's before any of its steps can refuse it. */
export function markTokenRequest(_req: Request, res: Response, next: NextFunction): void {
  res.locals['operationId'] = 'issueToken';
  next();
}

/**
 * Watches every response until it is handed whole to the connection, or the connection ends, then
 * records it once: metrics for every
 * request (by operation and status), and one audit record per download attempt and per token
 * request, whatever ended them (an answer, a refusal, a failure, the client leaving).
 */
export function observeResponses(options: { readonly audit: AuditTrail; readonly metrics: GatewayMetrics }) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    let recorded = false;
    // 'finish': the whole answer is with the connection (before the client can have read it);
    // 'close' without 'finish': the connection ended first.
    const record = (): void => {
      if (recorded) return;
      recorded = true;
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const operation = (res.locals['operationId'] as string | undefined) ?? 'none';
      const status = res.statusCode;
      options.metrics.requestAnswered(operation, status, durationMs / 1000, res.locals['errorCode'] === 'SlowDown');
      const refusal = res.locals['refusalReason'] as string | undefined;
      if (refusal !== undefined) options.metrics.refused(refusal);
      const requestId = String(res.getHeader('X-Request-Id') ?? '');
      const download = downloadAttemptOf(res);
      if (download !== undefined) {
        const outcome = downloadOutcome(status, download, res.writableFinished, res.locals['errorCode'] as string | undefined);
        options.metrics.downloadEnded(outcome, download.bytesSent);
        options.audit.record({
          event: 'download',
          interface: download.interface ?? 'native',
          requestId,
          clientId: download.clientId,
          symbol: download.symbol,
          path: download.path,
          method: req.method,
          status,
          range: download.range,
          bytesSent: download.bytesSent,
          quotaBytes: download.quotaBytes,
          fileSize: download.fileSize,
          etag: download.etag,
          outcome,
          durationMs: Math.round(durationMs),
        });
      }
      if (operation === 'issueToken') {
        const outcome = tokenOutcome(status, res.locals['errorCode'] as string | undefined);
        options.metrics.tokenRequestEnded(outcome);
        options.audit.record({
          event: 'token',
          requestId,
          // A made-up id may be kilobytes long: the audit keeps as much of it as an id may be.
          clientId: requestedClientId(req)?.slice(0, MAX_CLIENT_ID_LENGTH) ?? null,
          outcome,
          status,
          address: addressOf(req),
          durationMs: Math.round(durationMs),
        });
      }
    };
    res.once('finish', record);
    res.once('close', record);
    next();
  };
}

/** `finished`: the whole answer was handed to the connection (`writableFinished`). */
function downloadOutcome(status: number, attempt: DownloadAttempt, finished: boolean, errorCode: string | undefined): DownloadOutcome {
  if (attempt.linked) return 'linked';
  if (status === 304) return 'not_modified';
  // The S3 API answers its rate limit with S3's 503 SlowDown: a refusal, not a failure.
  if (errorCode === 'SlowDown') return 'refused';
  if (status >= 500) return 'failed';
  if (status >= 400) return 'refused';
  const delivered = attempt.bodyLength !== null && attempt.bytesSent === attempt.bodyLength;
  if ((finished || delivered) && attempt.failure === undefined) return 'completed';
  return attempt.failure === undefined || attempt.failure === 'aborted' || attempt.failure === 'reader-idle' ? 'aborted' : 'failed';
}

function tokenOutcome(status: number, code: string | undefined): TokenOutcome {
  if (status === 200) return 'issued';
  if (status === 429) return 'throttled';
  if (status >= 500) return 'failed';
  if (code === 'unauthorized_client') return 'subscription_inactive';
  return code === 'invalid_client' ? 'invalid_client' : 'invalid_request';
}
