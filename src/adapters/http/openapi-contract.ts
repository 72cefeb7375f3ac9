import { OpenAPIBackend, OpenAPIValidator, type AjvCustomizer, type Operation, type ParsedRequest, type Request as OpenApiRequest, type ValidationResult } from 'openapi-backend';
import type { Request } from 'express';

export type OpenApi = OpenAPIBackend;

/** What loading `openapi.yaml` produces that never changes afterwards: shared by every gateway of a process. */
interface CompiledContract {
  readonly document: OpenAPIBackend['document'];
  readonly definition: OpenAPIBackend['definition'];
  readonly router: OpenAPIBackend['router'];
  readonly validator: OpenAPIValidator;
}

/** The contract of each definition path, compiled once per process (see `loadOpenApi`). */
const compiledContracts = new Map<string, Promise<CompiledContract>>();

/**
 * Loads and checks `openapi.yaml`; every request the gateway serves is validated against it.
 *
 * The request validators of every operation are compiled here, at start-up, as before; the
 * response validators only when a response is first checked against the contract, which only the
 * tests do. Compiled eagerly, as openapi-backend does by default, they cost the gateway about 60 %
 * of its start-up CPU and some 20 MiB of memory it never used (every operation's responses and
 * response headers, one Ajv each).
 *
 * The parsed definition, its router and its compiled validators are made once per process and
 * definition path, and shared by every gateway the process starts (the test suite starts
 * hundreds; parsing and compiling took 1 to 5 s each time): they depend on the file alone, and
 * nothing changes them once made. Each call still returns an `OpenAPIBackend` of its own, since
 * the handlers a gateway registers are its own. `{ fresh: true }` compiles a contract of its own,
 * shared with no one (for a test that counts which validators were compiled).
 */
export async function loadOpenApi(definitionPath: string, options: { readonly fresh?: boolean } = {}): Promise<OpenApi> {
  let contract: Promise<CompiledContract> | undefined = options.fresh === true ? compileContract(definitionPath) : compiledContracts.get(definitionPath);
  if (contract === undefined) {
    contract = compileContract(definitionPath);
    compiledContracts.set(definitionPath, contract);
    // A failed load is not remembered, so the next start reads the file again.
    contract.catch(() => compiledContracts.delete(definitionPath));
  }
  const { document, definition, router, validator } = await contract;
  const api = new OpenAPIBackend({ definition, strict: true, validate: false, quick: false, coerceTypes: true, customizeAjv });
  api.document = document;
  api.definition = definition;
  api.router = router;
  api.validator = validator;
  api.validate = true;
  api.initialized = true;
  return api;
}

// openapi-backend's Ajv does not know `date-time`; without this, such fields would go unchecked.
const customizeAjv: AjvCustomizer = (ajv) => ajv.addFormat('date-time', isRfc3339DateTime);

async function compileContract(definitionPath: string): Promise<CompiledContract> {
  // `validate: false` only keeps init from compiling every validator; the validator is made below.
  const api = new OpenAPIBackend({ definition: definitionPath, strict: true, validate: false, quick: false, coerceTypes: true, customizeAjv });
  await api.init();
  const validator = new OpenAPIValidator({ definition: api.definition, router: api.router, lazyCompileValidators: true, coerceTypes: true, customizeAjv });
  validator.preCompileRequestValidators();
  // openapi-backend rebuilds its list of operations from the definition (lodash chains, object
  // spreads) up to three times per request while routing and validating; the definition never
  // changes once loaded, so the list is built once (measured with --cpu-prof: about 5% of the CPU
  // of a small answer).
  const operations = api.router.getOperations();
  api.router.getOperations = () => operations;
  // handleRequest parses a request once it has matched its operation, then the validator parses
  // the same request for the same operation again (lodash clones and object spreads, about a
  // quarter of openapi-backend's work per request): the second asks for what the first made.
  // handleRequest replaces that parse with one of the validated request as soon as validation ends.
  const parseRequest = api.router.parseRequest.bind(api.router);
  const parsed = new WeakMap<OpenApiRequest, { readonly operation: Operation; readonly request: ParsedRequest }>();
  api.router.parseRequest = (req, operation) => {
    if (operation === undefined) return parseRequest(req);
    const earlier = parsed.get(req);
    if (earlier?.operation === operation) return earlier.request;
    const request = parseRequest(req, operation);
    parsed.set(req, { operation, request });
    return request;
  };
  return { document: api.document, definition: api.definition, router: api.router, validator };
}

/**
 * The parts of an Express request openapi-backend looks at, with the path and method it is to match
 * (a HEAD request is matched as the GET it mirrors when the contract declares no HEAD of its own).
 */
export function toOpenApiRequest(req: Request, path: string, method: string = req.method): OpenApiRequest {
  return {
    method,
    path,
    headers: req.headers as OpenApiRequest['headers'],
    query: req.query as Exclude<OpenApiRequest['query'], undefined>,
    ...(req.body !== undefined && { body: req.body as unknown }),
  };
}

/** The request path exactly as the client sent it: not decoded, no query string. */
export function rawPathOf(req: Request): string {
  const url = req.originalUrl;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** Human-readable problems of a failed validation, e.g. `query parameter limit must be <= 10000`. */
export function describeValidationErrors(result: ValidationResult): string[] {
  return (result.errors ?? []).map((error) => {
    const where = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
    return where === '' ? `request ${error.message ?? 'is invalid'}` : `${where} ${error.message ?? 'is invalid'}`;
  });
}

/** RFC 3339 section 5.6 `date-time`, e.g. `2024-05-01T12:00:00.000Z`. */
function isRfc3339DateTime(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value) && !Number.isNaN(Date.parse(value));
}
