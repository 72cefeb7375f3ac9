import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
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

/** What is counted of every answer (the metrics adapter, wired in `src/app`). */
export interface RequestObserver {
  /** `slowDown`: the S3 API's 503 SlowDown, a refusal rather than a failure. */
  requestAnswered(operation: string, status: number, seconds: number, slowDown: boolean): void;
  /** A refusal (4xx), by the reason it is counted under. */
  refused(reason: string): void;
}

/**
 * Gives each request its id (`X-Request-Id`), then watches its response until it is handed whole
 * to the connection, the connection ends, or the response fails, and records it once: the request
 * log's line, metrics for every request (by operation and status), and one audit record per token
 * request, whatever ended it. Downloads are audited from the core's `download.settled` event, once
 * their unsent bytes are given back.
 *
 * The line is the one pino-http wrote (its fields, their order, its messages), written with one
 * call on `logger`: pino-http made three or four child loggers per request to write it, each the
 * prototype of the next, which cost a small answer more CPU than the rest of its logging.
 */
export function observeResponses(options: { readonly events: EventSink; readonly requests: RequestObserver; readonly logger: Logger }) {
  const { logger } = options;
  return (req: Request, res: Response, next: NextFunction): void => {
    const requestId = requestIdOf(req, res);
    contextOf(res).requestId = requestId;
    const startedAt = Date.now();
    const started = process.hrtime.bigint();
    let recorded = false;
    // 'finish': the whole answer is with the connection (before the client can have read it);
    // 'close' without 'finish': the connection ended first; 'error': the response failed.
    const record = (error?: unknown): void => {
      if (recorded) return;
      recorded = true;
      // As pino-http did: a response's error after its end is not this request's to report.
      res.removeListener('error', record);
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const context = contextOf(res);
      logRequest(logger, req, res, requestId, Date.now() - startedAt, error);
      const operation = context.operationId ?? 'none';
      const status = res.statusCode;
      options.requests.requestAnswered(operation, status, durationMs / 1000, context.errorCode === 'SlowDown');
      if (context.refusalReason !== undefined) options.requests.refused(context.refusalReason);
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
    res.on('finish', record);
    res.on('close', record);
    res.on('error', record);
    next();
  };
}

/**
 * The request's one line: `request completed` (or `request aborted` when the client left first),
 * `request errored` with an `err` for a 5xx or a failed response; `statusCode` is null when no
 * status was sent. Never headers (Authorization), never a body, never a query value: a client may
 * put a secret or a token there (`?client_secret=`, `?access_token=`), which logs must not keep.
 */
function logRequest(logger: Logger, req: Request, res: Response, requestId: string, responseTime: number, error: unknown): void {
  if (!logger.isLevelEnabled('info')) return;
  const principal = contextOf(res).principal;
  const fields = {
    requestId,
    req: { method: req.method, url: redactQuery(req.originalUrl || req.url) },
    ...(principal !== undefined && { clientId: principal.clientId }),
    res: { statusCode: res.headersSent ? res.statusCode : null },
  };
  if (error !== undefined || res.statusCode >= 500) {
    logger.info({ ...fields, err: error ?? new Error(`failed with status code ${res.statusCode}`), responseTime }, 'request errored');
    return;
  }
  logger.info({ ...fields, responseTime }, !req.readableAborted && res.writableEnded ? 'request completed' : 'request aborted');
}

/**
 * Gives every request of an Express app (`app.request`, the prototype of its requests) a `req.log`:
 * `logger`'s child whose every line carries the request's `requestId`, made on the first use, as
 * most requests write no line but the request log's own.
 */
export function defineRequestLoggers(requestPrototype: object, logger: Logger): void {
  Object.defineProperty(requestPrototype, 'log', {
    configurable: true,
    get(this: Request): Logger {
      const log = logger.child({ requestId: this.res === undefined ? undefined : contextOf(this.res).requestId });
      Object.defineProperty(this, 'log', { value: log, configurable: true, writable: true, enumerable: true });
      return log;
    },
    set(this: Request, log: Logger) {
      Object.defineProperty(this, 'log', { value: log, configurable: true, writable: true, enumerable: true });
    },
  });
}

/** Query parameters whose values are logged: the API's own that never carry credentials (not a link's `token`). */
const loggedQueryParameters = new Set(['limit', 'modifiedSince', 'redirect', 'wait']);

/** `url` with the value of every query parameter but the API's own replaced by `[redacted]`. */
export function redactQuery(url: string): string {
  const question = url.indexOf('?');
  if (question === -1) return url;
  const parameters = url
    .slice(question + 1)
    .split('&')
    .map((parameter) => {
      const equals = parameter.indexOf('=');
      const name = equals === -1 ? parameter : parameter.slice(0, equals);
      return equals === -1 || loggedQueryParameters.has(name) ? parameter : `${name}=[redacted]`;
    });
  return `${url.slice(0, question)}?${parameters.join('&')}`;
}

function tokenOutcome(status: number, code: string | undefined): TokenOutcome {
  if (status === 200) return 'issued';
  if (status === 429) return 'throttled';
  if (status >= 500) return 'failed';
  if (code === 'unauthorized_client') return 'subscription_inactive';
  return code === 'invalid_client' ? 'invalid_client' : 'invalid_request';
}
