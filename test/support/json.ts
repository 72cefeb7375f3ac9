import type { HttpResponse } from './contract.js';

/** The gateway's JSON error body (`Error` in openapi.yaml). */
export interface ErrorBody {
  readonly error: string;
  readonly message: string;
  readonly code: string;
  readonly details?: readonly string[];
}

/** The token endpoint's RFC 6749 section 5.2 error body (`OAuthError` in openapi.yaml). */
export interface OAuthErrorBody {
  readonly error: string;
  readonly error_description: string;
  readonly code: string;
}

/** A response's body parsed as JSON; the type is the caller's claim, checked by the contract test. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary response shapes
export function jsonOf<T = any>(response: Pick<HttpResponse, 'body'>): T {
  return JSON.parse(response.body.toString('utf8')) as T;
}
