import OAuth2Server, {
  InvalidClientError,
  InvalidGrantError,
  InvalidRequestError,
  InvalidScopeError,
  OAuthError,
  Request as OAuthRequest,
  Response as OAuthResponse,
  ServerError,
  UnauthorizedClientError,
  UnsupportedGrantTypeError,
} from '@node-oauth/oauth2-server';
import type { Client, ClientCredentialsModel } from '@node-oauth/oauth2-server';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { ClientAuthentication, IssuedToken } from '../../application/client-authentication.js';
import { InvalidClient } from '../../domain/errors.js';
import type { ClientRecord } from '../../domain/ports.js';
import { RequestRefused, type HttpErrorCode } from './error-responses.js';
import { parseBasicCredentials } from '../../http-wire/grammar/authorization.js';
import { addressOf, type FailureReservation, type TokenFailureThrottle } from './rate-limits.js';
import type { VerificationQueue } from './verification-queue.js';

/**
 * `POST /oauth/token`: the OAuth 2.0 client credentials grant (RFC 6749 section 4.4), run by
 * `@node-oauth/oauth2-server` over a model whose client check is the domain's `ClientAuthentication`.
 *
 * Before the library: the body is read as a form or (a documented extension) a JSON object, and a
 * request using two client authentication methods is refused (RFC 6749 section 2.3). After it: its
 * errors become the contract's, by class (`invalid_client` always 401 with a challenge), and a
 * failure of the registry the model hides in a `ServerError` is handed on as itself.
 */

interface GatewayClient extends Client {
  readonly record: ClientRecord;
}

/** A token request is a few short parameters; a body larger than this is refused unread. */
const TOKEN_BODY_LIMIT_BYTES = 4096;

/**
 * The longest client id looked up. The registry's ids are at most 64 characters (`clients add`);
 * a longer one is `invalid_client` at once, without a registry lookup or a secret verification
 * (no id that long exists, so answering faster tells nothing).
 */
export const MAX_CLIENT_ID_LENGTH = 256;

/**
 * The body parsers of the token endpoint; a body they cannot read is an OAuth `invalid_request`.
 * A body announced larger than the limit is refused at once, without waiting for it (body-parser
 * would read a refused body to its end first, holding the connection as long as the client likes),
 * and the connection is then closed.
 */
export function tokenRequestBodyParsers(): RequestHandler[] {
  const refuseAnnouncedOversize: RequestHandler = (req, _res, next) => {
    const announced = Number(req.get('content-length') ?? '0');
    if (!(announced > TOKEN_BODY_LIMIT_BYTES)) return next();
    next(
      new RequestRefused('invalid_request', `The request body is larger than ${TOKEN_BODY_LIMIT_BYTES} bytes`, {
        oauth: true,
        closeConnection: true,
      }),
    );
  };
  const refuseUnreadable =
    (parser: RequestHandler): RequestHandler =>
    (req: Request, res: Response, next: NextFunction) => {
      parser(req, res, (error?: unknown) => {
        if (error === undefined) return next();
        next(
          new RequestRefused('invalid_request', 'The request body could not be read as a form or a JSON object', {
            oauth: true,
            closeConnection: true,
            cause: error,
          }),
        );
      });
    };
  return [
    refuseAnnouncedOversize,
    refuseUnreadable(express.urlencoded({ extended: false, limit: TOKEN_BODY_LIMIT_BYTES, parameterLimit: 20 })),
    refuseUnreadable(express.json({ limit: TOKEN_BODY_LIMIT_BYTES })),
  ];
}

/** The client id a token request names, from HTTP Basic or the parsed body (for throttling and logs). */
export function requestedClientId(req: Request): string | undefined {
  const authorization = req.get('authorization');
  if (authorization !== undefined) return parseBasicCredentials(authorization)?.clientId;
  const body: unknown = req.body;
  if (isRecord(body) && typeof body['client_id'] === 'string') return body['client_id'];
  return undefined;
}

export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
}

/** What the model learnt while the library ran one token request. */
interface GrantState {
  /** A secret was verified and refused (not: no secret at all, or a registry failure). */
  secretRejected: boolean;
  issued: IssuedToken | undefined;
}

/**
 * Runs the grant for an Express request whose body the parsers above have read and `openapi.yaml`
 * has validated. Resolves to the token response; throws a `RequestRefused` or domain error that the
 * error renderer writes. A wrong secret's place is reserved in `throttle` before the secret is
 * verified, and the verification waits its address's turn in `verifications`.
 */
