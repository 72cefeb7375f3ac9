import { expect } from 'chai';
import { MemoryChangeLog } from '../../src/adapters/changes/memory-change-log.js';
import { MemoryChecksumStore } from '../../src/adapters/changes/memory-checksum-store.js';
import { MemoryScanStateStore } from '../../src/adapters/changes/memory-scan-state-store.js';
import { NodeContentHasher } from '../../src/adapters/changes/node-content-hasher.js';
import { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { BlobIndexSource } from '../../src/adapters/index/blob-index-source.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { ChangeScanner } from '../../src/application/change-scanner.js';
import { ChangeScannerOverBudget } from '../../src/domain/errors.js';
import type { BlobStore, BlobSummary, ClientRecord } from '../../src/domain/ports.js';
import type { SliceBudget } from '../../src/domain/slices.js';
import { originZeroClock } from '../support/change-log-origin.js';
import { collectGarbage } from '../support/heap.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';

const MiB = 1024 * 1024;
const slices: SliceBudget = { yieldToLoop: () => new Promise((resolve) => setImmediate(resolve)), stepsPerSlice: 10_000 };
const clock = { now: () => new Date('2026-11-27T10:00:00Z') };

/** `clients` clients, each with an index of `rows` rows of its own symbols, over `blobs` stored files. */
function fleet(clients: number, rows: number, blobs: number): { store: MemoryBlobStore; registry: InMemoryClientRegistry } {
  const store = new MemoryBlobStore();
  for (let i = 0; i < blobs; i += 1) store.put(`equities/daily/${i}.parquet`, 'x');
  const records: ClientRecord[] = [];
  for (let c = 0; c < clients; c += 1) {
    records.push({ clientId: `c${c}`, secretHash: 'x', indexPath: `indexes/c${c}.csv`, enabled: true });
    store.put(`indexes/c${c}.csv`, buildIndexCsv(Array.from({ length: rows }, (_, i) => buildIndexRow({ Symbol: `C${c}_S${i}`, FileName: `equities/daily/${i % blobs}.parquet` }))));
  }
  return { store, registry: new InMemoryClientRegistry(records) };
}

/**
 * The memory store's listing, as Azure's and the folder's are: new strings and dates for each blob
 * (the memory store hands out the ones it keeps, which would cost the scanner nothing).
 */
function freshListing(store: MemoryBlobStore): BlobStore {
  return {
    getProperties: (path) => store.getProperties(path),
    existing: (paths) => store.existing(paths),
    probe: () => store.probe(),
    read: (path, options) => store.read(path, options),
    list: async function* (prefix: string): AsyncIterable<BlobSummary> {
      for await (const blob of store.list(prefix)) {
        yield { ...blob, path: Buffer.from(blob.path).toString(), etag: Buffer.from(blob.etag).toString(), lastModified: new Date(blob.lastModified.getTime()) };
      }
    },
  };
}

function scannerOver(store: MemoryBlobStore, registry: InMemoryClientRegistry, maxBytes: number, state = new MemoryScanStateStore(), log = new MemoryChangeLog({ clock: originZeroClock })): ChangeScanner {
  const fresh = freshListing(store);
  return new ChangeScanner({
    store: fresh,
    indexes: new BlobIndexSource(fresh, 64 * MiB),
    registry,
    log,
    checksums: new MemoryChecksumStore(),
    hasher: new NodeContentHasher(),
    state,
    clock,
    backlogBytesPerSecond: 0,
    slices,
    maxBytes,
  });
}

describe('ChangeScanner memory (CHANGES_SCANNER_MB)', function () {
  this.timeout(60_000);

  /**
   * What the scanner keeps after a scan (its listing, the rows of each index, their lookups, and the
   * state it saved, the same objects), measured as V8 heap after full collections, against what it
   * counts. The count must not be below what it holds, nor far above it. Each row names a file of
   * its own, the costliest shape for the lookup by path (rows that share their files cost less, and
   * are counted the same).
   */
  it('counts at least what a scan of 20,000 blobs and 5 indexes of 20,000 rows keeps in the heap, and at most twice it', async function () {
    // A scan of a small fleet first: the code it runs is compiled before the heap is measured.
    const small = fleet(2, 100, 100);
    await scannerOver(small.store, small.registry, 64 * MiB).scan();
    const { store, registry } = fleet(5, 20_000, 20_000);
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    const scanner = scannerOver(store, registry, 1024 * MiB);
    const report = await scanner.scan();
    collectGarbage();
    const kept = process.memoryUsage().heapUsed - before;
    expect(report).to.include({ first: true, listed: 20_005, indexesRead: 5 });
    expect(report.heldBytes, `counted ${report.heldBytes} B, the heap kept ${kept} B`).to.be.at.least(kept);
    expect(report.heldBytes, `counted ${report.heldBytes} B, the heap kept ${kept} B`).to.be.at.most(2 * kept);
    // Kept alive until here, so that the heap measured above holds it.
    expect(scanner).to.be.an('object');
  });

  it('stops a scan that would hold more than its budget, in the middle of an index, and records nothing', async function () {
    const { store, registry } = fleet(3, 20_000, 1_000);
    const state = new MemoryScanStateStore();
    const log = new MemoryChangeLog({ clock: originZeroClock });
    // About 1,000 blobs and 1.5 indexes' rows.
    const budget = 1_000 * 300 + 30_000 * 330;
    const failure = await scannerOver(store, registry, budget, state, log).scan().then(
      () => expect.fail('the scan is over its budget'),
      (error: unknown) => error,
    );
    expect(failure).to.be.instanceOf(ChangeScannerOverBudget);
    const over = failure as ChangeScannerOverBudget;
    expect(over.budgetBytes).to.equal(budget);
    expect(over.heldBytes).to.be.above(budget);
    expect(over.counted.blobs).to.equal(1_003);
    // Stopped while reading the second index, not after reading them all.
    expect(over.counted.indexes).to.equal(1);
    expect(over.counted.rows).to.be.above(20_000).and.below(40_000);
    expect(over.message).to.match(/^the change scanner would hold more than its budget of 9\.7 MiB: 9\.7 MiB counted when it stopped, for a listing of 1003 blobs and \d+ rows of 1 indexes$/);
    expect(state.saves).to.equal(0);
    expect(await log.head()).to.equal(0);

    // With the budget raised (CHANGES_SCANNER_MB), the same stores scan.
    const report = await scannerOver(store, registry, 64 * MiB, state, log).scan();
    expect(report).to.include({ first: true, indexesRead: 3 });
    expect(report.heldBytes).to.be.above(budget);
    expect(state.saves).to.equal(1);
  });

  it('counts the listing first: a container too large for the budget stops the scan before any index is read', async function () {
    const { store, registry } = fleet(1, 10, 5_000);
    const failure = await scannerOver(store, registry, 100_000).scan().then(
      () => expect.fail('the listing is over the budget'),
      (error: unknown) => error as ChangeScannerOverBudget,
    );
    expect(failure).to.be.instanceOf(ChangeScannerOverBudget);
    expect(failure.counted).to.deep.include({ indexes: 0, rows: 0 });
    expect(failure.counted.blobs).to.be.below(5_000);
  });

  it('counts the rows it kept from the last scan in a later scan, as much as the rows it read', async function () {
    const { store, registry } = fleet(2, 5_000, 100);
    const scanner = scannerOver(store, registry, 64 * MiB);
    const first = await scanner.scan();
    store.put('equities/daily/0.parquet', 'y');
    const next = await scanner.scan();
    expect(next).to.include({ first: false, indexesRead: 0 });
    // The same rows, and the same listing but for one ETag's characters.
    expect(next.heldBytes).to.be.closeTo(first.heldBytes, 64);
  });
});
