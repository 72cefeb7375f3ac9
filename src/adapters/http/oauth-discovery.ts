import type { Request } from 'express';
import { RequestRefused } from './error-responses.js';

/**
 * The discovery documents a consumer or an OAuth library reads from the gateway's base URL alone:
 * where the token endpoint is and how to authenticate there (RFC 8414), and which authorization
 * server protects this API (RFC 9728). The gateway is both, so both name the same base URL.
 */

/** RFC 8414 section 2, as far as a client-credentials-only server has anything to say. */
export interface AuthorizationServerMetadata {
  readonly issuer: string;
  readonly token_endpoint: string;
  readonly grant_types_supported: readonly string[];
  readonly token_endpoint_auth_methods_supported: readonly string[];
  /** REQUIRED by RFC 8414; empty, because there is no authorization endpoint. */
  readonly response_types_supported: readonly string[];
  readonly service_documentation: string;
}

/** RFC 9728 section 2. */
export interface ProtectedResourceMetadata {
  readonly resource: string;
  readonly authorization_servers: readonly string[];
  readonly bearer_methods_supported: readonly string[];
  readonly resource_name: string;
  readonly resource_documentation: string;
}

/** `baseUrl` is an origin without a trailing slash, e.g. `https://files.example.net`. */
export function authorizationServerMetadata(baseUrl: string): AuthorizationServerMetadata {
  return {
    issuer: baseUrl,
    token_endpoint: `${baseUrl}/oauth/token`,
    grant_types_supported: ['client_credentials'],
    // RFC 6749 section 2.3.1: HTTP Basic, or the credentials in the body; the token endpoint takes both.
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    response_types_supported: [],
    service_documentation: `${baseUrl}/docs`,
  };
}

export function protectedResourceMetadata(baseUrl: string): ProtectedResourceMetadata {
  return {
    // RFC 9728 section 3.3: the identifier is the URL the metadata was fetched from, less the well-known part.
    resource: baseUrl,
    authorization_servers: [baseUrl],
    // RFC 6750 section 2.1 only: tokens in a query or form body would end up in logs and histories.
    bearer_methods_supported: ['header'],
    resource_name: 'Data File Gateway',
    resource_documentation: `${baseUrl}/docs`,
  };
}

/**
 * A host as a URL's authority may name it (RFC 3986 section 3.2.2): a DNS name or IPv4 address, or
 * an IPv6 literal in brackets, and an optional port. Nothing else (no `/`, `?`, `#`, `@`, spaces),
 * so a hostile `Host` cannot turn an issuer or a link into someone else's URL. Character classes
 * that cannot overlap: linear time.
 */
const AUTHORITY = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/;
/** Longer than any DNS name (253) with a port. */
const MAX_AUTHORITY_LENGTH = 300;

/** Whether `host` (a `Host` or `X-Forwarded-Host` value) is a host and optional port, and nothing more. */
export function isValidAuthority(host: string): boolean {
  if (host.length > MAX_AUTHORITY_LENGTH) return false;
  const match = AUTHORITY.exec(host);
  return match !== null && (match[1] === undefined || Number(match[1]) <= 65535);
}

/**
 * The base URL that answers this request: scheme and host as Express sees them, which honours
 * `X-Forwarded-Proto` and `X-Forwarded-Host` only when `TRUST_PROXY` trusts the proxy that set them.
 * `undefined` for a request without a host (HTTP/1.0 allows none). A scheme other than `http` or
 * `https`, or a host that is not a host and port, is refused: it would end up in an issuer or a link.
 */
export function requestOrigin(req: Request): string | undefined {
  const host = req.host;
  if (host === undefined || host === '') return undefined;
  const scheme = req.protocol;
  if (scheme !== 'http' && scheme !== 'https') {
    throw new RequestRefused('invalid_request', 'X-Forwarded-Proto must be http or https');
  }
  if (!isValidAuthority(host)) {
    throw new RequestRefused('invalid_request', 'The Host (or X-Forwarded-Host) header must be a host name or address with an optional port');
  }
  return `${scheme}://${host}`;
}

/**
 * The origin absolute URLs of this gateway are built on (discovery documents, links the gateway
 * signs): PUBLIC_BASE_URL when set, otherwise the request's own; refused for a request without a host.
 */
export function publicOrigin(publicBaseUrl: string | undefined, req: Request): string {
  const origin = publicBaseUrl ?? requestOrigin(req);
  if (origin === undefined) throw new RequestRefused('invalid_request', 'The request names no host, so the base URL is unknown (the operator can set PUBLIC_BASE_URL)');
  return origin;
}
