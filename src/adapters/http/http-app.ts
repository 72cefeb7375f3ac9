import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Operation } from 'openapi-backend';
import { pinoHttp } from 'pino-http';
import type { Logger } from 'pino';
import { InvalidPath } from '../../domain/errors.js';
import type { FileAccess } from '../../domain/file-access.js';
import type { ClientRegistry, Principal, TokenStore } from '../../domain/ports.js';
import { decodeRequestPath } from '../../domain/storage-path.js';
import { createOperationHandlers, type OperationHandler } from './api-handlers.js';
import { authenticateBearer } from './bearer-auth.js';
import { createDownloadLimiter, type DownloadRateLimit } from './download-rate-limit.js';
import { bearerRealm, sendError, sendMappedError } from './error-mapping.js';
import { describeValidationErrors, rawPathOf, toOpenApiRequest, type OpenApi } from './openapi-contract.js';
import { createTokenEndpoint, tokenBodyErrorHandler, type TokenThrottle } from './token-endpoint.js';

export interface HttpAppDependencies {
  readonly api: OpenApi;
  readonly openApiDocument: string;
  readonly files: FileAccess;
  readonly tokens: TokenStore;
  readonly registry: ClientRegistry;
  readonly logger: Logger;
  readonly tokenTtlSeconds: number;
  readonly tokenThrottle: TokenThrottle;
  readonly downloadRateLimit: DownloadRateLimit;
  /** Express's `trust proxy` setting, so throttling sees subscribers' addresses behind App Service. */
  readonly trustProxy: boolean | number | string;
}

/**
 * First path segments that belong to the API. A storage path starting with one of them is never
 * served by path; its file is reached through `/download/<symbol>`.
 */
export const reservedFirstSegments = new Set(['', 'oauth', 'catalog', 'list', 'count', 'info', 'download', 'health', 'openapi.yaml']);
const byPathOperations = new Set(['downloadByPath', 'headDownloadByPath']);

/** The Express app of the gateway: routing and validation from `openapi.yaml`, then the domain. */
export function createHttpApp(deps: HttpAppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy);
  app.set('query parser', 'simple');

  app.use(
    pinoHttp({
      logger: deps.logger,
      customProps: (_req, res) => {
        const principal = res.locals['principal'] as Principal | undefined;
        return principal === undefined ? {} : { clientId: principal.clientId };
      },
      serializers: {
        req: (req: { method: string; url: string }) => ({ method: req.method, url: req.url }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    }),
  );

  app.post(
    '/oauth/token',
    ...createTokenEndpoint({
      registry: deps.registry,
      tokenStore: deps.tokens,
      ttlSeconds: deps.tokenTtlSeconds,
      throttle: deps.tokenThrottle,
      logger: deps.logger,
      validateRequest: (req) => {
        const result = deps.api.validateRequest(toOpenApiRequest(req), 'issueToken');
        return result.valid ? undefined : describeValidationErrors(result).join('; ');
      },
    }),
  );
  app.use(tokenBodyErrorHandler);

  const handlers = createOperationHandlers({
    files: deps.files,
    limiter: createDownloadLimiter(deps.downloadRateLimit),
    logger: deps.logger,
    openApiDocument: deps.openApiDocument,
  });
  app.use((req, res, next) => {
    dispatch(deps, handlers, req, res).catch(next);
  });

  app.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(error);
    sendMappedError(res, error, deps.logger);
  });
  return app;
}

async function dispatch(deps: HttpAppDependencies, handlers: Record<string, OperationHandler>, req: Request, res: Response): Promise<void> {
  const rawPath = rawPathOf(req);
  if (!rawPath.startsWith('/')) return sendError(res, 400, 'Bad request', 'The request target must be an absolute path');
  const firstSegment = rawPath.slice(1).split('/')[0] ?? '';

  if (reservedFirstSegments.has(firstSegment)) {
    const operation = matchApiOperation(deps.api, req.method, rawPath);
    if (operation === undefined) return sendNoRoute(deps.api, req, res, rawPath);
    return runOperation(deps, handlers, operation, req, res, rawPath);
  }

  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.set('Allow', 'GET, HEAD');
    return sendError(res, 405, 'Method not allowed', `${req.method} is not allowed on files; use GET or HEAD`);
  }
  let storagePath: string;
  try {
    storagePath = decodeRequestPath(rawPath.slice(1));
  } catch (error) {
    if (error instanceof InvalidPath) return sendError(res, 400, 'Bad request', error.message);
    throw error;
  }
  // openapi-backend templates match one segment: validate against the operation with the path as one encoded segment.
  const operationId = req.method === 'HEAD' ? 'headDownloadByPath' : 'downloadByPath';
  const operation = deps.api.getOperation(operationId);
  if (operation === undefined) throw new Error(`openapi.yaml has no ${operationId} operation`);
  return runOperation(deps, handlers, operation, req, res, `/${encodeURIComponent(storagePath)}`, { path: storagePath });
}

/** The API operation for a method and path; by-path downloads never count as one. */
function matchApiOperation(api: OpenApi, method: string, rawPath: string): Operation | undefined {
  try {
    const operation = api.matchOperation({ method, path: rawPath, headers: {} });
    return operation === undefined || byPathOperations.has(operation.operationId ?? '') ? undefined : operation;
  } catch {
    return undefined;
  }
}

function sendNoRoute(api: OpenApi, req: Request, res: Response, rawPath: string): void {
  const allowed = ['GET', 'HEAD', 'POST'].filter((method) => method !== req.method && matchApiOperation(api, method, rawPath) !== undefined);
  if (allowed.length > 0) {
    res.set('Allow', allowed.join(', '));
    return sendError(res, 405, 'Method not allowed', `${req.method} is not allowed on ${rawPath}`);
  }
  sendError(res, 404, 'Not found', `No route ${req.method} ${rawPath}`);
}

async function runOperation(
  deps: HttpAppDependencies,
  handlers: Record<string, OperationHandler>,
  operation: Operation,
  req: Request,
  res: Response,
  validatedPath: string,
  decodedParams?: Record<string, string>,
): Promise<void> {
  const request = toOpenApiRequest(req, validatedPath);
  let params: Record<string, string>;
  try {
    const validation = deps.api.validateRequest(request, operation);
    if (!validation.valid) {
      return sendError(res, 400, 'Bad request', 'The request does not match the API contract', describeValidationErrors(validation));
    }
    params = decodedParams ?? (deps.api.router.parseRequest(request, operation).params as Record<string, string>);
  } catch (error) {
    if (error instanceof URIError) return sendError(res, 400, 'Bad request', 'The request path is not validly percent-encoded');
    throw error;
  }

  let principal: Principal | undefined;
  if (requiresBearer(deps.api, operation)) {
    const authentication = await authenticateBearer(req, deps.tokens);
    if (authentication.kind === 'missing') {
      // RFC 6750 section 3.1: no error code when the request carried no credentials at all.
      res.set('WWW-Authenticate', `Bearer realm="${bearerRealm}"`);
      return sendError(res, 401, 'Unauthorized', 'A bearer token is required: get one from POST /oauth/token');
    }
    if (authentication.kind === 'rejected') return sendMappedError(res, authentication.error, deps.logger);
    principal = authentication.principal;
    res.locals['principal'] = principal;
  }

  const handler = handlers[operation.operationId ?? ''];
  if (handler === undefined) throw new Error(`No handler for operation ${operation.operationId ?? '(unnamed)'}`);
  await handler({ req, res, principal, params });
}

function requiresBearer(api: OpenApi, operation: Operation): boolean {
  const security = operation.security ?? api.definition.security ?? [];
  return security.length > 0;
}
