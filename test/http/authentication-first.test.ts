import { expect } from 'chai';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { openApi } from '../support/contract.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody } from '../support/json.js';

/**
 * RFC 6750 section 3.1 and the contract: on every operation that needs a bearer token, the token is
 * checked before anything else about the request, so a caller without a valid token learns nothing
 * but "401" (and cannot probe which paths or parameters the API accepts).
 */

/** A request to `template` that is wrong in more than its credentials: parameters out of bounds and an unknown query parameter. */
function invalidRequestTo(template: string): string {
  const path = template
    .replace('{symbol}', 'X'.repeat(300))
    .replace('{path}', 'data/../../outside/secret.txt');
  return `${path}?access_token=leaked&limit=0`;
}

describe('authentication before validation, on every operation that needs a token', function () {
  let gateway: TestGateway;
  let token: string;
  const operations: Array<{ method: string; path: string; operationId: string }> = [];

  before(async function () {
    const store = new MemoryBlobStore();
    store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'data/a.csv' })]));
    store.put('data/a.csv', 'a\n');
    // Every optional route on, so that it is checked too.
    gateway = await startGateway({ store, clients: [{ clientId: 'acme', secret: 'acme-secret-acme-secret' }], env: { DOWNLOAD_LINKS: 'on', S3_API: 'on' } });
    token = await gateway.tokenFor('acme');
    const api = await openApi();
    for (const operation of api.getOperations()) {
      const security = operation.security ?? api.definition.security ?? [];
      if (security.some((requirement) => 'bearerAuth' in requirement)) {
        operations.push({ method: operation.method.toUpperCase(), path: operation.path, operationId: operation.operationId ?? '' });
      }
    }
  });

  after(async function () {
    await gateway?.close();
  });

  it('finds the protected operations in openapi.yaml', function () {
    expect(operations.map((operation) => operation.operationId)).to.include.members([
      'getCatalog',
      'listFiles',
      'countFiles',
      'getFileInfo',
      'downloadBySymbol',
      'headDownloadBySymbol',
      'downloadByPath',
      'headDownloadByPath',
      'getDownloadLink',
    ]);
  });

  it('answers each invalid request 401 without a token, 401 invalid_token with a bad one, and 400 only with a valid one', async function () {
    for (const { method, path, operationId } of operations) {
      const target = invalidRequestTo(path);
      const where = `${operationId}: ${method} ${target.slice(0, 60)}`;

      const anonymous = await gateway.request(method, target);
      expect(anonymous.status, where).to.equal(401);
      expect(anonymous.headers['www-authenticate'], where).to.equal('Bearer realm="data-file-gateway"');
      if (method !== 'HEAD') expect(jsonOf<ErrorBody>(anonymous).code, where).to.equal('missing_token');

      const forged = await gateway.request(method, target, { headers: { authorization: 'Bearer not.a.token' } });
      expect(forged.status, where).to.equal(401);
      expect(String(forged.headers['www-authenticate']), where).to.match(/error="invalid_token"/);

      const authenticated = await gateway.request(method, target, { headers: { authorization: `Bearer ${token}` } });
      expect(authenticated.status, `${where} with a valid token`).to.equal(400);
    }
  });

  describe('GET /catalog?access_token=... without a bearer header (a token in the query is not accepted)', function () {
    it('responds 401 with the Bearer challenge, not 400 about the query', async function () {
      const response = await gateway.request('GET', `/catalog?access_token=${token}`);
      expect(response.status).to.equal(401);
      expect(response.headers['www-authenticate']).to.equal('Bearer realm="data-file-gateway"');
    });
  });

  describe('a path parameter with a malformed percent-encoding (/info/%zz)', function () {
    it('responds 401 without a token', async function () {
      const response = await gateway.request('GET', '/info/%zz');
      expect(response.status).to.equal(401);
      expect(jsonOf<ErrorBody>(response).code).to.equal('missing_token');
    });

    it('responds 400 invalid_request with a valid token', async function () {
      const response = await gateway.request('GET', '/info/%zz', { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).to.equal(400);
      expect(jsonOf<ErrorBody>(response).code).to.equal('invalid_request');
    });
  });

  describe('an unsafe storage path', function () {
    it('responds 401 without a token and 400 invalid_path with one', async function () {
      expect((await gateway.request('GET', '/data/%2e%2e/x')).status).to.equal(401);
      const response = await gateway.request('GET', '/data/%2e%2e/x', { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).to.equal(400);
      expect(jsonOf<ErrorBody>(response).code).to.equal('invalid_path');
    });
  });
});
