import { expect } from 'chai';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { JoseSigner } from '../../src/adapters/signing/jose-signer.js';
import { MemoryWebhookRegistry } from '../../src/adapters/webhooks/memory-webhook-registry.js';
import { MAX_WEBHOOKS_PER_CLIENT } from '../../src/domain/webhooks.js';
import { startGateway, testSigningKey, type TestGateway } from '../support/gateway.js';
import { jsonOf, type ErrorBody } from '../support/json.js';

describe('the subscriber webhook API (/webhooks)', function () {
  let gateway: TestGateway;
  const registry = new MemoryWebhookRegistry();

  before(async function () {
    gateway = await startGateway({
      store: new MemoryBlobStore(),
      clients: [
        { clientId: 'acme', secret: 'acme-secret-0123456789' },
        { clientId: 'globex', secret: 'globex-secret-0123456789' },
        { clientId: 'busy', secret: 'busy-secret-0123456789' },
      ],
      webhookRegistry: registry,
      env: { WEBHOOK_ALLOW_PRIVATE: 'on' },
    });
  });

  after(async function () {
    await gateway.close();
  });

  const call = async (clientId: string, method: string, path: string, body?: unknown) =>
    gateway.request(method, path, {
      headers: { authorization: `Bearer ${await gateway.tokenFor(clientId)}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });

  describe('POST /webhooks', function () {
    it('answers 201 with the id, the url and the secret (the signer\'s, for that id), not to be cached', async function () {
      const response = await call('acme', 'POST', '/webhooks', { url: 'http://127.0.0.1:9/hook' });
      expect(response.status).to.equal(201);
      expect(response.headers['cache-control']).to.equal('no-store');
      const created = jsonOf<{ id: string; url: string; secret: string }>(response);
      expect(created.url).to.equal('http://127.0.0.1:9/hook');
      expect(created.secret).to.equal(new JoseSigner({ rootKey: testSigningKey, clock: { now: () => new Date() } }).webhookSecret(created.id));
    });

    it('answers 400 webhook_url_refused for a URL the gateway will not call, and 400 invalid_request for a body off the contract', async function () {
      const refused = await call('acme', 'POST', '/webhooks', { url: 'ftp://127.0.0.1/hook' });
      expect(refused.status).to.equal(400);
      expect(jsonOf<ErrorBody>(refused).code).to.equal('webhook_url_refused');
      const invalid = await call('acme', 'POST', '/webhooks', { address: 'x' });
      expect(invalid.status).to.equal(400);
      expect(jsonOf<ErrorBody>(invalid).code).to.equal('invalid_request');
    });

    it(`answers 409 webhook_limit_reached past ${MAX_WEBHOOKS_PER_CLIENT} endpoints`, async function () {
      for (let i = 0; i < MAX_WEBHOOKS_PER_CLIENT; i += 1) expect((await call('busy', 'POST', '/webhooks', { url: `http://127.0.0.1:9/${i}` })).status).to.equal(201);
      const response = await call('busy', 'POST', '/webhooks', { url: 'http://127.0.0.1:9/more' });
      expect(response.status).to.equal(409);
      expect(jsonOf<ErrorBody>(response).code).to.equal('webhook_limit_reached');
    });

    it('answers 401 without a bearer token', async function () {
      const response = await gateway.request('POST', '/webhooks', { headers: { 'content-type': 'application/json' }, body: '{"url":"http://127.0.0.1:9/"}' });
      expect(response.status).to.equal(401);
    });
  });

  describe('GET /webhooks and DELETE /webhooks/{id}', function () {
    it('lists only the caller\'s endpoints, never a secret, and removes one with 204', async function () {
      const { id } = jsonOf<{ id: string }>(await call('globex', 'POST', '/webhooks', { url: 'http://127.0.0.1:9/globex' }));
      const listed = await call('globex', 'GET', '/webhooks');
      expect(listed.status).to.equal(200);
      const { webhooks } = jsonOf<{ webhooks: Array<Record<string, unknown>> }>(listed);
      expect(webhooks.map((endpoint) => endpoint['id'])).to.deep.equal([id]);
      expect(webhooks[0]).to.include({ url: 'http://127.0.0.1:9/globex', enabled: true, attempts: 0 });
      expect(listed.body.toString()).to.not.match(/whsec_/);

      expect((await call('acme', 'DELETE', `/webhooks/${id}`)).status, 'another client\'s id').to.equal(404);
      expect((await call('globex', 'DELETE', `/webhooks/${id}`)).status).to.equal(204);
      expect(jsonOf<{ webhooks: unknown[] }>(await call('globex', 'GET', '/webhooks')).webhooks).to.deep.equal([]);
      const again = await call('globex', 'DELETE', `/webhooks/${id}`);
      expect(again.status).to.equal(404);
      expect(jsonOf<ErrorBody>(again).code).to.equal('webhook_not_found');
    });

    it('answers 400 for an id that cannot be one, or an unknown query parameter', async function () {
      expect((await call('acme', 'DELETE', '/webhooks/not-an-id')).status).to.equal(400);
      expect((await call('acme', 'GET', '/webhooks?x=1')).status).to.equal(400);
    });

    it('answers 401 to GET and DELETE without a bearer token', async function () {
      expect((await gateway.request('GET', '/webhooks')).status).to.equal(401);
      expect((await gateway.request('DELETE', '/webhooks/wh_aaaaaaaaaaaaaaaaaaaaaaaaaa')).status).to.equal(401);
    });
  });

  describe('past the request budget', function () {
    it('answers 429 on each operation', async function () {
      const limited = await startGateway({
        store: new MemoryBlobStore(),
        clients: [{ clientId: 'acme', secret: 'acme-secret-0123456789' }],
        env: { WEBHOOK_ALLOW_PRIVATE: 'on', REQUEST_RATE_LIMIT: '1', REQUEST_RATE_WINDOW_SECONDS: '600' },
      });
      try {
        const token = await limited.tokenFor('acme');
        const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
        await limited.request('GET', '/webhooks', { headers });
        expect((await limited.request('GET', '/webhooks', { headers })).status).to.equal(429);
        expect((await limited.request('POST', '/webhooks', { headers, body: '{"url":"http://127.0.0.1:9/"}' })).status).to.equal(429);
        expect((await limited.request('DELETE', '/webhooks/wh_aaaaaaaaaaaaaaaaaaaaaaaaaa', { headers })).status).to.equal(429);
      } finally {
        await limited.close();
      }
    });
  });
});
