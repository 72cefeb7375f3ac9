import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { apiReferenceAssetNames } from '../../src/adapters/http/api-reference.js';
import { packageRoot } from '../../src/app/package-root.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { openApi, type HttpResponse } from '../support/contract.js';
import { buildPortal } from '../support/portal-build.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf } from '../support/json.js';

/*
 * RFC 9110 section 9.3.2: "The HEAD method is identical to GET except that the server MUST NOT send
 * content in the response", and the server "SHOULD send the same header fields in response to a
 * HEAD request as it would have sent if the request method had been GET". Every GET operation of
 * openapi.yaml is tried, each response checked against the contract (as the GET operation's).
 */

const acme = { clientId: 'acme', secret: 'acme-secret-acme-secret' };
const metricsToken = 'metrics-token-0123456789abcdef';

/** Headers that differ between any two requests, whatever the method. */
const perRequestHeaders = new Set(['date', 'x-request-id', 'ratelimit', 'ratelimit-policy', 'connection', 'keep-alive']);
/** Answers that change between two requests (the metrics count the first; a link is made anew): their length may too. */
const changingAnswers = new Set(['getMetrics', 'getDownloadLink']);

function comparableHeaders(response: HttpResponse, operationId: string): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(response.headers).filter(
      ([name]) => !perRequestHeaders.has(name) && !(name === 'content-length' && changingAnswers.has(operationId)),
    ),
  );
}

describe('HEAD on every GET operation of openapi.yaml (RFC 9110 section 9.3.2)', function () {
  let gateway: TestGateway;
  let signedLinkPath: string;
  /** A file of the portal's build. */
  let portalAsset: string;

  before(async function () {
    // GET /portal is one of the GET operations: it serves the portal of these sources, built once per run.
    this.timeout(120_000);
    await buildPortal();
    portalAsset = (await readdir(join(packageRoot(), 'dist', 'portal', 'assets')))[0] ?? '';
    const store = new MemoryBlobStore();
    store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'FILE', FileName: 'data/file.csv' })]));
    store.put('data/file.csv', 'date,value\n2024-01-02,1\n');
    gateway = await startGateway({
      store,
      clients: [acme],
      env: { METRICS_TOKEN: metricsToken, DOWNLOAD_LINKS: 'on', DOWNLOAD_RATE_LIMIT: '1000' },
    });
    const link = jsonOf<{ url: string }>(await gateway.get('acme', '/link/FILE'));
    const url = new URL(link.url);
    signedLinkPath = `${url.pathname}${url.search}`;
  });

  after(async function () {
    await gateway?.close();
  });

  /** A request path for an operation's template, with values the gateway above serves. */
  function examplePath(template: string): string {
    if (template === '/download/signed/{name}') return signedLinkPath;
    if (template === '/portal/assets/{asset}') return `/portal/assets/${portalAsset}`;
    return template
      .replace('{symbol}', 'FILE')
      .replace('{asset}', apiReferenceAssetNames[0] ?? 'api-reference.js')
      .replace('{path}', 'data/file.csv');
  }

  function credentialsFor(security: ReadonlyArray<Record<string, unknown>> | undefined): 'metrics' | 'client' | 'none' {
    const schemes = (security ?? []).flatMap((requirement) => Object.keys(requirement));
    if (schemes.includes('metricsToken')) return 'metrics';
    return schemes.length > 0 ? 'client' : 'none';
  }

  it('finds the GET operations of the contract (16 today)', async function () {
    const gets = (await openApi()).getOperations().filter((operation) => operation.method === 'get');
    expect(gets.length).to.be.at.least(16);
  });

  it('answers each with the status and headers of GET, and no content', async function () {
    const operations = (await openApi()).getOperations().filter((operation) => operation.method === 'get');
    for (const operation of operations) {
      const operationId = operation.operationId ?? operation.path;
      const path = examplePath(operation.path);
      const send = async (method: 'GET' | 'HEAD'): Promise<HttpResponse> => {
        switch (credentialsFor(operation.security)) {
          case 'metrics':
            return gateway.request(method, path, { headers: { authorization: `Bearer ${metricsToken}` } });
          case 'client':
            return gateway.get('acme', path, {}, method);
          case 'none':
            return gateway.request(method, path);
        }
      };
      const get = await send('GET');
      const head = await send('HEAD');
      expect(get.status, `GET ${path}`).to.equal(200);
      expect(head.status, `HEAD ${path} (${operationId})`).to.equal(get.status);
      expect(head.body.length, `HEAD ${path}`).to.equal(0);
      expect(comparableHeaders(head, operationId), `HEAD ${path} headers`).to.deep.equal(comparableHeaders(get, operationId));
    }
  });

  it('lists HEAD in the Allow header of a 405 wherever GET is allowed', async function () {
    const response = await gateway.request('POST', '/catalog');
    expect(response.status).to.equal(405);
    expect(response.headers['allow']).to.equal('GET, HEAD');
  });

  it('answers HEAD on an unknown API path with 404, as GET', async function () {
    expect((await gateway.request('HEAD', '/catalog/nothing')).status).to.equal(404);
  });
});
