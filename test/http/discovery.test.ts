import { connect } from 'node:net';
import { expect } from 'chai';
import * as oauth from 'oauth4webapi';
import { apiReferenceAssetNames } from '../../src/adapters/http/api-reference.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody } from '../support/json.js';

const acme = { clientId: 'acme', secret: 'acme-secret-acme-secret' };

function seededStore(): MemoryBlobStore {
  const store = new MemoryBlobStore();
  store.put(
    'indexes/acme.csv',
    buildIndexCsv([
      buildIndexRow({ Symbol: 'CURVE', FileName: 'rates/curve.csv' }),
      buildIndexRow({ Symbol: 'DOCS_FILE', FileName: 'docs/readme.csv' }),
      buildIndexRow({ Symbol: 'WELL_KNOWN_FILE', FileName: '.well-known/security.txt' }),
    ]),
  );
  store.put('rates/curve.csv', 'date,rate\n');
  store.put('docs/readme.csv', 'a\n');
  store.put('.well-known/security.txt', 'Contact: x\n');
  return store;
}

const asMetadataPath = '/.well-known/oauth-authorization-server';
const resourceMetadataPath = '/.well-known/oauth-protected-resource';

describe('discovery for consumers', function () {
  describe('without PUBLIC_BASE_URL', function () {
    let gateway: TestGateway;
    before(async function () {
      gateway = await startGateway({ store: seededStore(), clients: [acme] });
    });
    after(async function () {
      await gateway?.close();
    });

    describe(`GET ${asMetadataPath} (RFC 8414)`, function () {
      it('names the issuer from the Host header and the token endpoint under it (section 2)', async function () {
        const response = await gateway.request('GET', asMetadataPath, { headers: { host: 'files.example.net' } });

        expect(response.status).to.equal(200);
        expect(jsonOf(response)).to.deep.equal({
          issuer: 'http://files.example.net',
          token_endpoint: 'http://files.example.net/oauth/token',
          grant_types_supported: ['client_credentials'],
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
          response_types_supported: [],
          service_documentation: 'http://files.example.net/docs',
        });
      });

      it('is never stored by a cache, since it was built from the request', async function () {
        const response = await gateway.request('GET', asMetadataPath);

        expect(response.headers['cache-control']).to.equal('no-store');
      });

      it('ignores X-Forwarded-Proto and X-Forwarded-Host when TRUST_PROXY is off', async function () {
        const response = await gateway.request('GET', asMetadataPath, {
          headers: { host: 'files.example.net', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' },
        });

        expect(jsonOf(response).issuer).to.equal('http://files.example.net');
      });

      it('answers a request without a Host header (HTTP/1.0) with 400, having no base URL to name', async function () {
        const raw = await new Promise<string>((resolve, reject) => {
          const socket = connect(gateway.port, '127.0.0.1', () => socket.end(`GET ${asMetadataPath} HTTP/1.0\r\n\r\n`));
          let text = '';
          socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          socket.on('end', () => resolve(text)).on('error', reject);
        });

        expect(raw).to.match(/^HTTP\/1\.1 400 /);
        expect(raw).to.include('"code":"invalid_request"');
      });

      for (const host of ['evil.example/path', 'evil.example?x=1', 'evil.example#x', 'user@evil.example', 'evil.example:99999', 'evil.example:', 'a b.example', '"><script>', `${'a'.repeat(300)}.example`]) {
        it(`answers a Host header that is not a host and port (${JSON.stringify(host.slice(0, 40))}) with 400 invalid_request, naming no issuer`, async function () {
          for (const path of [asMetadataPath, resourceMetadataPath]) {
            const response = await gateway.request('GET', path, { headers: { host } });

            expect(response.status).to.equal(400);
            expect(jsonOf<ErrorBody>(response).code).to.equal('invalid_request');
            expect(response.body.toString()).to.not.include('evil');
          }
        });
      }

      it('accepts an IPv6 literal and a port as the Host', async function () {
        const response = await gateway.request('GET', asMetadataPath, { headers: { host: '[::1]:8080' } });

        expect(jsonOf(response).issuer).to.equal('http://[::1]:8080');
      });

      it('answers a query parameter with 400 invalid_request', async function () {
        const response = await gateway.request('GET', `${asMetadataPath}?client_id=acme`);

        expect(response.status).to.equal(400);
        expect(jsonOf<ErrorBody>(response).code).to.equal('invalid_request');
      });
    });

    describe(`GET ${resourceMetadataPath} (RFC 9728)`, function () {
      it('names the resource and its authorization server, the same base URL (section 2)', async function () {
        const response = await gateway.request('GET', resourceMetadataPath, { headers: { host: 'files.example.net:8443' } });

        expect(response.status).to.equal(200);
        expect(jsonOf(response)).to.deep.equal({
          resource: 'http://files.example.net:8443',
          authorization_servers: ['http://files.example.net:8443'],
          bearer_methods_supported: ['header'],
          resource_name: 'Data File Gateway',
          resource_documentation: 'http://files.example.net:8443/docs',
        });
      });

      it('answers a query parameter with 400 invalid_request', async function () {
        const response = await gateway.request('GET', `${resourceMetadataPath}?x=1`);

        expect(response.status).to.equal(400);
      });
    });

    describe('an OAuth library given the base URL alone (oauth4webapi)', function () {
      it('discovers the token endpoint, gets a token with client_secret_basic and reads /catalog with it', async function () {
        const issuer = new URL(gateway.baseUrl);
        const options = { algorithm: 'oauth2' as const, [oauth.allowInsecureRequests]: true };

        const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, options));
        const client: oauth.Client = { client_id: acme.clientId };
        const tokenResponse = await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic(acme.secret), {}, options);
        const token = await oauth.processClientCredentialsResponse(as, client, tokenResponse);
        const catalog = await gateway.request('GET', '/catalog', { headers: { authorization: `Bearer ${token.access_token}` } });

        expect(as.token_endpoint).to.equal(`${gateway.baseUrl}/oauth/token`);
        expect(token.token_type).to.equal('bearer');
        expect(catalog.status).to.equal(200);
      });

      it('gets a token with client_secret_post, the other announced method', async function () {
        const issuer = new URL(gateway.baseUrl);
        const options = { algorithm: 'oauth2' as const, [oauth.allowInsecureRequests]: true };
        const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, options));
        const client: oauth.Client = { client_id: acme.clientId };

        const tokenResponse = await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretPost(acme.secret), {}, options);
        const token = await oauth.processClientCredentialsResponse(as, client, tokenResponse);

        expect(token.access_token).to.be.a('string').and.not.equal('');
      });
    });

    describe('GET /docs', function () {
      it('serves the reference page with every script and style sheet from /docs/ on this origin', async function () {
        const response = await gateway.request('GET', '/docs');
        const html = response.body.toString('utf8');

        expect(response.status).to.equal(200);
        expect(response.headers['content-type']).to.match(/^text\/html/);
        const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
        expect(sources).to.not.be.empty;
        for (const source of sources) expect(source, source).to.match(/^\/docs\/[a-z0-9.-]+$/);
      });

      it("forbids any other origin to the page's scripts, styles, images and calls (Content-Security-Policy)", async function () {
        const response = await gateway.request('GET', '/docs');
        const policy = String(response.headers['content-security-policy']);

        expect(policy).to.include("default-src 'none'");
        expect(policy).to.include("script-src 'self'");
        expect(policy).to.include("connect-src 'self'");
        expect(policy).to.not.match(/https?:/);
      });

      it('needs no token, and answers a query parameter with 400', async function () {
        const response = await gateway.request('GET', '/docs?x=1');

        expect(response.status).to.equal(400);
      });
    });

    describe('GET /docs/{asset}', function () {
      for (const name of apiReferenceAssetNames) {
        it(`serves ${name} with its media type`, async function () {
          const response = await gateway.request('GET', `/docs/${name}`);

          expect(response.status).to.equal(200);
          expect(response.body.length).to.be.above(0);
          const expected = name.endsWith('.js') ? /^text\/javascript/ : name.endsWith('.css') ? /^text\/css/ : /^image\/png$/;
          expect(response.headers['content-type']).to.match(expected);
          expect(response.headers['cache-control']).to.equal('public, max-age=3600');
        });
      }

      for (const name of ['index.html', 'swagger-ui-bundle.js.map', 'constructor', '__proto__', '..%2Fpackage.json']) {
        it(`answers ${name}, which is no asset of the page, with 404 route_not_found`, async function () {
          const response = await gateway.request('GET', `/docs/${name}`);

          expect(response.status).to.equal(404);
          expect(jsonOf<ErrorBody>(response).code).to.equal('route_not_found');
        });
      }

      it('answers a query parameter with 400', async function () {
        const response = await gateway.request('GET', '/docs/swagger-ui.css?v=1');

        expect(response.status).to.equal(400);
      });
    });

    describe('the meta routes that need no token', function () {
      for (const path of ['/health', '/ready', '/openapi.yaml']) {
        it(`answer ${path} with a query parameter with 400 invalid_request, as declared`, async function () {
          const response = await gateway.request('GET', `${path}?x=1`);

          expect(response.status).to.equal(400);
          expect(jsonOf<ErrorBody>(response).code).to.equal('invalid_request');
        });
      }
    });

    describe('files stored under docs/ or .well-known/', function () {
      it('are never served by path: those first segments belong to the API', async function () {
        const token = await gateway.tokenFor(acme.clientId);
        const auth = { authorization: `Bearer ${token}` };

        const docsFile = await gateway.request('GET', '/docs/readme.csv', { headers: auth });
        const wellKnownFile = await gateway.request('GET', '/.well-known/security.txt', { headers: auth });
        const bySymbol = await gateway.get(acme.clientId, '/download/DOCS_FILE');

        expect(docsFile.status).to.equal(404);
        expect(wellKnownFile.status).to.equal(404);
        expect(bySymbol.status).to.equal(200);
      });
    });
  });

  describe('with PUBLIC_BASE_URL', function () {
    let gateway: TestGateway;
    before(async function () {
      gateway = await startGateway({ store: seededStore(), clients: [acme], env: { PUBLIC_BASE_URL: 'https://files.example.net/' } });
    });
    after(async function () {
      await gateway?.close();
    });

    it('names that URL as issuer, token endpoint base and resource, whatever the Host header says', async function () {
      const server = await gateway.request('GET', asMetadataPath, { headers: { host: 'evil.example' } });
      const resource = await gateway.request('GET', resourceMetadataPath, { headers: { host: 'evil.example' } });

      expect(jsonOf(server)).to.include({ issuer: 'https://files.example.net', token_endpoint: 'https://files.example.net/oauth/token' });
      expect(jsonOf(resource)).to.deep.include({ resource: 'https://files.example.net', authorization_servers: ['https://files.example.net'] });
    });

    it('lets caches keep the documents for five minutes', async function () {
      const response = await gateway.request('GET', asMetadataPath);

      expect(response.headers['cache-control']).to.equal('public, max-age=300');
    });
  });

  describe('behind a trusted proxy (TRUST_PROXY=1, as on App Service)', function () {
    let gateway: TestGateway;
    before(async function () {
      gateway = await startGateway({ store: seededStore(), clients: [acme], env: { TRUST_PROXY: '1' } });
    });
    after(async function () {
      await gateway?.close();
    });

    it("names the issuer from the proxy's X-Forwarded-Proto and X-Forwarded-Host", async function () {
      const response = await gateway.request('GET', asMetadataPath, {
        headers: { host: '10.0.0.4:8080', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'dfg-prod.azurewebsites.net' },
      });

      expect(jsonOf(response).issuer).to.equal('https://dfg-prod.azurewebsites.net');
    });

    for (const forwarded of [
      { 'x-forwarded-proto': 'javascript' },
      { 'x-forwarded-proto': 'ftp' },
      { 'x-forwarded-proto': 'https://evil.example/' },
      { 'x-forwarded-host': 'evil.example/phish' },
      { 'x-forwarded-host': 'evil.example@files.example.net' },
      { 'x-forwarded-host': 'files.example.net:443:443' },
    ]) {
      it(`answers ${JSON.stringify(forwarded)} from the proxy with 400 invalid_request, naming no issuer`, async function () {
        const response = await gateway.request('GET', asMetadataPath, { headers: { host: '10.0.0.4:8080', 'x-forwarded-proto': 'https', ...forwarded } });

        expect(response.status).to.equal(400);
        expect(jsonOf<ErrorBody>(response).code).to.equal('invalid_request');
        expect(response.body.toString()).to.not.include('evil');
      });
    }
  });
});
