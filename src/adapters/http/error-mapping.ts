import type { Response } from 'express';
import type { Logger } from 'pino';
import { GatewayError, StorageUnavailable, type GatewayErrorCode } from '../../domain/errors.js';

interface HttpError {
  readonly status: number;
  readonly error: string;
}

/** The one place domain outcomes become HTTP statuses and the contract's error bodies. */
const httpErrors: Record<GatewayErrorCode, HttpError> = {
  NotEntitled: { status: 403, error: 'Access denied' },
  NotFound: { status: 404, error: 'Not found' },
  CatalogNotFound: { status: 404, error: 'Not found' },
  IndexMalformed: { status: 500, error: 'Internal error' },
  InvalidPath: { status: 400, error: 'Bad request' },
  ContentChanged: { status: 503, error: 'Service unavailable' },
  StorageUnavailable: { status: 502, error: 'Bad gateway' },
  InvalidClient: { status: 401, error: 'Unauthorized' },
  InvalidToken: { status: 401, error: 'Unauthorized' },
};

/** Seconds a client should wait before retrying after a transient storage problem. */
const retryAfterSeconds = { contentChanged: 1, storageBusy: 5 };

export const bearerRealm = 'data-file-gateway';

export function sendError(res: Response, status: number, error: string, message: string, details?: string[]): void {
  res.status(status).json(details === undefined ? { error, message } : { error, message, details });
}

/** Writes the response for any error thrown while handling a request; unknown errors become a generic 500. */
export function sendMappedError(res: Response, failure: unknown, logger: Logger, context: Record<string, unknown> = {}): void {
  if (!(failure instanceof GatewayError)) {
    logger.error({ err: failure, ...context }, 'unexpected error');
    return sendError(res, 500, 'Internal error', 'The gateway failed to handle the request');
  }
  const mapped = httpErrors[failure.code];
  let { status, error } = mapped;
  switch (failure.code) {
    case 'InvalidToken':
    case 'InvalidClient':
      // RFC 6750 section 3: a request that carried a token learns why it was refused.
      res.set('WWW-Authenticate', `Bearer realm="${bearerRealm}", error="invalid_token", error_description="${failure.message}"`);
      break;
    case 'ContentChanged':
      res.set('Retry-After', String(retryAfterSeconds.contentChanged));
      logger.warn({ err: failure, ...context }, 'file changed while being served');
      break;
    case 'StorageUnavailable':
      if (failure instanceof StorageUnavailable && failure.retryable) {
        status = 503;
        error = 'Service unavailable';
        res.set('Retry-After', String(retryAfterSeconds.storageBusy));
      }
      logger.error({ err: failure, ...context }, 'storage failed');
      break;
    case 'IndexMalformed':
      logger.error({ err: failure, ...context }, 'client index is malformed');
      break;
    default:
      break;
  }
  const message =
    failure.code === 'StorageUnavailable'
      ? 'Storage could not be reached or failed; try again later'
      : failure.code === 'IndexMalformed'
        ? `The catalog index of this client could not be read: ${failure.message}`
        : failure.message;
  sendError(res, status, error, message);
}
