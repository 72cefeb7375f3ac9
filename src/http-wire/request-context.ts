import type { Response } from 'express';
import type { Logger } from 'pino';
import type { Principal } from '../domain/ports.js';

declare module 'http' {
  interface IncomingMessage {
    /** The request's logger: every line it writes carries the request's `requestId`. */
    log: Logger;
  }
}

/**
 * What the doors learn of one request as it is answered, typed, for the response observer (the
 * request metrics) and the request log: which operation it was, who asked, and how it was refused.
 * One per response, kept beside it (never string keys on `res.locals`), gone with it.
 */
export interface RequestContext {
  /** The request's id, echoed in `X-Request-Id` and carried by every log line of the request. */
  requestId: string | undefined;
  /** The operation answered: an `openapi.yaml` operationId, or the S3 API's (`s3:GetObject`). */
  operationId: string | undefined;
  /** Who asked, once authenticated. */
  principal: Principal | undefined;
  /** The error code of a non-2xx answer (the native API's `code`, or S3's `Code`). */
  errorCode: string | undefined;
  /** The reason a refusal (4xx) is counted under. */
  refusalReason: string | undefined;
}

const contexts = new WeakMap<Response, RequestContext>();

/** The context of the request `res` answers, made on first use. */
export function contextOf(res: Response): RequestContext {
  let context = contexts.get(res);
  if (context === undefined) {
    context = { requestId: undefined, operationId: undefined, principal: undefined, errorCode: undefined, refusalReason: undefined };
    contexts.set(res, context);
  }
  return context;
}
