import { expect } from 'chai';
import { EXISTENCE_CHECK, findExistingBlobs } from '../../src/adapters/storage/existing-blobs.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { BlobProperties, BlobStore, BlobSummary } from '../../src/domain/ports.js';

/** Counts the calls made to a store and the most that were in flight at once. */
class CountingStore implements Pick<BlobStore, 'getProperties' | 'list'> {
  propertyReads = 0;
  listings: string[] = [];
  inFlight = 0;
  maxInFlight = 0;

  constructor(private readonly inner: MemoryBlobStore) {}

  async getProperties(path: string): Promise<BlobProperties | undefined> {
    this.propertyReads += 1;
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    // Yield a whole event-loop turn, so that every call the bound lets start is in flight together.
    await new Promise((resolve) => setImmediate(resolve));
    this.inFlight -= 1;
    return this.inner.getProperties(path);
  }

  async *list(prefix: string): AsyncIterable<BlobSummary> {
    this.listings.push(prefix);
    yield* this.inner.list(prefix);
  }

}

describe('findExistingBlobs', function () {
  it('lists a folder holding many wanted files instead of probing each one', async function () {
    const memory = new MemoryBlobStore();
    const paths = Array.from({ length: 500 }, (_, i) => `quotes/file-${i}.parquet`);
    paths.filter((_, i) => i % 2 === 0).forEach((path) => memory.put(path, 'x'));
    const store = new CountingStore(memory);
    const found = await findExistingBlobs(store, paths, EXISTENCE_CHECK);
    expect(found.size).to.equal(250);
    expect(store.listings).to.deep.equal(['quotes/']);
    expect(store.propertyReads).to.equal(0);
  });

  it('probes scattered files with bounded concurrency', async function () {
    const memory = new MemoryBlobStore();
    const paths = Array.from({ length: 40 }, (_, i) => `folder-${i}/file.csv`);
    paths.slice(0, 10).forEach((path) => memory.put(path, 'x'));
    const store = new CountingStore(memory);
    const found = await findExistingBlobs(store, paths, { concurrency: 4, listThreshold: 8 });
    expect(found.size).to.equal(10);
    expect(store.propertyReads).to.equal(40);
    expect(store.maxInFlight).to.equal(4);
  });

  it('ignores blobs under a listed prefix that the catalog does not want', async function () {
    const memory = new MemoryBlobStore();
    const wanted = Array.from({ length: 10 }, (_, i) => `a/${i}.csv`);
    wanted.forEach((path) => memory.put(path, 'x'));
    memory.put('a/unlisted.csv', 'x');
    memory.put('a/sub/deeper.csv', 'x');
    const found = await findExistingBlobs(new CountingStore(memory), wanted, EXISTENCE_CHECK);
    expect([...found.keys()].sort()).to.deep.equal([...wanted].sort());
  });

  it('reports each found file with its size', async function () {
    const memory = new MemoryBlobStore();
    memory.put('root.csv', '12345');
    const found = await findExistingBlobs(memory, ['root.csv', 'missing.csv'], EXISTENCE_CHECK);
    expect(found.get('root.csv')?.size).to.equal(5);
    expect(found.has('missing.csv')).to.equal(false);
  });
});
