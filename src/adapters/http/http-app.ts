import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Context } from 'openapi-backend';
import type { Logger } from 'pino';
import type { ClientAuthentication } from '../../application/client-authentication.js';
import { InvalidToken } from '../../domain/errors.js';
import type { Downloads } from '../../application/downloads.js';
import type { FileAccess } from '../../application/file-access.js';
import type { Metering } from '../../application/metering.js';
import type { Webhooks } from '../../application/webhooks.js';
import type { BoundedMemory, ClientRegistry, Clock, Principal, VerifiedToken } from '../../domain/ports.js';
import type { EventSink } from '../../application/events.js';
import type { Registry } from 'prom-client';
import { createOperationHandlers, type OperationHandler } from './api-handlers.js';
import type { DirectLinks } from './download-handler.js';
import { createApiReferenceAssets } from './api-reference.js';
import { renderErrors, RequestRefused } from './error-responses.js';
import { parseBearerAuthorization } from '../../http-wire/grammar/authorization.js';
import { defineRequestLoggers, markTokenRequest, observeResponses, type RequestObserver } from './observability.js';
import { describeValidationErrors, rawPathOf, toOpenApiRequest, type OpenApi } from './openapi-contract.js';
import {
  createTokenIssueLimit,
  registeredClients,
  TokenFailureThrottle,
  type TokenFailureLimits,
  type TokenIssueLimit,
} from './rate-limits.js';
import type { ChangeFeed } from '../../application/change-feed.js';
import type { ChangeCursors } from './change-cursors.js';
import type { ListCursors } from './list-cursors.js';
import type { PortalSettings } from './portal.js';
import { allowedMethods, byPathOperations, createRequestTargeting, createRouteMatcher, type RequestTarget } from './routing.js';
import type { SignedLinks } from './signed-links.js';
import { createTokenIssuer, requestedClientId, tokenRequestBodyParsers } from './token-endpoint.js';
import type { VerificationQueue } from './verification-queue.js';
import { contextOf } from '../../http-wire/request-context.js';

/** Temporary S3 credentials for a caller proven by a bearer token (`POST /oauth/s3-credentials`). */
export type S3CredentialIssuer = (principal: Principal, token: VerifiedToken) => Promise<object>;

export interface HttpAppDependencies {
  readonly api: OpenApi;
  readonly openApiDocument: string;
  readonly files: FileAccess;
  readonly auth: ClientAuthentication;
  /** Which client ids limits may name (only registered ones; others count by address). */
  readonly registry: ClientRegistry;
  /** Where secret verifications wait their address's turn. */
  readonly verifications: VerificationQueue;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly tokenFailureLimits: TokenFailureLimits;
  readonly tokenIssueLimit: TokenIssueLimit;
  /** The download use cases every door shares. */
  readonly downloads: Downloads;
  /** What downloads cost a client (the monthly quota of `GET /account`). */
  readonly metering: Metering;
  /** How long a download may make no progress before it is cut. */
  readonly downloadIdleTimeoutMs: number;
  /** Where the core's events go (the audit trail and the metrics subscribe): the token endpoint reports its answers there. */
  readonly events: EventSink;
  /** What is counted of every answer, and the Prometheus registry `GET /metrics` exposes. */
  readonly metrics: RequestObserver & { readonly registry: Registry };
  /** The bearer token `GET /metrics` requires; the route does not exist without it. */
  readonly metricsToken: string | undefined;
  readonly readiness: { report(): Promise<{ readonly ready: boolean; readonly reasons: readonly string[] }> };
  /**
   * Direct links (DOWNLOAD_LINKS=on): who makes them, and for how long; `signedLinks` when the
   * gateway serves them itself (`/download/signed/<name>`). Neither route exists when absent.
   */
  readonly links: DirectLinks | undefined;
  readonly signedLinks: SignedLinks | undefined;
  /** The subscriber portal (`/portal`); none of its routes exist when `undefined` (PORTAL=off). */
  readonly portal: PortalSettings | undefined;
  /** Express's `trust proxy` setting, so throttling sees subscribers' addresses behind App Service. */
  readonly trustProxy: boolean | number | string;
  /** The issuer of the discovery documents (`PUBLIC_BASE_URL`); derived from each request when `undefined`. */
  readonly publicBaseUrl: string | undefined;
  /**
   * The read-only S3-compatible API (S3_API=on), a door of its own wired in `src/app`: it answers the
   * requests that carry a Signature Version 4 before the native API sees them; off when `undefined`.
   */
  readonly s3: { readonly door: RequestHandler; readonly issueCredentials: S3CredentialIssuer } | undefined;
  /** Makes and checks the `cursor` of `GET /list`. */
  readonly listCursors: ListCursors;
  /** Where serialized answers worth keeping are kept (the catalogs' bounded memory, CATALOG_CACHE_MB). */
  readonly keptAnswers: BoundedMemory;
  /** A subscriber's own webhook endpoints (`/webhooks`); the routes do not exist when `undefined`. */
  readonly webhooks: Webhooks | undefined;
  /** The change feed (`GET /changes`) and its cursors. */
  readonly changes: ChangeFeed;
  readonly changeCursors: ChangeCursors;
}

