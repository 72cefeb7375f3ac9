import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TableClient } from '@azure/data-tables';
import { expect } from 'chai';
import { FileWebhookRegistry } from '../../src/adapters/webhooks/file-webhook-registry.js';
import { MemoryWebhookRegistry } from '../../src/adapters/webhooks/memory-webhook-registry.js';
import { TableWebhookRegistry } from '../../src/adapters/webhooks/table-webhook-registry.js';
import { WebhookLimitReached } from '../../src/domain/errors.js';
import type { WebhookRegistry } from '../../src/domain/ports.js';
import { isWebhookId, MAX_WEBHOOKS_PER_CLIENT, type NewWebhookEndpoint } from '../../src/domain/webhooks.js';
import { sharedAzuriteTables, tableConnectionString, uniqueTableName } from '../support/azurite.js';
import { rejectionOf } from '../support/rejection.js';

/** The WebhookRegistry port's contract, run against every adapter. */
const created = new Date('2026-05-01T10:00:00.000Z');
const newEndpoint = (overrides: Partial<NewWebhookEndpoint> = {}): NewWebhookEndpoint => ({
  clientId: 'acme',
  url: 'https://hooks.example.com/dfg',
  createdAt: created,
  startsAfter: 7,
  ...overrides,
});

/** A table of its own per registry, on the shared Azurite table service. */
export async function azuriteWebhookTable(): Promise<TableClient> {
  const { tableEndpoint } = await sharedAzuriteTables();
  return TableClient.fromConnectionString(tableConnectionString(tableEndpoint), uniqueTableName('webhooks'), { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } });
}

const adapters: { name: string; make: () => Promise<{ registry: WebhookRegistry; close: () => Promise<void> }> }[] = [
  { name: 'MemoryWebhookRegistry', make: async () => ({ registry: new MemoryWebhookRegistry(), close: async () => undefined }) },
  {
    name: 'FileWebhookRegistry (a temporary folder)',
    make: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'dfg-webhooks-'));
      return { registry: new FileWebhookRegistry(join(dir, 'webhooks.json')), close: () => rm(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'TableWebhookRegistry (Azurite tables)',
    make: async () => {
      const table = await azuriteWebhookTable();
      return { registry: new TableWebhookRegistry(table), close: () => table.deleteTable() };
    },
  },
];

