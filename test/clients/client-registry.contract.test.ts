import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClientRecord, ClientRegistry } from '../../src/domain/ports.js';
import { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { JsonClientRegistry } from '../../src/adapters/clients/json-client-registry.js';

function buildClientRecord(overrides: Partial<ClientRecord> = {}): ClientRecord {
  return {
    clientId: 'acme',
    secretHash: 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    indexPath: 'indexes/acme.csv',
    enabled: true,
    ...overrides,
  };
}

interface RegistryUnderTest {
  readonly name: string;
  /** A registry holding exactly `records`, and a clean-up. */
  create(records: readonly ClientRecord[]): Promise<{ registry: ClientRegistry; dispose: () => Promise<void> }>;
}

const adapters: readonly RegistryUnderTest[] = [
  {
    name: 'InMemoryClientRegistry',
    async create(records) {
      return { registry: new InMemoryClientRegistry(records), dispose: async () => {} };
    },
  },
  {
    name: 'JsonClientRegistry',
    async create(records) {
      const dir = await mkdtemp(join(tmpdir(), 'client-registry-contract-'));
      const registry = new JsonClientRegistry(join(dir, 'clients.json'));
      const clients = Object.fromEntries(
        records.map(({ clientId, validFrom, validUntil, ...stored }) => [
          clientId,
          {
            ...stored,
            ...(validFrom !== undefined && { validFrom: validFrom.toISOString() }),
            ...(validUntil !== undefined && { validUntil: validUntil.toISOString() }),
            createdAt: '2024-01-02T10:00:00.000Z',
            updatedAt: '2024-01-02T10:00:00.000Z',
          },
        ]),
      );
      await registry.save({ version: 1, clients });
      return { registry, dispose: () => rm(dir, { recursive: true, force: true }) };
    },
  },
];

for (const adapter of adapters) {
  describe(`ClientRegistry contract: ${adapter.name}`, () => {
    let dispose: () => Promise<void> = async () => {};

    afterEach(async () => {
      await dispose();
    });

    async function given(records: readonly ClientRecord[]): Promise<ClientRegistry> {
      const created = await adapter.create(records);
      dispose = created.dispose;
      return created.registry;
    }

    it('finds a registered client with all its fields', async () => {
      const registry = await given([buildClientRecord(), buildClientRecord({ clientId: 'beta', indexPath: 'b.csv', enabled: false })]);
      expect(await registry.find('acme')).to.deep.equal(buildClientRecord());
      expect(await registry.find('beta')).to.deep.equal(buildClientRecord({ clientId: 'beta', indexPath: 'b.csv', enabled: false }));
    });

    it('finds a client with a subscription term and a monthly quota with those fields', async () => {
      const subscriber = buildClientRecord({
        validFrom: new Date('2026-11-01T00:00:00.000Z'),
        validUntil: new Date('2027-11-01T00:00:00.000Z'),
        monthlyBytes: 10 * 1024 ** 3,
      });
      const registry = await given([subscriber]);
      expect(await registry.find('acme')).to.deep.equal(subscriber);
    });

    it('lists every client, enabled or not, with all its fields', async () => {
      const registry = await given([buildClientRecord(), buildClientRecord({ clientId: 'beta', indexPath: 'b.csv', enabled: false })]);
      const all = [...(await registry.all())].sort((a, b) => (a.clientId < b.clientId ? -1 : 1));
      expect(all).to.deep.equal([buildClientRecord(), buildClientRecord({ clientId: 'beta', indexPath: 'b.csv', enabled: false })]);
    });

    it('returns undefined for an unknown client', async () => {
      const registry = await given([buildClientRecord()]);
      expect(await registry.find('nobody')).to.equal(undefined);
    });

    it('matches client ids exactly, case included', async () => {
      const registry = await given([buildClientRecord()]);
      expect(await registry.find('ACME')).to.equal(undefined);
      expect(await registry.find('acme ')).to.equal(undefined);
    });

    it('does not mistake names of Object.prototype for clients', async () => {
      const registry = await given([buildClientRecord()]);
      expect(await registry.find('constructor')).to.equal(undefined);
      expect(await registry.find('toString')).to.equal(undefined);
    });
  });
}

describe('InMemoryClientRegistry', () => {
  describe('add', () => {
    it('registers a client and replaces one with the same id', async () => {
      const registry = new InMemoryClientRegistry().add(buildClientRecord());
      registry.add(buildClientRecord({ enabled: false }));
      expect((await registry.find('acme'))?.enabled).to.equal(false);
    });
  });
});