/**
 * The Express app of the gateway. openapi-backend is the router: it matches every request to an
 * operation of `openapi.yaml` (404 and 405 otherwise), authenticates it with the bearer security
 * handler, then validates it (so a request without a valid token gets 401 whatever else is wrong
 * with it), then runs the operation's handler. Every refusal is written by `error-responses.ts`.
 */
export function createHttpApp(deps: HttpAppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy);
  app.set('query parser', 'simple');

  // Fetch's `nosniff`: browsers take every answer, a stored file included, as the type it says it is.
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  // Every request's id (X-Request-Id), its log line, metrics and audit; `req.log` for the lines a
  // handler writes, each carrying `requestId` alone (never the request's headers or body).
  defineRequestLoggers(app.request, deps.logger);
  app.use(observeResponses({ events: deps.events, requests: deps.metrics, logger: deps.logger }));

  // The token endpoint's steps before its operation handler: read the body (bounded), then the
  // client's issued-token budget, checked before any secret is verified.
  app.post(
    '/oauth/token',
    markTokenRequest,
    ...tokenRequestBodyParsers(),
    createTokenIssueLimit(deps.tokenIssueLimit, requestedClientId, registeredClients(deps.registry)),
  );

  // `POST /webhooks {"url"}`: a small JSON body, read before the contract validates it.
  app.post('/webhooks', webhookBodyParser);

  if (deps.s3 !== undefined) app.use(deps.s3.door);
  app.use(createContractRouter(deps));
  app.use(renderErrors);
  return app;
}

/**
 * The Express middleware that hands every request to openapi-backend, wired to the gateway's
 * handlers. Whatever they refuse or fail with is passed on to `renderErrors`.
 */
