import { STATUS_CODES } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { GatewayError, LimitsUnavailable, QuotaExceeded, RateLimited, SubscriptionInactive, type DomainErrorCode } from '../../domain/errors.js';
import { HeaderTooLarge } from '../../http-wire/grammar/download-request.js';
import { contextOf } from '../../http-wire/request-context.js';

/**
 * How every error becomes a response: the one module that writes a non-2xx answer, for every route
 * and middleware (validation, authentication, rate limits, the token endpoint, domain errors,
 * unknown errors, and requests Node's HTTP parser refuses).
 *
 * Domain errors carry their own `code`; refusals the HTTP adapter decides itself are
 * `RequestRefused`; anything else is an `internal_error` whose cause is logged, never shown.
 */

/** Refusals about the form of a request rather than the domain's rules. */
export type HttpErrorCode =
  | 'invalid_request'
  | 'missing_token'
  | 'route_not_found'
  | 'method_not_allowed'
  | 'precondition_failed'
  | 'range_not_satisfiable'
  | 'rate_limited'
  | 'request_timeout'
  | 'headers_too_large'
  | 'unsupported_grant_type'
  | 'invalid_grant'
  | 'invalid_scope'
  | 'internal_error'
  | 'limits_unavailable'
  | 'not_ready'
  | 'invalid_link';

/** The stable, machine-readable `code` of every JSON error body. */
export type ErrorCode = DomainErrorCode | HttpErrorCode;

export interface RefusalDetails {
  /** Validation failures, listed in the body's `details`. */
  readonly validation?: readonly string[];
  /** Seconds until a retry may succeed (`Retry-After`). */
  readonly retryAfterSeconds?: number;
  /** The methods the route allows (`Allow`, for 405). */
  readonly allow?: readonly string[];
  /** The file's size, for 416's `Content-Range: bytes *\/<size>`. */
  readonly size?: number;
  /** Answer in the shape of RFC 6749 section 5.2 (`error`, `error_description`): the token endpoint's. */
  readonly oauth?: boolean;
  /** Close the connection after the answer (a request body left unread is not waited for). */
  readonly closeConnection?: boolean;
  /** Why an instance is not ready (`/ready`'s 503). */
  readonly reasons?: readonly string[];
  readonly cause?: unknown;
}

/** A request the HTTP adapter refuses, with what the response needs to say why. */
export class RequestRefused extends Error {
  readonly code: HttpErrorCode;
  readonly details: RefusalDetails;

  constructor(code: HttpErrorCode, message: string, details: RefusalDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.details = details;
    this.name = new.target.name;
  }
}

type LogLevel = 'debug' | 'info' | 'warn' | 'error';
type Shape = 'error' | 'oauth' | 'readiness';

interface ErrorEntry {
  readonly status: number;
  /**
   * Which body shape: the API's `{error, message}`, OAuth's `{error, error_description}`, or the
   * readiness probe's `{status: "not_ready", reasons}`.
   */
  readonly shape: Shape;
  /** Logged with the request id; routine refusals stay at debug because the access log has them. */
  readonly log: LogLevel;
  /** What the caller is told; the domain's own message when absent. */
  readonly message?: (error: Error) => string;
  readonly headers?: (details: RefusalDetails, message: string) => Record<string, string>;
}

const bearerRealm = 'data-file-gateway';

/** Seconds a client should wait before retrying after a transient storage problem. */
const retryAfterSeconds = { contentChanged: 1, storageBusy: 5 };

/** RFC 6749 section 5.1: token responses and their errors must not be cached. */
const oauthHeaders = (): Record<string, string> => ({ Pragma: 'no-cache' });

