import { expect } from 'chai';
import type { Operation } from 'openapi-backend';
import { loadOpenApi, type OpenApi } from '../../src/adapters/http/openapi-contract.js';
import { createRouteMatcher } from '../../src/adapters/http/routing.js';
import { openApiDefinitionPath } from '../../src/app/package-root.js';

/** A response as the tests see it: status, lower-cased headers and the raw body. */
export interface HttpResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

let contract: Promise<OpenApi> | undefined;
export const openApi = (): Promise<OpenApi> => (contract ??= loadOpenApi(openApiDefinitionPath()));
let router: Promise<(method: string, rawPath: string) => Operation | undefined> | undefined;

/** Every operation and status seen by a contract-checked test in this mocha run. */
export const coveredResponses = new Set<string>();

/** The operation of `openapi.yaml` that a request addresses, from the gateway's own router. */
export async function operationFor(method: string, rawPath: string): Promise<Operation | undefined> {
  router ??= openApi().then(createRouteMatcher);
  return (await router)(method.toUpperCase(), rawPath.split('?')[0] ?? rawPath);
}

/**
 * Fails unless the response is one `openapi.yaml` declares for this request: a declared status, a
 * JSON body matching its schema, every required header present and every declared header of the
 * declared type. Requests that match no operation (404/405 routing answers) are only checked for a
 * JSON error body.
 */
export async function expectMatchesContract(method: string, rawPath: string, response: HttpResponse): Promise<void> {
  const api = await openApi();
  const operation = await operationFor(method, rawPath);
  const where = `${method} ${rawPath} -> ${response.status}`;
  if (operation === undefined) {
    expect(response.status, where).to.be.oneOf([404, 405]);
    return;
  }
  const declared = operation.responses?.[String(response.status)];
  expect(declared, `${where}: status not declared for ${operation.operationId}`).to.not.equal(undefined);
  if (declared === undefined || '$ref' in declared) return;
  coveredResponses.add(`${operation.operationId} ${response.status}`);

  for (const [name, header] of Object.entries(declared.headers ?? {})) {
    if (!('$ref' in header) && header.required === true) {
      expect(response.headers[name.toLowerCase()], `${where}: required header ${name}`).to.not.equal(undefined);
    }
  }
  const headerCheck = api.validateResponseHeaders(response.headers, operation, { statusCode: response.status });
  expect(headerCheck.errors ?? [], `${where}: headers ${JSON.stringify(headerCheck.errors)}`).to.deep.equal([]);

  const content = declared.content ?? {};
  if (Object.keys(content).length === 0 || method.toUpperCase() === 'HEAD' || response.status === 304) {
    expect(response.body.length, `${where}: body must be empty`).to.equal(0);
    return;
  }
  if ('application/json' in content) {
    expect(String(response.headers['content-type']), `${where}: content type`).to.match(/^application\/json/);
    const bodyCheck = api.validateResponse(JSON.parse(response.body.toString('utf8')), operation, response.status);
    expect(bodyCheck.errors ?? [], `${where}: body ${JSON.stringify(bodyCheck.errors)}`).to.deep.equal([]);
  }
}