function createContractRouter(deps: HttpAppDependencies): (req: Request, res: Response, next: NextFunction) => Promise<void> {
  const { api } = deps;
  const targetOf = createRequestTargeting(api);
  const routeOf = createRouteMatcher(api);
  const handlers = createOperationHandlers({
    files: deps.files,
    downloads: deps.downloads,
    metering: deps.metering,
    clock: deps.clock,
    idleTimeoutMs: deps.downloadIdleTimeoutMs,
    readiness: deps.readiness,
    metricsRegistry: deps.metrics.registry,
    openApiDocument: deps.openApiDocument,
    apiReferenceAsset: createApiReferenceAssets(),
    publicBaseUrl: deps.publicBaseUrl,
    issueToken: createTokenIssuer(deps.auth, new TokenFailureThrottle(deps.tokenFailureLimits, registeredClients(deps.registry)), deps.verifications),
    links: deps.links,
    signedLinks: deps.signedLinks,
    linkHolder: (clientId) => deps.auth.linkHolder(clientId),
    listCursors: deps.listCursors,
    changes: deps.changes,
    changeCursors: deps.changeCursors,
    portal: deps.portal,
    keptAnswers: deps.keptAnswers,
    webhooks: deps.webhooks,
  });

  const authenticate = async (req: Request): Promise<Principal> => {
    const credentials = parseBearerAuthorization(req.get('authorization'));
    if (credentials.kind === 'none') {
      throw new RequestRefused('missing_token', 'A bearer token is required: get one from POST /oauth/token');
    }
    if (credentials.kind === 'malformed') throw new InvalidToken('The Authorization header is not a well-formed bearer token');
    return deps.auth.verifyToken(credentials.token);
  };

  /** `POST /oauth/s3-credentials`: temporary S3 credentials, valid no longer than the bearer token. */
  const issueS3Credentials: OperationHandler = async ({ req, res }) => {
    if (deps.s3 === undefined) throw new Error('The S3 API is off: the route should not exist');
    const credentials = parseBearerAuthorization(req.get('authorization'));
    if (credentials.kind !== 'token') throw new InvalidToken('The Authorization header is not a well-formed bearer token');
    const { principal, claims } = await deps.auth.verifyTokenClaims(credentials.token);
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).status(200).json(await deps.s3.issueCredentials(principal, claims));
  };

  type Handler = (context: Context, req: Request, res: Response) => Promise<void> | void;
  const toApiHandler =
    (handler: OperationHandler): Handler =>
    (context, req, res) =>
      handler({
        req,
        res,
        principal: contextOf(res).principal,
        target: routedTargets.get(res),
        params: context.request.params as Record<string, string>,
      });

  api.register({
    ...Object.fromEntries(Object.entries(handlers).map(([operationId, handler]) => [operationId, toApiHandler(handler)])),
    issueS3Credentials: toApiHandler(issueS3Credentials),
    notFound: (_context: Context, req: Request) => {
      throw new RequestRefused('route_not_found', `No route ${req.method} ${rawPathOf(req)}`);
    },
    methodNotAllowed: (_context: Context, req: Request) => {
      const rawPath = rawPathOf(req);
      throw new RequestRefused('method_not_allowed', `${req.method} is not allowed on ${rawPath}`, { allow: allowedMethods(routeOf, rawPath) });
    },
    postRoutingHandler: (context: Context, _req: Request, res: Response) => {
      const operationId = context.operation?.operationId;
      // `/{path}` also matches a one-segment API path such as `/%63atalog`; those are no file.
      const target = routedTargets.get(res) as RequestTarget;
      const noRoute =
        (operationId !== undefined && byPathOperations.has(operationId) && target.kind !== 'file') ||
        // Metrics exist only when METRICS_TOKEN is set.
        (operationId === 'getMetrics' && deps.metricsToken === undefined) ||
        // Temporary S3 credentials only with S3_API=on.
        (operationId === 'issueS3Credentials' && deps.s3 === undefined) ||
        // Links only with DOWNLOAD_LINKS=on, and signed ones only when the gateway serves them.
        (operationId === 'getDownloadLink' && deps.links === undefined) ||
        (operationId !== undefined && signedLinkOperations.has(operationId) && deps.signedLinks === undefined) ||
        (operationId !== undefined && portalOperations.has(operationId) && deps.portal === undefined) ||
        (operationId !== undefined && webhookOperations.has(operationId) && deps.webhooks === undefined);
      if (noRoute) throw new RequestRefused('route_not_found', `No route ${context.request.method.toUpperCase()} ${target.matchPath}`);
      if (operationId !== undefined) contextOf(res).operationId = operationId;
    },
    unauthorizedHandler: (context: Context) => {
      // The refusal of the operation's own scheme (`bearerAuth`, or `metricsToken` on /metrics).
      const results = context.security as Record<string, { error?: unknown } | undefined>;
      const refusal = ['bearerAuth', 'metricsToken'].map((scheme) => results[scheme]?.error).find((error) => error !== undefined);
      throw refusal ?? new RequestRefused('missing_token', 'A bearer token is required');
    },
    validationFail: (context: Context) => {
      const problems = describeValidationErrors(context.validation);
      throw context.operation?.operationId === 'issueToken'
        ? new RequestRefused('invalid_request', problems.join('; '), { oauth: true })
        : new RequestRefused('invalid_request', 'The request does not match the API contract', { validation: problems });
    },
  });
  api.registerSecurityHandler('bearerAuth', async (_context: Context, req: Request, res: Response) => {
    const principal = await authenticate(req);
    contextOf(res).principal = principal;
    // The client's request budget, before the operation costs storage anything.
    await deps.metering.admitRequest(principal.clientId);
    return principal;
  });
  api.registerSecurityHandler('metricsToken', (_context: Context, req: Request) => {
    const credentials = parseBearerAuthorization(req.get('authorization'));
    if (credentials.kind === 'none') throw new RequestRefused('missing_token', 'The metrics token is required');
    if (credentials.kind !== 'token' || !sameSecret(credentials.token, deps.metricsToken ?? '')) {
      throw new InvalidToken('The metrics token is not valid');
    }
    return true;
  });

  return async (req, res, next) => {
    const rawPath = rawPathOf(req);
    if (!rawPath.startsWith('/')) return next(new RequestRefused('invalid_request', 'The request target must be an absolute path'));
    const target = targetOf(rawPath);
    routedTargets.set(res, target);
    try {
      // HEAD runs the GET operation where only a GET is declared; Express and Node send its status
      // and headers without the body (RFC 9110 section 9.3.2).
      const method = req.method === 'HEAD' ? (routeOf('HEAD', rawPath)?.method.toUpperCase() ?? 'HEAD') : req.method;
      await api.handleRequest(toOpenApiRequest(req, target.matchPath, method), req, res);
    } catch (error) {
      if (!(error instanceof URIError)) return next(error);
      // openapi-backend decodes path parameters before its security handlers run; such a request
      // still authenticates first, so that without a valid token it gets 401 like any other.
      if (needsBearer(routeOf(req.method, rawPath)?.security)) {
        try {
          await authenticate(req);
        } catch (authenticationFailure) {
          return next(authenticationFailure);
        }
      }
      next(new RequestRefused('invalid_request', 'The request path is not validly percent-encoded'));
    }
  };
}

