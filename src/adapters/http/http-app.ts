import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Context } from 'openapi-backend';
import { pinoHttp } from 'pino-http';
import type { Logger } from 'pino';
import type { ClientAuthentication } from '../../domain/client-authentication.js';
import { InvalidToken } from '../../domain/errors.js';
import type { FileAccess } from '../../application/file-access.js';
import type { ClientRegistry, Clock, Principal, Signer } from '../../domain/ports.js';
import type { AuditTrail } from '../audit/audit-trail.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { createS3Api } from '../s3/s3-api.js';
import type { S3Credentials } from '../s3/s3-credentials.js';
import { createOperationHandlers, type OperationHandler } from './api-handlers.js';
import type { CountedVersionsFactory } from './counted-versions.js';
import { DownloadBudget } from './download-budget.js';
import type { DirectLinkIssuer } from './download-handler.js';
import { createApiReferenceAssets } from './api-reference.js';
import type { DownloadQuota } from './download-quota.js';
import { renderErrors, RequestRefused } from './error-responses.js';
import { parseBearerAuthorization } from './grammar/authorization.js';
import { markTokenRequest, observeResponses, requestIdOf } from './observability.js';
import { describeValidationErrors, rawPathOf, toOpenApiRequest, type OpenApi } from './openapi-contract.js';
import {
  createDownloadLimiter,
  createTokenIssueLimit,
  registeredClients,
  TokenFailureThrottle,
  type DownloadRateLimit,
  type TokenFailureLimits,
  type TokenIssueLimit,
} from './rate-limits.js';
import type { ListCursors } from './list-cursors.js';
import type { PortalSettings } from './portal.js';
import { allowedMethods, byPathOperations, createRequestTargeting, createRouteMatcher, type RequestTarget } from './routing.js';
import type { SignedLinks } from './signed-links.js';
import { createTokenIssuer, requestedClientId, tokenRequestBodyParsers } from './token-endpoint.js';
import type { VerificationQueue } from './verification-queue.js';

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
  readonly downloadRateLimit: DownloadRateLimit;
  /** Where the file versions already counted within the download window are kept (one per client and file). */
  readonly countedVersions: CountedVersionsFactory;
  /** The monthly byte quota of downloads and links. */
  readonly quota: DownloadQuota;
  /** How long a download may make no progress before it is cut. */
  readonly downloadIdleTimeoutMs: number;
  readonly audit: AuditTrail;
  readonly metrics: GatewayMetrics;
  /** The bearer token `GET /metrics` requires; the route does not exist without it. */
  readonly metricsToken: string | undefined;
  readonly readiness: { report(): Promise<{ readonly ready: boolean; readonly reasons: readonly string[] }> };
  /**
   * Direct links (DOWNLOAD_LINKS=on): who makes them, and for how long; `signedLinks` when the
   * gateway serves them itself (`/download/signed/<name>`). Neither route exists when absent.
   */
  readonly links: { readonly issue: DirectLinkIssuer; readonly ttlMs: number } | undefined;
  readonly signedLinks: SignedLinks | undefined;
  /** The subscriber portal (`/portal`); none of its routes exist when `undefined` (PORTAL=off). */
  readonly portal: PortalSettings | undefined;
  /** Express's `trust proxy` setting, so throttling sees subscribers' addresses behind App Service. */
  readonly trustProxy: boolean | number | string;
  /** The issuer of the discovery documents (`PUBLIC_BASE_URL`); derived from each request when `undefined`. */
  readonly publicBaseUrl: string | undefined;
  /**
   * The read-only S3-compatible API (S3_API=on): its bucket, credentials and the signer of its
   * continuation tokens; off when `undefined`.
   */
  readonly s3: { readonly bucket: string; readonly credentials: S3Credentials; readonly signer: Signer } | undefined;
  /** Makes and checks the `cursor` of `GET /list`. */
  readonly listCursors: ListCursors;
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
  app.use(
    pinoHttp({
      logger: deps.logger,
      // Every log line of a request carries its id, which the response echoes in X-Request-Id.
      genReqId: requestIdOf,
      customAttributeKeys: { reqId: 'requestId' },
      // req.log carries `requestId` alone (not the whole request) on every line a handler writes.
      quietReqLogger: true,
      customProps: (_req, res) => {
        const principal = (res as Response).locals['principal'] as Principal | undefined;
        return principal === undefined ? {} : { clientId: principal.clientId };
      },
      serializers: {
        // Never headers (Authorization), never a body, never a query value: a client may put a
        // secret or a token there (`?client_secret=`, `?access_token=`), which logs must not keep.
        req: (req: { method: string; url: string }) => ({ method: req.method, url: redactQuery(req.url) }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    }),
  );

  app.use(observeResponses({ audit: deps.audit, metrics: deps.metrics }));

  // The token endpoint's steps before its operation handler: read the body (bounded), then the
  // client's issued-token budget, checked before any secret is verified.
  app.post(
    '/oauth/token',
    markTokenRequest,
    ...tokenRequestBodyParsers(),
    createTokenIssueLimit(deps.tokenIssueLimit, requestedClientId, registeredClients(deps.registry)),
  );

  // One download budget per client, whichever API the download comes through.
  const downloadBudget = new DownloadBudget(
    createDownloadLimiter(deps.downloadRateLimit),
    deps.countedVersions(deps.downloadRateLimit.windowSeconds * 1000),
  );
  if (deps.s3 !== undefined) {
    app.use(
      createS3Api({
        bucket: deps.s3.bucket,
        files: deps.files,
        credentials: deps.s3.credentials,
        budget: downloadBudget,
        quota: deps.quota,
        clock: deps.clock,
        idleTimeoutMs: deps.downloadIdleTimeoutMs,
        signer: deps.s3.signer,
      }),
    );
  }
  app.use(createContractRouter(deps, downloadBudget));
  app.use(renderErrors);
  return app;
}

/**
 * The Express middleware that hands every request to openapi-backend, wired to the gateway's
 * handlers. Whatever they refuse or fail with is passed on to `renderErrors`.
 */
function createContractRouter(
  deps: HttpAppDependencies,
  downloadBudget: DownloadBudget,
): (req: Request, res: Response, next: NextFunction) => Promise<void> {
  const { api } = deps;
  const targetOf = createRequestTargeting(api);
  const routeOf = createRouteMatcher(api);
  const handlers = createOperationHandlers({
    files: deps.files,
    budget: downloadBudget,
    quota: deps.quota,
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
    portal: deps.portal,
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
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).status(200).json(await deps.s3.credentials.issueTemporary(principal, claims));
  };

  type Handler = (context: Context, req: Request, res: Response) => Promise<void> | void;
  const toApiHandler =
    (handler: OperationHandler): Handler =>
    (context, req, res) =>
      handler({
        req,
        res,
        principal: res.locals['principal'] as Principal | undefined,
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
      const target = res.locals['target'] as RequestTarget;
      const noRoute =
        (operationId !== undefined && byPathOperations.has(operationId) && target.kind !== 'file') ||
        // Metrics exist only when METRICS_TOKEN is set.
        (operationId === 'getMetrics' && deps.metricsToken === undefined) ||
        // Temporary S3 credentials only with S3_API=on.
        (operationId === 'issueS3Credentials' && deps.s3 === undefined) ||
        // Links only with DOWNLOAD_LINKS=on, and signed ones only when the gateway serves them.
        (operationId === 'getDownloadLink' && deps.links === undefined) ||
        (operationId !== undefined && signedLinkOperations.has(operationId) && deps.signedLinks === undefined) ||
        (operationId !== undefined && portalOperations.has(operationId) && deps.portal === undefined);
      if (noRoute) throw new RequestRefused('route_not_found', `No route ${context.request.method.toUpperCase()} ${target.matchPath}`);
      if (operationId !== undefined) res.locals['operationId'] = operationId;
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
    res.locals['principal'] = principal;
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
    res.locals['target'] = target;
    if (target.kind === 'file') res.locals['rawStoragePath'] = target.rawStoragePath;
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

/** Query parameters whose values are logged: the API's own that never carry credentials (not a link's `token`). */
const loggedQueryParameters = new Set(['limit', 'modifiedSince', 'redirect']);

const signedLinkOperations: ReadonlySet<string> = new Set(['downloadBySignedLink', 'headDownloadBySignedLink']);

/** The routes under `/portal`, which PORTAL=off removes. */
const portalOperations: ReadonlySet<string> = new Set(['getPortal', 'getPortalAsset', 'getPortalConfig', 'getPortalDownloadLink']);

/** `url` with the value of every query parameter but the API's own replaced by `[redacted]`. */
export function redactQuery(url: string): string {
  const question = url.indexOf('?');
  if (question === -1) return url;
  const parameters = url
    .slice(question + 1)
    .split('&')
    .map((parameter) => {
      const equals = parameter.indexOf('=');
      const name = equals === -1 ? parameter : parameter.slice(0, equals);
      return equals === -1 || loggedQueryParameters.has(name) ? parameter : `${name}=[redacted]`;
    });
  return `${url.slice(0, question)}?${parameters.join('&')}`;
}

function needsBearer(security: ReadonlyArray<Record<string, unknown>> | undefined): boolean {
  return (security ?? []).some((requirement) => 'bearerAuth' in requirement);
}