for (const adapter of adapters) {
  describe(`the WebhookRegistry contract: ${adapter.name}`, function () {
    this.timeout(30_000);
    let registry: WebhookRegistry;
    let close: () => Promise<void>;

    beforeEach(async function () {
      ({ registry, close } = await adapter.make());
    });

    afterEach(async function () {
      await close();
    });

    it('gives a new endpoint an id, enabled, its delivery at the position it starts after, and lists it for its client only', async function () {
      const endpoint = await registry.add(newEndpoint());
      expect(isWebhookId(endpoint.id)).to.equal(true);
      expect(endpoint).to.deep.equal({
        id: endpoint.id,
        clientId: 'acme',
        url: 'https://hooks.example.com/dfg',
        enabled: true,
        createdAt: created,
        startsAfter: 7,
        delivery: { delivered: 7, attempts: 0 },
      });
      expect(await registry.list('acme')).to.deep.equal([endpoint]);
      expect(await registry.list('globex')).to.deep.equal([]);
      expect(await registry.enabled()).to.deep.equal([endpoint]);
    });

    it('lists a client\'s endpoints oldest first, each with its own id', async function () {
      const first = await registry.add(newEndpoint());
      const second = await registry.add(newEndpoint({ createdAt: new Date(created.getTime() + 1000), url: 'https://other.example.com/' }));
      expect(first.id).to.not.equal(second.id);
      expect((await registry.list('acme')).map((endpoint) => endpoint.id)).to.deep.equal([first.id, second.id]);
    });

    it(`refuses a client's endpoint beyond ${MAX_WEBHOOKS_PER_CLIENT} (WebhookLimitReached), while another client may still add`, async function () {
      for (let i = 0; i < MAX_WEBHOOKS_PER_CLIENT; i += 1) await registry.add(newEndpoint());
      expect(await rejectionOf(registry.add(newEndpoint()))).to.be.instanceOf(WebhookLimitReached);
      expect(await registry.list('acme')).to.have.length(MAX_WEBHOOKS_PER_CLIENT);
      await registry.add(newEndpoint({ clientId: 'globex' }));
    });

    it('removes an endpoint only for the client that owns it', async function () {
      const endpoint = await registry.add(newEndpoint());
      expect(await registry.remove('globex', endpoint.id)).to.equal(false);
      expect(await registry.list('acme')).to.have.length(1);
      expect(await registry.remove('acme', endpoint.id)).to.equal(true);
      expect(await registry.list('acme')).to.deep.equal([]);
      expect(await registry.remove('acme', endpoint.id)).to.equal(false);
    });

    it('records the delivery state, and reads it back', async function () {
      const endpoint = await registry.add(newEndpoint());
      const nextAttemptAt = new Date('2026-05-01T10:05:00.000Z');
      expect(await registry.update('acme', endpoint.id, { delivery: { delivered: 9, attempts: 2, nextAttemptAt } })).to.equal(true);
      expect((await registry.list('acme'))[0]?.delivery).to.deep.equal({ delivered: 9, attempts: 2, nextAttemptAt });
      expect(await registry.update('acme', endpoint.id, { delivery: { delivered: 10, attempts: 0 } })).to.equal(true);
      expect((await registry.list('acme'))[0]?.delivery).to.deep.equal({ delivered: 10, attempts: 0 });
    });

    it('disables an endpoint saying why, and leaves it out of the enabled ones', async function () {
      const endpoint = await registry.add(newEndpoint());
      const at = new Date('2026-05-02T00:00:00.000Z');
      await registry.update('acme', endpoint.id, { delivery: { delivered: 7, attempts: 1 }, disabled: { reason: 'gone', at, detail: 'answered 410' } });
      const [listed] = await registry.list('acme');
      expect(listed).to.include({ enabled: false });
      expect(listed?.disabled).to.deep.equal({ reason: 'gone', at, detail: 'answered 410' });
      expect(await registry.enabled()).to.deep.equal([]);
    });

    it('never brings back a removed endpoint, nor updates another client\'s', async function () {
      const endpoint = await registry.add(newEndpoint());
      expect(await registry.update('globex', endpoint.id, { delivery: { delivered: 8, attempts: 0 } })).to.equal(false);
      await registry.remove('acme', endpoint.id);
      expect(await registry.update('acme', endpoint.id, { delivery: { delivered: 8, attempts: 0 } })).to.equal(false);
      expect(await registry.list('acme')).to.deep.equal([]);
      expect(await registry.enabled()).to.deep.equal([]);
    });

    it('keeps each client\'s endpoints apart under concurrent adds', async function () {
      await Promise.all(['acme', 'globex', 'initech'].flatMap((clientId) => [1, 2].map(() => registry.add(newEndpoint({ clientId })))));
      for (const clientId of ['acme', 'globex', 'initech']) expect(await registry.list(clientId)).to.have.length(2);
      expect(await registry.enabled()).to.have.length(6);
    });
  });
}

describe('FileWebhookRegistry', function () {
  it('keeps no secret in its file, which only its owner may read (0600)', async function () {
    const dir = await mkdtemp(join(tmpdir(), 'dfg-webhooks-'));
    try {
      const path = join(dir, 'webhooks.json');
      const registry = new FileWebhookRegistry(path);
      await registry.add(newEndpoint());
      const text = await readFile(path, 'utf8');
      expect(text).to.not.match(/whsec_|secret/i);
      const { stat } = await import('node:fs/promises');
      expect((await stat(path)).mode & 0o777).to.equal(0o600);
      // Another object over the same file reads what the first wrote (a restart, or the CLI).
      expect(await new FileWebhookRegistry(path).list('acme')).to.deep.equal(await registry.list('acme'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