/** Compares two secrets in constant time, whatever their lengths (their SHA-256 digests are compared). */
function sameSecret(presented: string, expected: string): boolean {
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return expected !== '' && timingSafeEqual(digest(presented), digest(expected));
}

/** The target each response's request addresses, as the router parsed it (the raw storage path of a file). */
const routedTargets = new WeakMap<Response, RequestTarget>();

const signedLinkOperations: ReadonlySet<string> = new Set(['downloadBySignedLink', 'headDownloadBySignedLink']);

/** The routes under `/portal`, which PORTAL=off removes. */
const portalOperations: ReadonlySet<string> = new Set(['getPortal', 'getPortalAsset', 'getPortalConfig', 'getPortalDownloadLink']);

/** The routes of `/webhooks`, which exist only when the gateway delivers webhooks. */
const webhookOperations: ReadonlySet<string> = new Set(['listWebhooks', 'createWebhook', 'deleteWebhook']);

/** The body of `POST /webhooks`: JSON of at most 8 KiB (a URL is at most 2048 characters); what cannot be read is a 400. */
const webhookJsonParser = express.json({ limit: '8kb' });
const webhookBodyParser: RequestHandler = (req, res, next) => {
  webhookJsonParser(req, res, (error?: unknown) => {
    if (error === undefined) return next();
    next(new RequestRefused('invalid_request', 'The request body could not be read as a JSON object of at most 8 KiB', { closeConnection: true, cause: error }));
  });
};

function needsBearer(security: ReadonlyArray<Record<string, unknown>> | undefined): boolean {
  return (security ?? []).some((requirement) => 'bearerAuth' in requirement);
}
