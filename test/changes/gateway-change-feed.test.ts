import { expect } from 'chai';
import { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { createGateway } from '../../src/app/create-app.js';
import type { Clock } from '../../src/domain/ports.js';
import { quietLogger, testConfig } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';

describe('createGateway and the change feed', function () {
  it('exposes the change log, the checksums and the leader duties, which scan every CHANGES_SCAN_SECONDS and run the afterScan duties', async function () {
    let at = Date.parse('2026-11-24T10:00:00Z');
    const clock: Clock = { now: () => new Date(at) };
    const store = new MemoryBlobStore();
    store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A' })]));
    const registry = new InMemoryClientRegistry([{ clientId: 'acme', secretHash: 'x', indexPath: 'indexes/acme.csv', enabled: true }]);
    const gateway = await createGateway(testConfig({ CHANGES_SCAN_SECONDS: '30' }), { store, registry, logger: quietLogger, clock });
    const ran: number[] = [];
    gateway.leaderDuties.afterScan(async ({ report }) => void ran.push(report.changes));

    await gateway.leaderDuties.tick();
    store.put('data/a.csv', 'a');
    at += 29_000;
    await gateway.leaderDuties.tick();
    expect(ran).to.deep.equal([0]);
    at += 1_000;
    await gateway.leaderDuties.tick();
    expect(ran).to.deep.equal([0, 1]);
    const [change] = await gateway.changeLog.read('acme', 0, 10);
    // The first change of a new log: the position after its origin (the log's first head).
    expect(change).to.include({ type: 'file.released', position: (await gateway.changeLog.horizon()) + 1 });
    const etag = (await store.getProperties('data/a.csv'))?.etag as string;
    expect((await gateway.checksums.lookup([{ path: 'data/a.csv', etag }])).get('data/a.csv')).to.equal(change?.file.sha256).and.to.match(/^[0-9a-f]{64}$/);
    await gateway.leaderDuties.stop();
  });
});
