import type { Request, Response } from 'express';
import { GatewayError, SubscriptionInactive, type LimitsUnavailable, type RateLimited } from '../../domain/errors.js';
import { HeaderTooLarge } from '../../http-wire/grammar/download-request.js';
import { s3Xml } from './s3-xml.js';
import { contextOf } from '../../http-wire/request-context.js';

/**
 * How every failure of an S3 request becomes S3's answer: the one module that writes the S3
 * adapter's error responses (`<Error><Code>...`), as `error-responses.ts` is for the native API.
 * The codes and statuses are S3's own (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html),
 * so that SDKs raise the exceptions their users expect.
 */

export type S3ErrorCode =
  | 'AccessDenied'
  | 'AccessForbidden'
  | 'AuthorizationHeaderMalformed'
  | 'AuthorizationQueryParametersError'
  | 'BadRequest'
  | 'ExpiredToken'
  | 'InternalError'
  | 'InvalidAccessKeyId'
  | 'InvalidArgument'
  | 'InvalidRange'
  | 'InvalidRequest'
  | 'InvalidToken'
  | 'InvalidURI'
  | 'KeyTooLongError'
  | 'MethodNotAllowed'
  | 'NoSuchBucket'
  | 'NoSuchKey'
  | 'NotImplemented'
  | 'PreconditionFailed'
  | 'RequestHeaderSectionTooLarge'
  | 'RequestTimeTooSkewed'
  | 'ServiceUnavailable'
  | 'SignatureDoesNotMatch'
  | 'SlowDown';

export interface S3RefusalDetails {
  /** Seconds until a retry may succeed (`Retry-After`). */
  readonly retryAfterSeconds?: number;
  readonly cause?: unknown;
}

/** A refusal the S3 adapter decides itself. */
export class S3Refusal extends Error {
  constructor(
    readonly code: S3ErrorCode,
    message: string,
    readonly details: S3RefusalDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
  }
}

type LogLevel = 'debug' | 'info' | 'warn' | 'error';

interface S3ErrorEntry {
  readonly status: number;
  readonly log: LogLevel;
  /** What the caller is told when the failure's own message is not for them. */
  readonly message?: string;
}

const table: Readonly<Record<S3ErrorCode, S3ErrorEntry>> = {
  AccessDenied: { status: 403, log: 'debug' },
  // A CORS preflight the bucket's (absent) CORS rules do not allow.
  AccessForbidden: { status: 403, log: 'debug' },
  AuthorizationHeaderMalformed: { status: 400, log: 'debug' },
  AuthorizationQueryParametersError: { status: 400, log: 'debug' },
  BadRequest: { status: 400, log: 'debug' },
  ExpiredToken: { status: 400, log: 'debug' },
  InternalError: { status: 500, log: 'error', message: 'We encountered an internal error. Please try again.' },
  InvalidAccessKeyId: { status: 403, log: 'info' },
  InvalidArgument: { status: 400, log: 'debug' },
  InvalidRange: { status: 416, log: 'debug' },
  InvalidRequest: { status: 400, log: 'debug' },
  InvalidToken: { status: 400, log: 'info' },
  InvalidURI: { status: 400, log: 'debug' },
  KeyTooLongError: { status: 400, log: 'debug' },
  MethodNotAllowed: { status: 405, log: 'debug' },
  NoSuchBucket: { status: 404, log: 'debug' },
  NoSuchKey: { status: 404, log: 'debug' },
  NotImplemented: { status: 501, log: 'debug' },
  PreconditionFailed: { status: 412, log: 'debug' },
  RequestHeaderSectionTooLarge: { status: 400, log: 'info' },
  RequestTimeTooSkewed: { status: 403, log: 'info' },
  ServiceUnavailable: { status: 503, log: 'error', message: 'Storage could not be reached or failed; please try again.' },
  SignatureDoesNotMatch: { status: 403, log: 'info' },
  SlowDown: { status: 503, log: 'warn' },
};

/** Seconds to wait after a transient storage failure or a file that changed mid-request. */
const RETRY_AFTER_SECONDS = { storage: 5, changed: 1 };

