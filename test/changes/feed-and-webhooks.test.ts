import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { Clock } from '../../src/domain/ports.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf } from '../support/json.js';
import { startReceiver, type TestReceiver } from '../webhooks/receiver.js';

/**
 * The whole way of a change, through the real wiring: storage written, the scanner's scan, the log,
 * the client's feed (`GET /changes`) and its webhook endpoint (`POST /webhooks`), delivered by the
 * lease holder's duties; the clock is the test's, so no wait is real.
 */
describe('a change, from storage to the feed and the webhooks of the clients that see it', function () {
  let at: number;
  const clock: Clock = { now: () => new Date(at) };
  let store: MemoryBlobStore;
  let gateway: TestGateway;
  let acmeReceiver: TestReceiver;
  let otherReceiver: TestReceiver;
  const secrets = new Map<string, string>();

  before(async function () {
    at = Date.parse('2026-11-24T10:00:00Z');
    store = new MemoryBlobStore();
    store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'data/a.csv' })]));
    store.put('indexes/other.csv', buildIndexCsv([buildIndexRow({ Symbol: 'C', FileName: 'data/c.csv' })]));
    gateway = await startGateway({
      store,
      clock,
      clients: [
        { clientId: 'acme', secret: 'acme-secret-acme-secret' },
        { clientId: 'other', secret: 'other-secret-other-secret' },
      ],
      env: { WEBHOOK_ALLOW_PRIVATE: 'on', CHANGES_SCAN_SECONDS: '60' },
    });
    // The first answer to acme's endpoint fails, so the change is delivered again.
    acmeReceiver = await startReceiver([{ status: 500 }]);
    otherReceiver = await startReceiver();
    for (const [clientId, receiver] of [['acme', acmeReceiver], ['other', otherReceiver]] as const) {
      const token = await gateway.tokenFor(clientId);
      const response = await gateway.request('POST', '/webhooks', {
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url }),
      });
      expect(response.status).to.equal(201);
      secrets.set(clientId, jsonOf<{ secret: string }>(response).secret);
    }
    // The first scan records what exists, without events.
    await gateway.core.leaderDuties.tick();
  });

  after(async function () {
    await gateway?.core.leaderDuties.stop();
    await gateway?.close();
    await acmeReceiver?.close();
    await otherReceiver?.close();
  });

  it('logs an upload to acme\'s feed only, and delivers it to acme\'s endpoint, again with the same webhook-id after a 500, each delivery verified by standardwebhooks', async function () {
    store.put('data/a.csv', 'a,b\n1,2\n');
    at += 60_000;
    await gateway.core.leaderDuties.tick();

    const feed = jsonOf<{ events: Array<{ id: string; type: string; file: { fileName: string; sha256?: string } }> }>(await gateway.get('acme', '/changes'));
    expect(feed.events.map((event) => [event.type, event.file.fileName])).to.deep.equal([['file.released', 'data/a.csv']]);
    expect(feed.events[0]?.file.sha256).to.match(/^[0-9a-f]{64}$/);
    expect(jsonOf<{ events: unknown[] }>(await gateway.get('other', '/changes')).events).to.deep.equal([]);

    expect(acmeReceiver.received, 'delivered after the scan, and answered 500').to.have.length(1);
    at += 5_000;
    await gateway.core.webhookDelivery.tick();
    expect(acmeReceiver.received, 'retried after the first delay').to.have.length(2);
    const [first, second] = acmeReceiver.received;
    expect(first?.headers['webhook-id']).to.equal(feed.events[0]?.id);
    expect(second?.headers['webhook-id']).to.equal(first?.headers['webhook-id']);
    const verifier = new Webhook(secrets.get('acme') ?? '');
    for (const delivery of acmeReceiver.received) {
      const headers = Object.fromEntries(Object.entries(delivery.headers).map(([name, value]) => [name, String(value)]));
      // standardwebhooks checks the timestamp against its own clock: the test's clock is not the machine's.
      const payload = verifyAt(verifier, delivery.body, headers, Number(headers['webhook-timestamp']));
      expect(payload).to.deep.include({ type: 'file.released' });
    }

    at += 5_000;
    await gateway.core.webhookDelivery.tick();
    expect(acmeReceiver.received, 'never again once answered 2xx').to.have.length(2);
    expect(otherReceiver.received, 'no event of another client').to.deep.equal([]);
  });

  it('tells acme of a new version and of a deletion, in order, and other of nothing', async function () {
    store.put('data/a.csv', 'a,b\n1,2\n3,4\n');
    at += 60_000;
    await gateway.core.leaderDuties.tick();
    store.delete('data/a.csv');
    at += 60_000;
    await gateway.core.leaderDuties.tick();
    const types = jsonOf<{ events: Array<{ type: string }> }>(await gateway.get('acme', '/changes')).events.map((event) => event.type);
    expect(types).to.deep.equal(['file.released', 'file.updated', 'file.withdrawn']);
    expect(acmeReceiver.received.slice(2).map((delivery) => (JSON.parse(delivery.body) as { type: string }).type)).to.deep.equal(['file.updated', 'file.withdrawn']);
    expect(otherReceiver.received).to.deep.equal([]);
  });
});

/** Verifies a delivery as a receiver whose clock reads `unixSeconds` would. */
function verifyAt(verifier: Webhook, body: string, headers: Record<string, string>, unixSeconds: number): unknown {
  const realNow = Date.now;
  Date.now = () => unixSeconds * 1000;
  try {
    return verifier.verify(body, headers);
  } finally {
    Date.now = realNow;
  }
}
