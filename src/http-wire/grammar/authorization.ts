/**
 * The `Authorization` header's two schemes: `Bearer` for the API (RFC 6750 section 2.1) and
 * `Basic` for client authentication at the token endpoint (RFC 6749 section 2.3.1). The patterns
 * are anchored and their repeated parts cannot overlap, so matching is linear in the header's length.
 */

/** RFC 6750 section 2.1: `Bearer` followed by a b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const BEARER_SCHEME = /^Bearer(?:\s|$)/i;
const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i;

/** What a request's `Authorization` header offers as a bearer token. */
export type BearerCredentials =
  | { readonly kind: 'none' }
  | { readonly kind: 'malformed' }
  | { readonly kind: 'token'; readonly token: string };

/** The bearer token of an `Authorization` header; other schemes count as no bearer credentials. */
export function parseBearerAuthorization(authorization: string | undefined): BearerCredentials {
  if (authorization === undefined || !BEARER_SCHEME.test(authorization)) return { kind: 'none' };
  const match = BEARER.exec(authorization);
  return match === null ? { kind: 'malformed' } : { kind: 'token', token: match[1] ?? '' };
}

export interface BasicCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
}

/**
 * Client credentials from an HTTP Basic `Authorization` header (RFC 6749 section 2.3.1: id and
 * secret are form-urlencoded, then joined with `:` and base64-encoded). `undefined` when the
 * header is not Basic or not well formed.
 */
export function parseBasicCredentials(authorization: string): BasicCredentials | undefined {
  const match = BASIC.exec(authorization);
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  try {
    return {
      clientId: decodeFormComponent(decoded.slice(0, colon)),
      clientSecret: decodeFormComponent(decoded.slice(colon + 1)),
    };
  } catch {
    return undefined;
  }
}

function decodeFormComponent(value: string): string {
  return decodeURIComponent(value.replaceAll('+', ' '));
}
