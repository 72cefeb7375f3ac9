import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { BlobScanStateStore } from '../../src/adapters/changes/blob-scan-state-store.js';
import { FileScanStateStore } from '../../src/adapters/changes/file-scan-state-store.js';
import { MemoryScanStateStore } from '../../src/adapters/changes/memory-scan-state-store.js';
import type { ScanState, ScanStateStore } from '../../src/domain/ports.js';
import { createTestContainer, sharedAzurite } from '../support/azurite.js';

/** The ScanStateStore port's contract, run against every adapter. */

const adapters: { name: string; make: () => Promise<{ open: () => ScanStateStore; close: () => Promise<void> }> }[] = [
  {
    name: 'MemoryScanStateStore',
    make: async () => {
      const store = new MemoryScanStateStore();
      return { open: () => store, close: async () => undefined };
    },
  },
  {
    name: 'FileScanStateStore (a temporary folder)',
    make: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'dfg-scan-state-'));
      return { open: () => new FileScanStateStore(join(dir, 'changes', 'scan-state.jsonl')), close: () => rm(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'BlobScanStateStore (Azurite, a system container it creates)',
    make: async () => {
      const { connectionString } = await sharedAzurite();
      const probe = await createTestContainer(connectionString, 'dfg-system-state');
      // A container that does not exist yet: the first save creates it.
      await probe.delete();
      return { open: () => new BlobScanStateStore(probe), close: async () => void (await probe.deleteIfExists()) };
    },
  },
];

const state: ScanState = {
  scannedAt: new Date('2026-11-24T10:00:00Z'),
  blobs: new Map([
    ['data/a.csv', { etag: '"0x1"', size: 3_000_000_000, lastModified: new Date('2026-11-20T08:00:00Z') }],
    ['dados/relatório "ç".csv', { etag: '"0x2"', size: 0, lastModified: new Date('2026-11-21T08:00:00Z') }],
  ]),
  indexes: new Map([
    ['indexes/acme.csv', { version: '"0x9"', rows: [{ symbol: 'A', fileName: 'data/a.csv', from: null, until: 1_800_000_000_000 }] }],
    ['indexes/gone.csv', { version: undefined, rows: [] }],
  ]),
  clients: new Map([['acme', 'indexes/acme.csv'], ['beta', 'indexes/gone.csv']]),
  backlog: ['data/a.csv'],
  pending: {
    after: 41,
    changes: [{ clientId: 'acme', type: 'file.updated', time: new Date('2026-11-24T10:00:00Z'), file: { symbol: 'A', fileName: 'data/a.csv', size: 3, etag: '"0x1"', uploaded: new Date('2026-11-20T08:00:00Z'), sha256: 'ab'.repeat(32) } }],
  },
};

for (const adapter of adapters) {
  describe(`ScanStateStore contract: ${adapter.name}`, function () {
    let subject: { open: () => ScanStateStore; close: () => Promise<void> };

    beforeEach(async function () {
      subject = await adapter.make();
    });

    afterEach(async function () {
      await subject.close();
    });

    it('has no state before the first save', async function () {
      expect(await subject.open().load()).to.equal(undefined);
    });

    it('gives back, to another instance, exactly the state saved last', async function () {
      await subject.open().save({ ...state, backlog: [] });
      await subject.open().save(state);
      expect(await subject.open().load()).to.deep.equal(state);
      const { pending: _pending, ...withoutPending } = state;
      await subject.open().save(withoutPending);
      expect(await subject.open().load()).to.deep.equal(withoutPending);
    });
  });
}
