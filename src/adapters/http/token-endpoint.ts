import OAuth2Server, { OAuthError, Request as OAuthRequest, Response as OAuthResponse } from '@node-oauth/oauth2-server';
import type { ClientCredentialsModel, Token } from '@node-oauth/oauth2-server';
import express, { type NextFunction, type Request, type Response, type RequestHandler } from 'express';
import { rateLimit, ipKeyGenerator, type Store } from 'express-rate-limit';
import type { Logger } from 'pino';
import type { ClientRecord, ClientRegistry, TokenStore } from '../../domain/ports.js';
import { hashSecret, verifySecret } from '../clients/secret-hash.js';
import { parseBasicCredentials } from './basic-credentials.js';

export interface TokenThrottle {
  /** Failed token requests allowed per client id within the window; ten times as many per address. */
  readonly failuresPerClient: number;
  readonly windowSeconds: number;
  readonly store?: () => Store;
}

export interface TokenEndpointOptions {
  readonly registry: ClientRegistry;
  readonly tokenStore: TokenStore;
  readonly ttlSeconds: number;
  readonly throttle: TokenThrottle;
  readonly logger: Logger;
  /** Checks the request against `openapi.yaml`; returns what is wrong, or nothing. */
  readonly validateRequest: (req: Request) => string | undefined;
}

type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'unsupported_grant_type' | 'unauthorized_client' | 'invalid_grant' | 'invalid_scope';

interface ClientWithRecord {
  id: string;
  grants: string[];
  record: ClientRecord;
}

/** RFC 6749 section 5.1: token responses and their errors must not be cached. */
function noStore(res: Response): void {
  res.set('Cache-Control', 'no-store');
  res.set('Pragma', 'no-cache');
}

function sendOAuthError(res: Response, status: 400 | 401, error: OAuthErrorCode, description: string): void {
  noStore(res);
  // RFC 9110 section 15.5.2: every 401 carries a challenge; RFC 6749 section 5.2 allows it to name
  // the supported client authentication scheme even when the client authenticated in the body.
  if (status === 401) res.set('WWW-Authenticate', 'Basic realm="data-file-gateway", charset="UTF-8"');
  res.status(status).json({ error, error_description: description });
}

/**
 * `POST /oauth/token`: the OAuth 2.0 client credentials grant (RFC 6749 section 4.4), on
 * `@node-oauth/oauth2-server`. This adapter adds what the contract wants beyond the library: JSON
 * bodies, `invalid_client` always as 401, one client authentication method per request, a fixed
 * `expires_in`, and throttling of failed attempts per client id and per address.
 */
export function createTokenEndpoint(options: TokenEndpointOptions): RequestHandler[] {
  const server = new OAuth2Server({
    model: oauthModel(options),
    accessTokenLifetime: options.ttlSeconds,
    requireClientAuthentication: { client_credentials: true },
  });

  const throttled = (name: string, limit: number, key: (req: Request) => string) =>
    rateLimit({
      windowMs: options.throttle.windowSeconds * 1000,
      limit,
      identifier: name,
      standardHeaders: false,
      legacyHeaders: false,
      skipSuccessfulRequests: true,
      keyGenerator: key,
      ...(options.throttle.store !== undefined && { store: options.throttle.store() }),
      handler: (req, res) => {
        const resetTime = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
        const retryAfter = resetTime === undefined ? options.throttle.windowSeconds : Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000));
        options.logger.warn({ limiter: name, clientId: requestedClientId(req) }, 'token requests throttled after repeated failures');
        res.set('Retry-After', String(retryAfter));
        noStore(res);
        res.status(429).json({ error: 'Too many requests', message: `Too many failed token requests; retry in ${retryAfter} seconds` });
      },
    });

  const parseBody: RequestHandler[] = [
    express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 20 }),
    express.json({ limit: '4kb' }),
  ];

  const handle = async (req: Request, res: Response): Promise<void> => {
    const problem = options.validateRequest(req);
    if (problem !== undefined) return sendOAuthError(res, 400, 'invalid_request', problem);
    const body: unknown = req.body;
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
      return sendOAuthError(res, 400, 'invalid_request', 'The body must be application/x-www-form-urlencoded or a JSON object');
    }
    const fields = body as Record<string, unknown>;
    const nonString = Object.entries(fields).find(([, value]) => typeof value !== 'string');
    if (nonString !== undefined) return sendOAuthError(res, 400, 'invalid_request', `Parameter "${nonString[0]}" must be a string`);

    // Only the client credentials grant exists here. Checked before the client's credentials, so
    // other grants get `unsupported_grant_type` (RFC 6749 section 5.2) and junk costs no scrypt.
    const grantType = fields['grant_type'];
    if (grantType === undefined || grantType === '') return sendOAuthError(res, 400, 'invalid_request', 'Missing parameter: grant_type');
    if (grantType !== 'client_credentials') {
      return sendOAuthError(res, 400, 'unsupported_grant_type', 'Only the client_credentials grant is supported');
    }

    const authorization = req.get('authorization');
    const basic = authorization === undefined ? undefined : parseBasicCredentials(authorization);
    if (authorization !== undefined && basic === undefined) {
      return sendOAuthError(res, 401, 'invalid_client', 'The Authorization header is not valid HTTP Basic client authentication');
    }
    // RFC 6749 section 2.3: a client must not use more than one authentication method per request.
    if (basic !== undefined && (fields['client_secret'] !== undefined || (fields['client_id'] !== undefined && fields['client_id'] !== basic.clientId))) {
      return sendOAuthError(res, 400, 'invalid_request', 'Use either HTTP Basic or client_id/client_secret in the body, not both');
    }

    // The library reads form bodies only, and Basic credentials without the RFC's form-decoding:
    // hand it both as form parameters.
    const { authorization: _authorization, ...headers } = flattenHeaders(req);
    const oauthRequest = new OAuthRequest({
      method: 'POST',
      query: {},
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: basic === undefined ? fields : { ...fields, client_id: basic.clientId, client_secret: basic.clientSecret },
    });
    try {
      const token = (await server.token(oauthRequest, new OAuthResponse())) as Token;
      noStore(res);
      res.status(200).json({ access_token: token.accessToken, token_type: 'Bearer', expires_in: options.ttlSeconds });
      options.logger.info({ clientId: (token.client as ClientWithRecord).id }, 'token issued');
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      const { status, code, description } = translateOAuthError(error);
      if (code === 'invalid_client') options.logger.warn({ clientId: requestedClientId(req) }, 'token refused: invalid client');
      sendOAuthError(res, status, code, description);
    }
  };

  return [
    throttled('token-failures-per-address', options.throttle.failuresPerClient * 10, (req) => ipKeyGenerator(req.ip ?? '')),
    ...parseBody,
    throttled('token-failures-per-client', options.throttle.failuresPerClient, (req) => `client:${requestedClientId(req) ?? ''}`),
    (req, res, next) => {
      handle(req, res).catch(next);
    },
  ];
}