export function createTokenIssuer(
  auth: ClientAuthentication,
  throttle: TokenFailureThrottle,
  verifications: VerificationQueue,
): (req: Request) => Promise<TokenResponse> {
  return async (req) => {
    const fields = bodyFields(req);
    const authorization = req.get('authorization');
    const basic = authorization === undefined ? undefined : parseBasicCredentials(authorization);
    if (authorization !== undefined && basic === undefined) {
      throw new InvalidClient('The Authorization header is not valid HTTP Basic client authentication');
    }
    // RFC 6749 section 2.3: a client must not use more than one authentication method per request.
    if (basic !== undefined && (fields['client_secret'] !== undefined || (fields['client_id'] !== undefined && fields['client_id'] !== basic.clientId))) {
      throw new RequestRefused('invalid_request', 'Use either HTTP Basic or client_id/client_secret in the body, not both', { oauth: true });
    }
    const clientId = basic?.clientId ?? fields['client_id'];
    if (clientId !== undefined && clientId.length > MAX_CLIENT_ID_LENGTH) {
      throw new InvalidClient('Client authentication failed: unknown client, wrong secret or disabled client');
    }
    const address = addressOf(req);
    const reservation: FailureReservation | undefined = clientId === undefined ? undefined : await throttle.reserve(req, clientId);

    // The library reads form bodies only, and Basic credentials without the RFC's form-decoding:
    // hand it both as form parameters.
    const form = basic === undefined ? fields : { ...fields, client_id: basic.clientId, client_secret: basic.clientSecret };
    const oauthRequest = new OAuthRequest({
      method: 'POST',
      query: {},
      // The library checks the media type the way type-is does: a body must be announced.
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': String(new URLSearchParams(form).toString().length),
      },
      body: form,
    });
    const state: GrantState = { secretRejected: false, issued: undefined };
    // One server per request (it only holds options), so that its model reports on this request alone.
    const server = new OAuth2Server({
      model: oauthModel(state, (id, secret) => verifications.run(address, () => auth.authenticate(id, secret)), auth),
      // The library needs the lifetime to compute `accessTokenExpiresAt`; the token itself, and the
      // `expires_in` answered, come from the domain's `IssuedToken`.
      accessTokenLifetime: auth.tokenLifetimeSeconds,
      requireClientAuthentication: { client_credentials: true },
    });
    try {
      await server.token(oauthRequest, new OAuthResponse());
    } catch (error) {
      // Only a secret verified and found wrong keeps its place.
      if (!state.secretRejected) await reservation?.release();
      throw contractError(error);
    }
    await reservation?.release();
    if (state.issued === undefined) throw new Error('The token model issued no token');
    return { access_token: state.issued.accessToken, token_type: 'Bearer', expires_in: state.issued.expiresIn };
  };
}

function oauthModel(
  state: GrantState,
  authenticate: (clientId: string, secret: string) => Promise<ClientRecord>,
  auth: ClientAuthentication,
): ClientCredentialsModel {
  return {
    async getClient(clientId: string, clientSecret: string) {
      try {
        const record = await authenticate(clientId, clientSecret);
        const client: GatewayClient = { id: record.clientId, grants: ['client_credentials'], record };
        return client;
      } catch (error) {
        // The library turns a falsy client into its `invalid_client` error.
        if (!(error instanceof InvalidClient)) throw error;
        state.secretRejected = true;
        return false;
      }
    },
    async getUserFromClient(client) {
      // The client credentials grant acts for the client itself (RFC 6749 section 4.4).
      return { id: client.id };
    },
    async generateAccessToken(client) {
      state.issued = await auth.issueToken((client as GatewayClient).record);
      return state.issued.accessToken;
    },
    async saveToken(token, client, user) {
      return { ...token, client, user };
    },
    async getAccessToken() {
      // Bearer tokens are verified by `ClientAuthentication`, never through the library.
      return false;
    },
  };
}

/** The library's errors, by class, as the contract's; a `ServerError` hands on what the model threw. */
function contractError(error: unknown): unknown {
  if (!(error instanceof OAuthError)) return error;
  if (error instanceof ServerError) return (error as ServerError & { inner?: unknown }).inner ?? error;
  if (error instanceof InvalidClientError) {
    return new InvalidClient('Client authentication failed: unknown client, wrong secret or disabled client');
  }
  const codes: ReadonlyArray<[new (...args: never[]) => OAuthError, HttpErrorCode]> = [
    [InvalidRequestError, 'invalid_request'],
    [UnsupportedGrantTypeError, 'unsupported_grant_type'],
    // Every client may use client_credentials, the only grant this server offers; the library's
    // other built-in grants (password, authorization_code, refresh_token) reach no client, so its
    // "client not authorized for this grant" means, here, that the grant type is not supported.
    [UnauthorizedClientError, 'unsupported_grant_type'],
    [InvalidGrantError, 'invalid_grant'],
    [InvalidScopeError, 'invalid_scope'],
  ];
  const code = codes.find(([type]) => error instanceof type)?.[1];
  return code === undefined ? error : new RequestRefused(code, error.message, { oauth: true, cause: error });
}

/** The body's parameters, all strings; anything else is an OAuth `invalid_request`. */
function bodyFields(req: Request): Record<string, string> {
  const body: unknown = req.body;
  if (!isRecord(body)) {
    throw new RequestRefused('invalid_request', 'The body must be application/x-www-form-urlencoded or a JSON object', { oauth: true });
  }
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    if (typeof value !== 'string') throw new RequestRefused('invalid_request', `Parameter "${name}" must be a string`, { oauth: true });
    fields[name] = value;
  }
  return fields;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
