import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { EventSink, TokenOutcome } from '../../application/events.js';
import { contextOf } from '../../http-wire/request-context.js';
import { addressOf } from './rate-limits.js';
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

/** Marks the request as the token endpoint's before any of its steps can refuse it. */
export function markTokenRequest(_req: Request, res: Response, next: NextFunction): void {
  contextOf(res).operationId = 'issueToken';
  next();
}

/**
 * Watches every response until it is handed whole to the connection, or the connection ends, then
 * records it once: metrics for every request (by operation and status), and one audit record per
 * token request, whatever ended it. Downloads are audited from the core's `download.settled` event,
 * once their unsent bytes are given back.
 */
/** What is counted of every answer (the metrics adapter, wired in `src/app`). */
export interface RequestObserver {
  /** `slowDown`: the S3 API's 503 SlowDown, a refusal rather than a failure. */
  requestAnswered(operation: string, status: number, seconds: number, slowDown: boolean): void;
  /** A refusal (4xx), by the reason it is counted under. */
  refused(reason: string): void;
}

export function observeResponses(options: { readonly events: EventSink; readonly requests: RequestObserver }) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    let recorded = false;
    // 'finish': the whole answer is with the connection (before the client can have read it);
    // 'close' without 'finish': the connection ended first.
    const record = (): void => {
      if (recorded) return;
      recorded = true;
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const context = contextOf(res);
      const operation = context.operationId ?? 'none';
      const status = res.statusCode;
      options.requests.requestAnswered(operation, status, durationMs / 1000, context.errorCode === 'SlowDown');
      if (context.refusalReason !== undefined) options.requests.refused(context.refusalReason);
      const requestId = String(res.getHeader('X-Request-Id') ?? '');
      if (operation === 'issueToken') {
        options.events.emit({
          type: 'token.requested',
          requestId,
          // A made-up id may be kilobytes long: the audit keeps as much of it as an id may be.
          clientId: requestedClientId(req)?.slice(0, MAX_CLIENT_ID_LENGTH) ?? null,
          outcome: tokenOutcome(status, context.errorCode),
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

function tokenOutcome(status: number, code: string | undefined): TokenOutcome {
  if (status === 200) return 'issued';
  if (status === 429) return 'throttled';
  if (status >= 500) return 'failed';
  if (code === 'unauthorized_client') return 'subscription_inactive';
  return code === 'invalid_client' ? 'invalid_client' : 'invalid_request';
}
