import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import type { ContainerClient } from '@azure/storage-blob';
import { azureChangeStores, CHANGE_LOG_TABLE, folderChangeStores, type ChangeStores } from '../../src/adapters/changes/change-stores.js';
import { NodeContentHasher } from '../../src/adapters/changes/node-content-hasher.js';
import { tablesFromConnectionString } from '../../src/adapters/changes/table-storage.js';
import { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { BlobIndexSource } from '../../src/adapters/index/blob-index-source.js';
import { fromConnectionString } from '../../src/adapters/storage/azure-blob-store.js';
import { LocalFolderBlobStore } from '../../src/adapters/storage/local-folder-blob-store.js';
import { ChangeScanner, type ScanReport } from '../../src/application/change-scanner.js';
import { LeaderDuties } from '../../src/application/leader-duties.js';
import { EventBus } from '../../src/application/events.js';
import { WebhookDelivery } from '../../src/application/webhook-delivery.js';
import { JoseSigner } from '../../src/adapters/signing/jose-signer.js';
import { FileWebhookRegistry } from '../../src/adapters/webhooks/file-webhook-registry.js';
import { NodeWebhookSender } from '../../src/adapters/webhooks/node-webhook-sender.js';
import { TableWebhookRegistry } from '../../src/adapters/webhooks/table-webhook-registry.js';
import { Webhook } from 'standardwebhooks';
import { startReceiver, type TestReceiver } from '../webhooks/receiver.js';
import type { BlobStore, ClientRegistry, Clock, WebhookRegistry } from '../../src/domain/ports.js';
import { createTestContainer, FAST_FAILING_PIPELINE, sharedAzurite, sharedAzuriteTables, tableConnectionString } from '../support/azurite.js';
import { buildIndexCsv, buildIndexRow, type IndexRow } from '../support/index-csv-builder.js';

/**
 * The change feed and webhooks end to end on each real backend: storage written by another tool, two
 * instances of the scanner with their own adapters over the same stores (as two processes would
 * have), the lease deciding which one scans, and a clock the test moves (no sleeps).
 */

const webhookRootKey = new TextEncoder().encode('change-feed-integration-key-of-32-bytes-at-least');

const slices = { yieldToLoop: () => new Promise<void>((resolve) => setImmediate(resolve)), stepsPerSlice: 5_000 };

class TestClock implements Clock {
  at = Date.now();
  now(): Date {
    return new Date(this.at);
  }
}

interface Backend {
  /** The store the gateway reads. */
  readonly store: BlobStore;
  /** Change stores as a new process would open them. */
  stores(clock: Clock): ChangeStores;
  /** The webhook registry as a new process would open it (beside the change log). */
  webhooks(): WebhookRegistry;
  put(path: string, content: string): Promise<void>;
  remove(path: string): Promise<void>;
  close(): Promise<void>;
}

const backends: { name: string; make: () => Promise<Backend> }[] = [
  {
    name: 'Azurite (blob and table)',
    make: async () => {
      const { connectionString } = await sharedAzurite();
      const { tableEndpoint } = await sharedAzuriteTables();
      const data = await createTestContainer(connectionString, 'change-feed-data');
      const system: ContainerClient = await createTestContainer(connectionString, 'change-feed-system');
      const tables = tablesFromConnectionString(tableConnectionString(tableEndpoint), { maxTries: 1 });
      const suffix = data.containerName.replace(/[^a-z0-9]/g, '').slice(-12);
      const names = { log: `log${suffix}`, checksums: `sums${suffix}`, webhooks: `hooks${suffix}` };
      return {
        store: fromConnectionString(connectionString, data.containerName, FAST_FAILING_PIPELINE),
        stores: (clock) => azureChangeStores({ tables: (name) => tables(name === CHANGE_LOG_TABLE ? names.log : names.checksums), systemContainer: system, clock }),
        webhooks: () => new TableWebhookRegistry(() => tables(names.webhooks)),
        put: async (path, content) => void (await data.getBlockBlobClient(path).upload(content, Buffer.byteLength(content))),
        remove: async (path) => void (await data.deleteBlob(path)),
        close: async () => {
          await data.deleteIfExists();
          await system.deleteIfExists();
          await tables(names.log).deleteTable();
          await tables(names.checksums).deleteTable();
          await tables(names.webhooks).deleteTable();
        },
      };
    },
  },
  {
    name: 'the local folder store (changes beside the registry)',
    make: async () => {
      const root = await mkdtemp(join(tmpdir(), 'dfg-change-feed-'));
      const dataDir = join(root, 'data');
      await mkdir(dataDir);
      return {
        store: new LocalFolderBlobStore(dataDir),
        stores: (clock) => folderChangeStores(join(root, 'registry', 'changes'), clock),
        webhooks: () => new FileWebhookRegistry(join(root, 'registry', 'webhooks.json')),
        put: async (path, content) => {
          await mkdir(dirname(join(dataDir, path)), { recursive: true });
          await writeFile(join(dataDir, path), content);
        },
        remove: (path) => unlink(join(dataDir, path)),
        close: () => rm(root, { recursive: true, force: true }),
      };
    },
  },
];

/** One gateway instance's scanner and duties, over its own adapters. */
function instance(backend: Backend, registry: ClientRegistry, clock: Clock): { duties: LeaderDuties; stores: ChangeStores; scans: ScanReport[]; afterScans: number[] } {
  const stores = backend.stores(clock);
  const scans: ScanReport[] = [];
  const afterScans: number[] = [];
  const duties = new LeaderDuties({
    lease: stores.lease,
    scanner: new ChangeScanner({
      store: backend.store,
      indexes: new BlobIndexSource(backend.store, 1 << 20),
      registry,
      log: stores.log,
      checksums: stores.checksums,
      hasher: new NodeContentHasher(),
      state: stores.state,
      clock,
      backlogBytesPerSecond: 0,
      slices,
      maxBytes: 64 * 1024 * 1024,
    }),
    log: stores.log,
    clock,
    scanEveryMs: 60_000,
    retentionMs: 30 * 24 * 3600 * 1000,
    onError: (error) => {
      throw error;
    },
    onScan: (report) => scans.push(report),
  });
  duties.afterScan(async ({ report }) => void afterScans.push(report.changes));
  // Each instance delivers webhooks over its own registry and log adapters, as the wiring does, after its scans.
  const delivery = new WebhookDelivery({
    registry: backend.webhooks(),
    log: stores.log,
    sender: new NodeWebhookSender({ allowPrivate: true, clock }),
    signer: new JoseSigner({ rootKey: webhookRootKey, clock }),
    clock,
    retrySeconds: [5, 300],
    events: new EventBus(),
  });
  duties.afterScan(async () => void (await delivery.tick()));
  return { duties, stores, scans, afterScans };
}

for (const { name, make } of backends) {
  describe(`The change feed on ${name}`, function () {
    this.timeout(60_000);
    let backend: Backend;
    const clock = new TestClock();
    const registry = new InMemoryClientRegistry([
      { clientId: 'acme', secretHash: 'x', indexPath: 'indexes/acme.csv', enabled: true },
      { clientId: 'beta', secretHash: 'x', indexPath: 'indexes/beta.csv', enabled: true },
    ]);

    async function index(clientId: string, rows: readonly IndexRow[]): Promise<void> {
      await backend.put(`indexes/${clientId}.csv`, buildIndexCsv(rows));
    }

    async function feed(stores: ChangeStores, clientId: string): Promise<string[]> {
      return (await stores.log.read(clientId, 0, 1000)).map((c) => `${c.type} ${c.file.symbol}`);
    }

    before(async function () {
      backend = await make();
    });

    let receivers: Record<'acme' | 'beta', TestReceiver>;

    after(async function () {
      await receivers?.acme.close();
      await receivers?.beta.close();
      await backend.close();
    });

    it('gives each client exactly its changes, once, in its feed and at its webhook endpoint, across a takeover by another instance', async function () {
      await backend.put('data/a.csv', 'a');
      await backend.put('data/b.csv', 'b');
      const opensAt = new Date(clock.at + 150_000).toISOString();
      await index('acme', [buildIndexRow({ Symbol: 'B' }), buildIndexRow({ Symbol: 'C' }), buildIndexRow({ Symbol: 'W', FileName: 'data/a.csv', AvailableFrom: opensAt })]);
      await index('beta', [buildIndexRow({ Symbol: 'B' })]);
      const first = instance(backend, registry, clock);
      const second = instance(backend, registry, clock);
      // acme's receiver fails its first delivery; beta's takes every one.
      receivers = { acme: await startReceiver([{ status: 500 }]), beta: await startReceiver() };
      const hooks = backend.webhooks();
      const signer = new JoseSigner({ rootKey: webhookRootKey, clock });
      const secrets = new Map<string, string>();
      for (const clientId of ['acme', 'beta'] as const) {
        const endpoint = await hooks.add({ clientId, url: receivers[clientId].url, createdAt: clock.now(), startsAfter: 0 });
        secrets.set(clientId, signer.webhookSecret(endpoint.id));
      }

      await first.duties.tick();
      await second.duties.tick();
      expect(first.duties.leading).to.equal(true);
      expect(second.duties.leading).to.equal(false);
      expect(first.scans.map((s) => s.first)).to.deep.equal([true]);
      expect(second.scans).to.deep.equal([]);

      // An upload that acme's index lists.
      clock.at += 60_000;
      await backend.put('data/c.csv', 'c-content');
      await first.duties.tick();
      await second.duties.tick();
      expect(await feed(first.stores, 'acme')).to.deep.equal(['file.released C']);
      expect(await feed(first.stores, 'beta')).to.deep.equal([]);
      expect((await first.stores.log.read('acme', 0, 1))[0]?.file.sha256).to.equal(createHash('sha256').update('c-content').digest('hex'));

      // A row added to beta's index for a file stored long ago, and a new version of a file both see.
      clock.at += 60_000;
      await index('beta', [buildIndexRow({ Symbol: 'B' }), buildIndexRow({ Symbol: 'A' })]);
      await backend.put('data/b.csv', 'b, second version');
      await first.duties.tick();
      expect(await feed(first.stores, 'beta')).to.deep.equal(['file.released A', 'file.updated B']);
      expect(await feed(first.stores, 'acme')).to.deep.equal(['file.released C', 'file.updated B']);

      // acme's window on W opens (no storage or index change).
      clock.at += 60_000;
      await first.duties.tick();
      expect(await feed(first.stores, 'acme')).to.deep.equal(['file.released C', 'file.updated B', 'file.released W']);

      // The first instance dies (it stops ticking, holding the lease); the second takes over after the expiry.
      clock.at += 30_000;
      await backend.remove('data/c.csv');
      await second.duties.tick();
      expect(second.duties.leading).to.equal(false);
      clock.at += 16_000;
      await second.duties.tick();
      expect(second.duties.leading).to.equal(true);
      expect(second.scans).to.have.length(1);
      expect(second.afterScans).to.deep.equal([1]);
      // A fresh reader (a third process) sees every change once, in order, and none of the other client's.
      const reader = backend.stores(clock);
      expect(await feed(reader, 'acme')).to.deep.equal(['file.released C', 'file.updated B', 'file.released W', 'file.withdrawn C']);
      expect(await feed(reader, 'beta')).to.deep.equal(['file.released A', 'file.updated B']);
      const positions = [...(await reader.log.read('acme', 0, 100)), ...(await reader.log.read('beta', 0, 100))].map((c) => c.position).sort((x, y) => x - y);
      // Dense from the log's origin (the time the first instance made it; nothing pruned yet: the horizon).
      const origin = await reader.log.horizon();
      expect(origin).to.be.above(0);
      expect(positions).to.deep.equal([1, 2, 3, 4, 5, 6].map((n) => origin + n));
      expect(first.afterScans).to.deep.equal([0, 1, 3, 1]);

      // Webhooks: each client's endpoint got exactly its changes, in order, once each after a 2xx
      // (acme's first again with the same webhook-id after the 500), across the takeover.
      const delivered = (clientId: 'acme' | 'beta'): string[] =>
        receivers[clientId].received.map((delivery) => {
          const body = verifiedAt(secrets.get(clientId) ?? '', delivery.body, delivery.headers) as { type: string; data: { symbol: string } };
          return `${body.type} ${body.data.symbol}`;
        });
      expect(delivered('acme')).to.deep.equal(['file.released C', 'file.released C', 'file.updated B', 'file.released W', 'file.withdrawn C']);
      expect(delivered('beta')).to.deep.equal(['file.released A', 'file.updated B']);
      const acmeIds = receivers.acme.received.map((delivery) => String(delivery.headers['webhook-id']));
      expect(acmeIds[1], 'a retry carries the same webhook-id').to.equal(acmeIds[0]);
      expect(new Set(acmeIds.slice(1)).size, 'every other delivery its own').to.equal(4);
    });
  });
}

/** Verifies a delivery with `standardwebhooks` as a receiver whose clock reads the delivery's own timestamp. */
function verifiedAt(secret: string, body: string, headers: Record<string, string | string[] | undefined>): unknown {
  const realNow = Date.now;
  Date.now = () => Number(headers['webhook-timestamp']) * 1000;
  try {
    return new Webhook(secret).verify(body, {
      'webhook-id': String(headers['webhook-id']),
      'webhook-timestamp': String(headers['webhook-timestamp']),
      'webhook-signature': String(headers['webhook-signature']),
    });
  } finally {
    Date.now = realNow;
  }
}