/** The one table: each code's status, body shape, log level, message and headers. */
const errorTable: Readonly<Record<ErrorCode, ErrorEntry>> = {
  invalid_request: { status: 400, shape: 'error', log: 'debug' },
  invalid_path: { status: 400, shape: 'error', log: 'debug' },
  missing_token: {
    status: 401,
    shape: 'error',
    log: 'debug',
    // RFC 6750 section 3.1: no error code when the request carried no credentials at all.
    headers: () => ({ 'WWW-Authenticate': `Bearer realm="${bearerRealm}"` }),
  },
  invalid_token: {
    status: 401,
    shape: 'error',
    log: 'info',
    // RFC 6750 section 3: a request that carried a token learns why it was refused.
    headers: (_details, message) => ({
      'WWW-Authenticate': `Bearer realm="${bearerRealm}", error="invalid_token", error_description="${quotedStringSafe(message)}"`,
    }),
  },
  not_entitled: { status: 403, shape: 'error', log: 'debug' },
  // A signed download link that is forged, altered, expired or for another file.
  invalid_link: { status: 403, shape: 'error', log: 'info' },
  file_not_found: { status: 404, shape: 'error', log: 'debug' },
  catalog_not_found: { status: 404, shape: 'error', log: 'debug' },
  route_not_found: { status: 404, shape: 'error', log: 'debug' },
  method_not_allowed: {
    status: 405,
    shape: 'error',
    log: 'debug',
    headers: (details) => ({ Allow: (details.allow ?? []).join(', ') }),
  },
  request_timeout: { status: 408, shape: 'error', log: 'info', headers: () => ({ Connection: 'close' }) },
  precondition_failed: { status: 412, shape: 'error', log: 'debug' },
  cursor_expired: { status: 410, shape: 'error', log: 'debug' },
  webhook_url_refused: { status: 400, shape: 'error', log: 'debug' },
  webhook_not_found: { status: 404, shape: 'error', log: 'debug' },
  // The client has as many endpoints as it may: removing one makes room.
  webhook_limit_reached: { status: 409, shape: 'error', log: 'debug' },
  range_not_satisfiable: {
    status: 416,
    shape: 'error',
    log: 'debug',
    headers: (details) => ({ 'Content-Range': `bytes */${details.size ?? 0}` }),
  },
  rate_limited: {
    status: 429,
    shape: 'error',
    log: 'warn',
    headers: (details) => ({ 'Retry-After': String(details.retryAfterSeconds ?? 1) }),
  },
  // The monthly byte quota: no retry helps before the period resets, which Retry-After says.
  quota_exceeded: {
    status: 429,
    shape: 'error',
    log: 'info',
    headers: (details) => ({ 'Retry-After': String(details.retryAfterSeconds ?? 1) }),
  },
  headers_too_large: { status: 431, shape: 'error', log: 'info', headers: () => ({ Connection: 'close' }) },
  index_malformed: {
    status: 500,
    shape: 'error',
    log: 'error',
    message: (error) => `The catalog index of this client could not be read: ${error.message}`,
  },
  internal_error: {
    status: 500,
    shape: 'error',
    log: 'error',
    message: () => 'The gateway failed to handle the request',
  },
  storage_failed: {
    status: 502,
    shape: 'error',
    log: 'error',
    message: () => 'Storage could not be reached or failed; try again later',
  },
  storage_unavailable: {
    status: 503,
    shape: 'error',
    log: 'error',
    message: () => 'Storage could not be reached or failed; try again later',
    headers: () => ({ 'Retry-After': String(retryAfterSeconds.storageBusy) }),
  },
  not_ready: { status: 503, shape: 'readiness', log: 'debug' },
  limits_unavailable: {
    status: 503,
    shape: 'error',
    log: 'debug',
    headers: (details) => ({ 'Retry-After': String(details.retryAfterSeconds ?? 5) }),
  },
  content_changed: {
    status: 503,
    shape: 'error',
    log: 'warn',
    headers: () => ({ 'Retry-After': String(retryAfterSeconds.contentChanged) }),
  },
  invalid_client: {
    status: 401,
    shape: 'oauth',
    log: 'warn',
    // RFC 9110 section 15.5.2: every 401 carries a challenge; RFC 6749 section 5.2 lets it name the
    // client authentication scheme even when the client authenticated in the body.
    headers: () => ({ ...oauthHeaders(), 'WWW-Authenticate': `Basic realm="${bearerRealm}", charset="UTF-8"` }),
  },
  unsupported_grant_type: { status: 400, shape: 'oauth', log: 'debug', headers: oauthHeaders },
  invalid_grant: { status: 400, shape: 'oauth', log: 'debug', headers: oauthHeaders },
  unauthorized_client: { status: 400, shape: 'oauth', log: 'debug', headers: oauthHeaders },
  invalid_scope: { status: 400, shape: 'oauth', log: 'debug', headers: oauthHeaders },
};

/** The codes of the table, for the contract test that compares them with `openapi.yaml`. */
export const errorCodes = Object.keys(errorTable) as ErrorCode[];

/** A fully described error response, ready to be written to Express or to a raw socket. */
export interface ErrorResponse {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Readonly<Record<string, unknown>>;
  readonly log: LogLevel;
  /** What to log beside the code: the error itself when it says more than the body. */
  readonly cause: unknown;
}

