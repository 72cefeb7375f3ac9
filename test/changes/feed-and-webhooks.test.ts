import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
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

  /** A scan by the lease holder, then the webhook turns it started (the wiring does not wait for them). */
  const scanAndDeliver = async (): Promise<void> => {
    await gateway.core.leaderDuties.tick();
    await gateway.core.webhookDelivery.idle();
  };

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
      env: { WEBHOOK_ALLOW_PRIVATE: 'on', CHANGES_SCAN_SECONDS: '60', INDEX_REFRESH_SECONDS: '3600' },
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
    await scanAndDeliver();
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
    await scanAndDeliver();

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
    await scanAndDeliver();
    store.delete('data/a.csv');
    at += 60_000;
    await scanAndDeliver();
    const types = jsonOf<{ events: Array<{ type: string }> }>(await gateway.get('acme', '/changes')).events.map((event) => event.type);
    expect(types).to.deep.equal(['file.released', 'file.updated', 'file.withdrawn']);
    expect(acmeReceiver.received.slice(2).map((delivery) => (JSON.parse(delivery.body) as { type: string }).type)).to.deep.equal(['file.updated', 'file.withdrawn']);
    expect(otherReceiver.received).to.deep.equal([]);
  });

  it('shows a row added to an index in the listings of the scanning instance as soon as its event is logged, not INDEX_REFRESH_SECONDS later', async function () {
    // acme's catalog is kept (INDEX_REFRESH_SECONDS is an hour here).
    expect(jsonOf<{ files: Array<{ FileName: string }> }>(await gateway.get('acme', '/catalog')).files.map((file) => file.FileName)).to.deep.equal(['data/a.csv']);
    store.put('data/d.csv', 'd\n');
    store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'data/a.csv' }), buildIndexRow({ Symbol: 'D', FileName: 'data/d.csv' })]));
    at += 60_000;
    await scanAndDeliver();
    const events = jsonOf<{ events: Array<{ type: string; file: { fileName: string } }> }>(await gateway.get('acme', '/changes')).events;
    expect(events.at(-1)).to.deep.include({ type: 'file.released' });
    expect(events.at(-1)?.file.fileName).to.equal('data/d.csv');
    expect(jsonOf<{ files: Array<{ FileName: string }> }>(await gateway.get('acme', '/catalog')).files.map((file) => file.FileName)).to.include('data/d.csv');
  });

  it("scans on while one client's receiver keeps a delivery waiting: a slow receiver holds only its own lane", async function () {
    // A receiver that takes the request and never answers (the sender gives up after 10 s).
    const acmeBefore = acmeReceiver.received.length;
    const sockets = new Set<Socket>();
    const silent = createServer(() => undefined);
    silent.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const token = await gateway.tokenFor('other');
      const registered = await gateway.request('POST', '/webhooks', {
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hook` }),
      });
      expect(registered.status).to.equal(201);
      store.put('data/c.csv', 'c\n');
      at += 60_000;
      await gateway.core.leaderDuties.tick();
      // other's own receiver has its event; the silent endpoint's turn still waits for an answer.
      await until(() => otherReceiver.received.length === 1 && gateway.core.webhookDelivery.running === 1);
      // Deleted by the test before: stored again, it is released again.
      store.put('data/a.csv', 'a,b\n5,6\n');
      at += 60_000;
      await gateway.core.leaderDuties.tick();
      const types = jsonOf<{ events: Array<{ type: string }> }>(await gateway.get('acme', '/changes')).events.map((event) => event.type);
      expect(types.at(-1), 'the next scan ran meanwhile').to.equal('file.released');
      await until(() => acmeReceiver.received.length === acmeBefore + 1);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
      await gateway.core.webhookDelivery.idle();
    }
  });
});

/** Resolves once `done` holds, looking again at each turn of the event loop (the test's own timeout bounds it). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
}

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