/** Body parser failures (malformed JSON, oversized or badly encoded bodies) on the token endpoint. */
export function tokenBodyErrorHandler(error: unknown, req: Request, res: Response, next: NextFunction): void {
  if (req.path !== '/oauth/token' || res.headersSent) return next(error);
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return sendOAuthError(res, 400, 'invalid_request', 'The request body could not be read as a form or a JSON object');
  }
  next(error);
}

function oauthModel(options: TokenEndpointOptions): ClientCredentialsModel {
  // Unknown clients still cost one scrypt verification, so response times do not reveal which ids exist.
  const decoyHash = hashSecret('decoy secret that no client has');
  return {
    async getClient(clientId: string, clientSecret: string) {
      const client = await options.registry.find(clientId);
      const matches = await verifySecret(clientSecret, client?.secretHash ?? (await decoyHash));
      if (client === undefined || !matches || !client.enabled) return false;
      const found: ClientWithRecord = { id: client.clientId, grants: ['client_credentials'], record: client };
      return found;
    },
    async getUserFromClient(client) {
      return { id: client.id };
    },
    async generateAccessToken(client) {
      return (await options.tokenStore.issue((client as ClientWithRecord).record)).accessToken;
    },
    async saveToken(token, client, user) {
      return { ...token, client, user };
    },
    async getAccessToken() {
      return false;
    },
  };
}

function translateOAuthError(error: OAuthError): { status: 400 | 401; code: OAuthErrorCode; description: string } {
  const description = error.message;
  switch (error.name) {
    case 'invalid_client':
      return { status: 401, code: 'invalid_client', description: 'Client authentication failed: unknown client, wrong secret or disabled client' };
    case 'invalid_request':
      // A secret with characters no secret can have is simply a wrong secret.
      if (description.includes('`client_secret`') && description.startsWith('Invalid parameter')) {
        return { status: 401, code: 'invalid_client', description: 'Client authentication failed: unknown client, wrong secret or disabled client' };
      }
      return { status: 400, code: 'invalid_request', description };
    case 'unsupported_grant_type':
    case 'unauthorized_client':
    case 'invalid_grant':
    case 'invalid_scope':
      return { status: 400, code: error.name, description };
    default:
      // The library wraps the model's own failures (registry unreadable, storage down) in a
      // server_error: hand the original to the error mapping, which knows what it means.
      throw (error as OAuthError & { inner?: unknown }).inner ?? error;
  }
}

function requestedClientId(req: Request): string | undefined {
  const authorization = req.get('authorization');
  if (authorization !== undefined) return parseBasicCredentials(authorization)?.clientId;
  const body: unknown = req.body;
  if (body !== null && typeof body === 'object' && typeof (body as Record<string, unknown>)['client_id'] === 'string') {
    return (body as Record<string, string>)['client_id'];
  }
  return undefined;
}

function flattenHeaders(req: Request): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers[name] = value;
    else if (Array.isArray(value)) headers[name] = value.join(', ');
  }
  return headers;
}