/** The response for any failure: a domain error, a `RequestRefused`, or anything else (500). */
export function describeError(failure: unknown): ErrorResponse {
  const { code, message: ownMessage, details } = classify(failure);
  const entry = errorTable[code];
  const message = entry.message === undefined ? ownMessage : entry.message(failure instanceof Error ? failure : new Error(ownMessage));
  const shape: Shape = details.oauth === true ? 'oauth' : entry.shape;
  const headers: Record<string, string> = {
    // Errors depend on the caller's credentials and on the moment: no cache may keep them.
    'Cache-Control': 'no-store',
    ...(shape === 'oauth' ? oauthHeaders() : {}),
    ...(entry.headers?.(details, message) ?? {}),
    ...(details.closeConnection === true && { Connection: 'close' }),
  };
  const body =
    shape === 'oauth'
      ? { error: code, error_description: message, code }
      : shape === 'readiness'
        ? { status: 'not_ready', reasons: details.reasons ?? [message] }
        : {
            error: reasonPhrase(entry.status),
            message,
            code,
            ...(details.validation !== undefined && { details: details.validation }),
          };
  return { code, status: entry.status, headers, body, log: entry.log, cause: failure };
}

/**
 * The Express error middleware, mounted last: every route and middleware hands its failures here
 * (by throwing, rejecting or calling `next(error)`).
 */
export function renderErrors(error: unknown, req: Request, res: Response, _next: NextFunction): void {
  sendError(req, res, error);
}

/**
 * Writes the error response for `failure` and logs it with the request's logger at the table's
 * level. When the response has already started (a download failing mid-stream), nothing can be
 * said any more: the connection is destroyed so that the client sees an incomplete transfer.
 */
function sendError(req: Request, res: Response, failure: unknown): void {
  const response = describeError(failure);
  const logger: Logger | undefined = (req as Request & { log?: Logger }).log;
  logError(logger, response);
  if (res.headersSent) {
    res.destroy(failure instanceof Error ? failure : undefined);
    return;
  }
  contextOf(res).errorCode = response.code;
  if (response.status < 500) contextOf(res).refusalReason = refusalReason(response);
  // setHeader rather than res.set: values stay exactly as the table wrote them.
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  res.status(response.status).json(response.body);
}

/**
 * The same response as raw HTTP/1.1 text, for requests Node's parser refuses before Express sees
 * them (`clientError`); the connection is closed after it.
 */
export function rawErrorResponse(failure: unknown, logger?: Logger): string {
  const response = describeError(failure);
  logError(logger, response);
  const body = JSON.stringify(response.body);
  const headers = {
    ...response.headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
  };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}\r\n${head}\r\n${body}`;
}

/** The reason a refusal is counted under: its code, or `subscription_inactive` for a client outside its term. */
function refusalReason(response: ErrorResponse): string {
  const failure = response.cause;
  const term = failure instanceof SubscriptionInactive || (failure instanceof Error && failure.cause instanceof SubscriptionInactive);
  return term ? 'subscription_inactive' : response.code;
}

function classify(failure: unknown): { code: ErrorCode; message: string; details: RefusalDetails } {
  if (failure instanceof RequestRefused) return { code: failure.code, message: failure.message, details: failure.details };
  if (failure instanceof HeaderTooLarge) return { code: 'headers_too_large', message: failure.message, details: {} };
  if (failure instanceof QuotaExceeded || failure instanceof RateLimited || failure instanceof LimitsUnavailable) {
    return { code: failure.code, message: failure.message, details: { retryAfterSeconds: failure.retryAfterSeconds, cause: failure.cause } };
  }
  if (failure instanceof GatewayError) return { code: failure.code, message: failure.message, details: {} };
  return { code: 'internal_error', message: 'The gateway failed to handle the request', details: {} };
}

function logError(logger: Logger | undefined, response: ErrorResponse): void {
  if (logger === undefined || !logger.isLevelEnabled(response.log)) return;
  const cause = response.cause;
  // A failure of the gateway is logged with its cause and stack; a refusal with its reason only.
  const fields =
    response.status >= 500
      ? { code: response.code, status: response.status, err: cause }
      : { code: response.code, status: response.status, reason: cause instanceof Error ? cause.message : String(cause) };
  logger[response.log](fields, `request refused: ${response.code}`);
}

/**
 * The `error` member of the API's error body: the status's reason phrase, in the sentence case the
 * contract has always used (`Bad request`, `Too many requests`).
 */
function reasonPhrase(status: number): string {
  const phrases: Readonly<Record<number, string>> = { 403: 'Access denied', 500: 'Internal error' };
  const phrase = phrases[status] ?? STATUS_CODES[status] ?? 'Error';
  return phrase.charAt(0) + phrase.slice(1).toLowerCase();
}

/** RFC 9110 section 5.6.4: a quoted-string cannot hold `"`, `\` or control characters unescaped. */
function quotedStringSafe(text: string): string {
  let safe = '';
  for (const character of text) {
    const code = character.charCodeAt(0);
    safe += character === '"' || character === '\\' || code < 0x20 || code > 0x7e ? ' ' : character;
  }
  return safe;
}