/** What a failure is, in S3's terms. */
export function classifyS3Failure(failure: unknown): { code: S3ErrorCode; message: string; retryAfterSeconds?: number } {
  if (failure instanceof S3Refusal) {
    return { code: failure.code, message: failure.message, ...optionalRetry(failure.details.retryAfterSeconds) };
  }
  if (failure instanceof GatewayError) {
    switch (failure.code) {
      // The caller's own index decides, so the caller may read why (outside a release window says until when).
      case 'not_entitled':
        return { code: 'AccessDenied', message: `Access Denied: ${failure.message}` };
      case 'catalog_not_found':
        return { code: 'AccessDenied', message: 'Access Denied' };
      case 'file_not_found':
        return { code: 'NoSuchKey', message: 'The specified key does not exist.' };
      case 'invalid_path':
        return { code: 'InvalidArgument', message: failure.message };
      case 'content_changed':
        return { code: 'ServiceUnavailable', message: 'The object changed during the request; please try again.', retryAfterSeconds: RETRY_AFTER_SECONDS.changed };
      case 'storage_unavailable':
        return { code: 'ServiceUnavailable', message: table.ServiceUnavailable.message ?? '', retryAfterSeconds: RETRY_AFTER_SECONDS.storage };
      // The monthly byte quota: not SlowDown, which clients retry at once; the message names the quota.
      case 'rate_limited':
        return { code: 'SlowDown', message: `Please reduce your request rate. ${failure.message}`, ...optionalRetry((failure as RateLimited).retryAfterSeconds) };
      case 'limits_unavailable':
        return { code: 'ServiceUnavailable', message: failure.message, ...optionalRetry((failure as LimitsUnavailable).retryAfterSeconds) };
      case 'quota_exceeded':
        return { code: 'AccessDenied', message: `Access Denied: ${failure.message}` };
      case 'invalid_token':
        // A client outside its subscription term is told so, as the native API does.
        if (failure.cause instanceof SubscriptionInactive) return { code: 'AccessDenied', message: `Access Denied: ${failure.message}` };
        return { code: 'InvalidAccessKeyId', message: 'The AWS Access Key Id you provided does not exist in our records.' };
      default:
        return { code: 'InternalError', message: table.InternalError.message ?? '' };
    }
  }
  if (failure instanceof HeaderTooLarge) return { code: 'RequestHeaderSectionTooLarge', message: failure.message };
  return { code: 'InternalError', message: table.InternalError.message ?? '' };
}

function optionalRetry(seconds: number | undefined): { retryAfterSeconds?: number } {
  return seconds === undefined ? {} : { retryAfterSeconds: seconds };
}

/**
 * Writes the S3 error response for `failure`: status, `x-amz-request-id`, `Retry-After` when a
 * retry may succeed, and the XML body (none for HEAD, as S3 answers). `resource` is the request's
 * path, as S3 reports it; `errorCode` is kept for the metrics and access log.
 */
export function writeS3Error(req: Request, res: Response, failure: unknown, extra: { readonly key?: string; readonly bucket?: string } = {}): void {
  const { code, message, retryAfterSeconds } = classifyS3Failure(failure);
  const entry = table[code];
  const requestId = String(res.getHeader('X-Request-Id') ?? '');
  const shown = entry.message ?? message;
  const fields = { s3ErrorCode: code, err: failure };
  if (entry.log === 'error') req.log.error(fields, `S3 request failed: ${code}`);
  else req.log[entry.log](fields, `S3 request refused: ${code}`);
  contextOf(res).errorCode = code;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.status(entry.status);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('x-amz-request-id', requestId);
  if (retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(retryAfterSeconds));
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const body = s3Xml(
    'Error',
    {
      Code: code,
      Message: shown,
      ...(extra.key !== undefined && { Key: extra.key }),
      ...(extra.bucket !== undefined && { BucketName: extra.bucket }),
      Resource: req.originalUrl.split('?')[0] ?? '/',
      RequestId: requestId,
    },
    false,
  );
  res.setHeader('Content-Type', 'application/xml');
  res.end(body);
}
