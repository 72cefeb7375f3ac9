import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { reservedFirstSegments } from '../../src/adapters/http/routing.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { packageRoot } from '../../src/app/package-root.js';
import { openApi } from '../support/contract.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf } from '../support/json.js';

describe('the first path segments reserved for the API', function () {
  describe('a stored file under /changes', function () {
    let gateway: TestGateway;

    before(async function () {
      const store = new MemoryBlobStore();
      store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'CHG', FileName: 'changes/2026.csv' })]));
      store.put('changes/2026.csv', 'a,b\n');
      gateway = await startGateway({ store, clients: [{ clientId: 'acme', secret: 'acme-secret-acme-secret' }] });
    });

    after(async function () {
      await gateway?.close();
    });

    it('is no storage path at GET /changes/<rest> (404 route_not_found), and is downloaded by its symbol', async function () {
      const byPath = await gateway.get('acme', '/changes/2026.csv');
      expect(byPath.status).to.equal(404);
      expect(jsonOf(byPath).code).to.equal('route_not_found');
      const encoded = await gateway.get('acme', '/%63hanges/2026.csv');
      expect(encoded.status, 'percent-encoded, it is still the API’s').to.equal(404);
      const bySymbol = await gateway.get('acme', '/download/CHG');
      expect(bySymbol.status).to.equal(200);
      expect(bySymbol.body.toString()).to.equal('a,b\n');
    });
  });

  it('includes changes, and the subscribers’ guide (docs/api.md) names every one of them', async function () {
    const reserved = [...reservedFirstSegments(await openApi())].filter((segment) => segment !== '');
    expect(reserved).to.include('changes');
    const guide = await readFile(join(packageRoot(), 'docs', 'api.md'), 'utf8');
    const sentence = /a path whose first segment is ([^]*?) is never read as a storage path/.exec(guide)?.[1] ?? '';
    const named = new Set([...sentence.matchAll(/`([^`]+)`/g)].map((match) => match[1]));
    expect(reserved.filter((segment) => !named.has(segment)), 'reserved segments the guide does not name').to.deep.equal([]);
  });
});
