import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { MemoryChangeLog } from '../../src/adapters/changes/memory-change-log.js';
import { originZeroClock } from '../support/change-log-origin.js';
import { MemoryChecksumStore } from '../../src/adapters/changes/memory-checksum-store.js';
import { MemoryScanStateStore } from '../../src/adapters/changes/memory-scan-state-store.js';
import { NodeContentHasher } from '../../src/adapters/changes/node-content-hasher.js';
import { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { BlobIndexSource } from '../../src/adapters/index/blob-index-source.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { ChangeScanner } from '../../src/application/change-scanner.js';
import type { LoggedChange } from '../../src/domain/changes.js';
import type { SliceBudget } from '../../src/domain/slices.js';
import type { BlobReadOptions, BlobStore, BlobSummary, ChangeLog, ClientRecord, Clock, ScanStateStore } from '../../src/domain/ports.js';
import { buildIndexCsv, buildIndexRow, type IndexRow } from '../support/index-csv-builder.js';

/** A store that counts what it is asked. */
class CountingStore implements BlobStore {
  lists = 0;
  reads = 0;
  readBytes = 0;
  other = 0;
  constructor(readonly inner: MemoryBlobStore) {}
  getProperties(path: string) {
    this.other += 1;
    return this.inner.getProperties(path);
  }
  list(prefix: string): AsyncIterable<BlobSummary> {
    this.lists += 1;
    return this.inner.list(prefix);
  }
  existing(paths: readonly string[]) {
    this.other += 1;
    return this.inner.existing(paths);
  }
  probe() {
    return this.inner.probe();
  }
  async read(path: string, options: BlobReadOptions) {
    this.reads += 1;
    const properties = await this.inner.getProperties(path);
    this.readBytes += properties?.size ?? 0;
    return this.inner.read(path, options);
  }
}

class FixedClock implements Clock {
  constructor(public at: Date) {}
  now(): Date {
    return this.at;
  }
  advance(ms: number): void {
    this.at = new Date(this.at.getTime() + ms);
  }
}

const t0 = new Date('2026-11-24T10:00:00Z');

/** Turns of the event loop the scanner gave, in slices of 1,000 steps. */
let turns = 0;
const slices: SliceBudget = {
  yieldToLoop: () => {
    turns += 1;
    return new Promise((resolve) => setImmediate(resolve));
  },
  stepsPerSlice: 1_000,
};
const minute = 60_000;

function client(clientId: string, indexPath = `indexes/${clientId}.csv`): ClientRecord {
  return { clientId, secretHash: 'x', indexPath, enabled: true };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

describe('ChangeScanner', function () {
  let blobs: MemoryBlobStore;
  let store: CountingStore;
  let registry: InMemoryClientRegistry;
  let log: MemoryChangeLog;
  let checksums: MemoryChecksumStore;
  let state: MemoryScanStateStore;
  let clock: FixedClock;

  function scanner(stateStore: ScanStateStore = state): ChangeScanner {
    return new ChangeScanner({
      store,
      indexes: new BlobIndexSource(store, 10 * 1024 * 1024),
      registry,
      log,
      checksums,
      hasher: new NodeContentHasher(),
      state: stateStore,
      clock,
      backlogBytesPerSecond: 0,
      slices,
      maxBytes: 64 * 1024 * 1024,
    });
  }

  function index(clientId: string, rows: readonly IndexRow[]): void {
    blobs.put(`indexes/${clientId}.csv`, buildIndexCsv(rows));
  }

  async function changesOf(clientId: string): Promise<string[]> {
    return (await log.read(clientId, 0, 1000)).map((c: LoggedChange) => `${c.type} ${c.file.symbol}`);
  }

  beforeEach(function () {
    blobs = new MemoryBlobStore();
    store = new CountingStore(blobs);
    registry = new InMemoryClientRegistry([client('acme'), client('beta')]);
    log = new MemoryChangeLog({ clock: originZeroClock });
    checksums = new MemoryChecksumStore();
    state = new MemoryScanStateStore();
    clock = new FixedClock(t0);
    blobs.put('data/a.csv', 'a1');
    blobs.put('data/b.csv', 'b1');
    index('acme', [buildIndexRow({ Symbol: 'A' }), buildIndexRow({ Symbol: 'B' })]);
    index('beta', [buildIndexRow({ Symbol: 'B' })]);
  });

  describe('on the first scan', function () {
    it('records what exists without a change', async function () {
      const report = await scanner().scan();
      expect(report).to.include({ first: true, changes: 0, listed: 4 });
      expect(await log.head()).to.equal(0);
    });
  });

  describe('when a file listed in an index is uploaded', function () {
    it('releases it to the clients whose index lists it only, with its SHA-256 and size', async function () {
      const s = scanner();
      await s.scan();
      index('acme', [buildIndexRow({ Symbol: 'A' }), buildIndexRow({ Symbol: 'B' }), buildIndexRow({ Symbol: 'C' })]);
      await s.scan();
      expect(await changesOf('acme')).to.deep.equal([]);
      clock.advance(minute);
      blobs.put('data/c.csv', 'c-content');
      const report = await s.scan();
      expect(report.changes).to.equal(1);
      const [change] = await log.read('acme', 0, 10);
      expect(change?.type).to.equal('file.released');
      expect(change?.file).to.include({ symbol: 'C', fileName: 'data/c.csv', size: 9, sha256: sha256('c-content') });
      expect(change?.time).to.deep.equal(clock.now());
      expect(await changesOf('beta')).to.deep.equal([]);
    });
  });

  describe('when a row is added to an index for a file stored long ago', function () {
    it('releases it to that client only', async function () {
      blobs.put('data/z.csv', 'old');
      const s = scanner();
      await s.scan();
      index('beta', [buildIndexRow({ Symbol: 'B' }), buildIndexRow({ Symbol: 'Z' })]);
      await s.scan();
      expect(await changesOf('beta')).to.deep.equal(['file.released Z']);
      expect(await changesOf('acme')).to.deep.equal([]);
    });
  });

  describe('when a release window opens and then closes', function () {
    it('releases the file when it opens and withdraws it when it closes, with no index or storage change', async function () {
      const from = new Date(t0.getTime() + 10 * minute).toISOString();
      const until = new Date(t0.getTime() + 20 * minute).toISOString();
      index('acme', [buildIndexRow({ Symbol: 'A' }), buildIndexRow({ Symbol: 'B', AvailableFrom: from, AvailableUntil: until })]);
      const s = scanner();
      await s.scan();
      clock.advance(9 * minute);
      await s.scan();
      expect(await changesOf('acme')).to.deep.equal([]);
      clock.advance(minute);
      await s.scan();
      expect(await changesOf('acme')).to.deep.equal(['file.released B']);
      clock.advance(10 * minute);
      await s.scan();
      expect(await changesOf('acme')).to.deep.equal(['file.released B', 'file.withdrawn B']);
      expect(await changesOf('beta')).to.deep.equal([]);
    });

    it('releases nothing when the window opens on a file not stored yet, and releases it when it is uploaded', async function () {
      const from = new Date(t0.getTime() + 5 * minute).toISOString();
      index('acme', [buildIndexRow({ Symbol: 'D', AvailableFrom: from })]);
      const s = scanner();
      await s.scan();
      clock.advance(6 * minute);
      await s.scan();
      expect(await changesOf('acme')).to.deep.equal([]);
      clock.advance(minute);
      blobs.put('data/d.csv', 'd');
      await s.scan();
      expect(await changesOf('acme')).to.deep.equal(['file.released D']);
    });
  });

  describe('when a new version is stored', function () {
    it('tells every client whose view has it that it was updated, with the new ETag and SHA-256', async function () {
      const s = scanner();
      await s.scan();
      blobs.put('data/b.csv', 'b2-longer');
      await s.scan();
      expect(await changesOf('acme')).to.deep.equal(['file.updated B']);
      expect(await changesOf('beta')).to.deep.equal(['file.updated B']);
      const [change] = await log.read('beta', 0, 1);
      expect(change?.file).to.include({ size: 9, etag: (await blobs.getProperties('data/b.csv'))?.etag, sha256: sha256('b2-longer') });
    });
  });

  describe('when a file is deleted or its row removed', function () {
    it('withdraws it from the clients that saw it', async function () {
      const s = scanner();
      await s.scan();
      blobs.delete('data/b.csv');
      index('acme', [buildIndexRow({ Symbol: 'B' })]);
      await s.scan();
      expect(await changesOf('acme')).to.deep.equal(['file.withdrawn A', 'file.withdrawn B']);
      expect(await changesOf('beta')).to.deep.equal(['file.withdrawn B']);
    });
  });

  describe('when a client is added, disabled or moves to another index', function () {
    it('records a new client as it is, and diffs a client that moved between its two indexes', async function () {
      const s = scanner();
      await s.scan();
      registry.add(client('gamma'));
      index('gamma', [buildIndexRow({ Symbol: 'A' })]);
      await s.scan();
      expect(await changesOf('gamma')).to.deep.equal([]);
      registry.add(client('beta', 'indexes/acme.csv'));
      await s.scan();
      expect(await changesOf('beta')).to.deep.equal(['file.released A']);
    });
  });

  describe('its cost', function () {
    it('lists storage once per scan and reads only new versions and changed indexes: 100,000 blobs, 100 clients, 100 changed', async function () {
      this.timeout(60_000);
      for (let i = 0; i < 100_000; i += 1) blobs.put(`bulk/f${i}.csv`, `x${i}`);
      const clients: ClientRecord[] = [];
      for (let c = 0; c < 100; c += 1) {
        clients.push(client(`c${c}`));
        index(`c${c}`, Array.from({ length: 100 }, (_, i) => buildIndexRow({ Symbol: `S${c * 1000 + i}`, FileName: `bulk/f${c * 1000 + i}.csv` })));
      }
      registry = new InMemoryClientRegistry(clients);
      const s = scanner();
      await s.scan();
      store.lists = 0;
      store.reads = 0;
      store.readBytes = 0;
      store.other = 0;
      turns = 0;
      for (let c = 0; c < 100; c += 1) blobs.put(`bulk/f${c * 1000}.csv`, `y${c}`);
      const report = await s.scan();
      // Two passes over 100,000 blobs in slices of 1,000: the thread is shared.
      expect(turns).to.be.at.least(200);
      expect(store.lists).to.equal(1);
      expect(store.reads).to.equal(100);
      expect(store.readBytes).to.equal(report.hashedBytes);
      expect(store.other).to.equal(0);
      expect(report).to.include({ listed: 100_104, changed: 100, changes: 100, indexesRead: 0 });
      expect(await changesOf('c7')).to.deep.equal(['file.updated S7000']);
      index('c3', Array.from({ length: 101 }, (_, i) => buildIndexRow({ Symbol: `S${3000 + i}`, FileName: `bulk/f${3000 + i}.csv` })));
      store.reads = 0;
      store.other = 0;
      const next = await s.scan();
      expect(next.indexesRead).to.equal(1);
      // The new index version is read (its properties and bytes), and hashed as any new version.
      expect(store.reads).to.equal(2);
      expect(await changesOf('c3')).to.deep.equal(['file.updated S3000', 'file.released S3100']);
    });
  });

  describe('when another instance takes over', function () {
    it('continues from the saved state without repeating or losing a change', async function () {
      await scanner().scan();
      blobs.put('data/a.csv', 'a2');
      await scanner().scan();
      blobs.put('data/a.csv', 'a3');
      blobs.delete('data/b.csv');
      await scanner().scan();
      expect(await changesOf('acme')).to.deep.equal(['file.updated A', 'file.updated A', 'file.withdrawn B']);
      expect(await changesOf('beta')).to.deep.equal(['file.withdrawn B']);
    });

    it('never withdraws what a window opened when the new instance\'s clock is behind the last one\'s', async function () {
      const from = new Date(t0.getTime() + 5 * minute).toISOString();
      index('acme', [buildIndexRow({ Symbol: 'B', AvailableFrom: from })]);
      await scanner().scan();
      clock.advance(6 * minute);
      await scanner().scan();
      expect(await changesOf('acme')).to.deep.equal(['file.released B']);
      clock.advance(-2 * minute);
      blobs.put('data/b.csv', 'b, second version');
      await scanner().scan();
      clock.advance(3 * minute);
      await scanner().scan();
      expect(await changesOf('acme')).to.deep.equal(['file.released B', 'file.updated B']);
    });

    it('appends the changes of a scan that saved its state but died before appending them, once', async function () {
      await scanner().scan();
      blobs.put('data/a.csv', 'a2');
      const failingLog: ChangeLog = {
        append: async () => {
          throw new Error('the instance died');
        },
        read: (...args) => log.read(...args),
        head: () => log.head(),
        horizon: () => log.horizon(),
        prunedThrough: (clientId) => log.prunedThrough(clientId),
        prune: (before) => log.prune(before),
      };
      const dying = new ChangeScanner({
        store,
        indexes: new BlobIndexSource(store, 1 << 20),
        registry,
        log: failingLog,
        checksums,
        hasher: new NodeContentHasher(),
        state,
        clock,
        backlogBytesPerSecond: 0,
        slices,
        maxBytes: 64 * 1024 * 1024,
      });
      await dying.scan().then(
        () => expect.fail('the append failed'),
        (error: Error) => expect(error.message).to.equal('the instance died'),
      );
      await scanner().scan();
      await scanner().scan();
      expect(await changesOf('acme')).to.deep.equal(['file.updated A']);
    });
  });

  describe('in the background', function () {
    it('hashes the versions stored before the first scan at the bounded rate', async function () {
      const s = new ChangeScanner({
        store,
        indexes: new BlobIndexSource(store, 1 << 20),
        registry,
        log,
        checksums,
        hasher: new NodeContentHasher(),
        state,
        clock,
        backlogBytesPerSecond: 1,
        slices,
        maxBytes: 64 * 1024 * 1024,
      });
      const first = await s.scan();
      expect(first.backlogLeft).to.equal(4);
      clock.advance(1000);
      const next = await s.scan();
      // One second at one byte a second: one version (at least one is read per scan with a budget).
      expect(next.backlogLeft).to.equal(3);
      clock.advance(300_000);
      await s.scan();
      const a = await blobs.getProperties('data/a.csv');
      expect((await checksums.lookup([{ path: 'data/a.csv', etag: a?.etag as string }])).get('data/a.csv')).to.equal(sha256('a1'));
    });
  });
});
