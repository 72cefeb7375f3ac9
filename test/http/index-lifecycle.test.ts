import { expect } from 'chai';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { Clock } from '../../src/domain/ports.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody } from '../support/json.js';

describe('client indexes over HTTP', function () {
  let store: MemoryBlobStore;
  let gateway: TestGateway;
  let now = Date.UTC(2024, 4, 1);
  const clock: Clock = { now: () => new Date(now) };

  before(async function () {
    store = new MemoryBlobStore();
    store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A' })]));
    store.put('indexes/broken.csv', 'Ticker;Path\r\nA;a.csv\r\n');
    store.put('data/a.csv', 'a');
    store.put('data/b.csv', 'b');
    gateway = await startGateway({
      store,
      clock,
      env: { INDEX_REFRESH_SECONDS: '30' },
      clients: [
        { clientId: 'acme', secret: 'acme-secret-acme-secret' },
        { clientId: 'broken', secret: 'broken-secret-broken' },
      ],
    });
  });

  after(async function () {
    await gateway.close();
  });

  describe('when a client index is malformed', function () {
    it('answers that client 500 with a body saying its index could not be read', async function () {
      const response = await gateway.get('broken', '/catalog');
      expect(response.status).to.equal(500);
      const body = jsonOf<ErrorBody>(response);
      expect(body.error).to.equal('Internal error');
      expect(body.message).to.match(/index of this client could not be read: The index has no Symbol or FileName column/);
    });

    it('leaves other clients unaffected', async function () {
      expect((await gateway.get('acme', '/catalog')).status).to.equal(200);
    });
  });

  describe('when an index is updated', function () {
    it('serves a row added to the index as soon as it is asked for (a refusal checks the stored index again), without a restart', async function () {
      expect((await gateway.get('acme', '/download/B')).status).to.equal(403);
      store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A' }), buildIndexRow({ Symbol: 'B' })]));
      now += 1;
      expect((await gateway.get('acme', '/download/B')).status).to.equal(200);
      expect(jsonOf<{ count: number }>(await gateway.get('acme', '/catalog')).count, 'the new version, for every request').to.equal(2);
    });

    it('takes a new version into account once the refresh interval has passed, without a request for a new row', async function () {
      store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A' }), buildIndexRow({ Symbol: 'B' }), buildIndexRow({ Symbol: 'C' })]));
      now += 29_000;
      expect(jsonOf<{ count: number }>(await gateway.get('acme', '/catalog')).count).to.equal(2);
      now += 2_000;
      expect(jsonOf<{ count: number }>(await gateway.get('acme', '/catalog')).count).to.equal(3);
    });

    it('revokes access to a symbol removed from the index', async function () {
      store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'B' })]));
      now += 31_000;
      expect((await gateway.get('acme', '/info/A')).status).to.equal(403);
    });
  });
});
