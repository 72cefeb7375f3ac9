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
 * The base URL that answers this request: scheme and host as Express sees them, which honours
 * `X-Forwarded-Proto` and `X-Forwarded-Host` only when `TRUST_PROXY` trusts the proxy that set them.
 * `undefined` for a request without a host (HTTP/1.0 allows none).
 */
export function requestOrigin(req: Request): string | undefined {
  const host = req.host;
  return host === undefined || host === '' ? undefined : `${req.protocol}://${host}`;
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
