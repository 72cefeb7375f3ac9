import { expect } from 'chai';
import { EXISTENCE_CHECK, findExistingBlobs, type ListingStore } from '../../src/adapters/storage/existing-blobs.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { BlobProperties, BlobSummary } from '../../src/domain/ports.js';

/** About what one blob of a List Blobs answer costs in XML on Azure (name, properties, tags). */
const BYTES_PER_LISTED_BLOB = 600;

/** Counts the calls made to a store and the most that were in flight at once. */
class CountingStore implements ListingStore {
  propertyReads = 0;
  listings: string[] = [];
  /** Blobs handed out by listings. */
  listed = 0;
  /** Listing calls: one per page of the size asked for. */
  pages = 0;
  /** Blobs the pages begun hold at most: a page is read whole, however few of it the caller takes. */
  pagedBlobs = 0;
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

  async *list(prefix: string, pageSize = EXISTENCE_CHECK.blobsPerListCall): AsyncIterable<BlobSummary> {
    this.listings.push(prefix);
    let inPage = 0;
    for await (const blob of this.inner.list(prefix)) {
      // A page is read whole, however few of its blobs the caller then looks at.
      if (inPage === 0) {
        this.pages += 1;
        this.pagedBlobs += pageSize;
      }
      inPage = (inPage + 1) % pageSize;
      this.listed += 1;
      yield blob;
    }
  }

  /** Property reads plus listing pages. */
  get calls(): number {
    return this.propertyReads + this.pages;
  }

  /** What the listings read, at the ~600 bytes of List Blobs XML a blob costs on Azure (whole pages). */
  get listedBytes(): number {
    return this.pagedBlobs * BYTES_PER_LISTED_BLOB;
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
    expect(store.listings).to.deep.equal(['quotes/file-']);
    expect(store.propertyReads).to.equal(0);
  });

  it('when 10 wanted files lie among 200,000 blobs of their folder, costs at most 20 storage calls and finds each', async function () {
    this.timeout(60_000);
    const memory = new MemoryBlobStore();
    for (let i = 0; i < 200_000; i += 1) memory.put(`big/file-${String(i).padStart(6, '0')}.csv`, 'x');
    const wanted = Array.from({ length: 10 }, (_, i) => `big/file-${String(i * 19_999).padStart(6, '0')}.csv`);
    const store = new CountingStore(memory);
    const found = await findExistingBlobs(store, [...wanted, 'big/file-missing.csv'], EXISTENCE_CHECK);
    expect([...found.keys()].sort()).to.deep.equal([...wanted].sort());
    expect(store.calls).to.be.at.most(20);
    expect(store.listedBytes).to.be.at.most(256 * 1024);
  });

  it('when a 10-file catalog lies in a sparse folder of 20,000 blobs, costs at most 20 calls and 256 KiB of listing, and finds each', async function () {
    const memory = new MemoryBlobStore();
    for (let i = 0; i < 20_000; i += 1) memory.put(`sparse/${String(i).padStart(5, '0')}.parquet`, 'x');
    const wanted = Array.from({ length: 10 }, (_, i) => `sparse/${String(i * 1_999).padStart(5, '0')}.parquet`);
    const store = new CountingStore(memory);
    const found = await findExistingBlobs(store, wanted, EXISTENCE_CHECK);
    expect([...found.keys()].sort()).to.deep.equal([...wanted].sort());
    expect(store.calls).to.be.at.most(20);
    expect(store.listedBytes).to.be.at.most(256 * 1024);
  });

  it('lists only as far as the prefix the wanted files share: 30 daily files among other symbols cost one listing', async function () {
    const memory = new MemoryBlobStore();
    for (const symbol of ['PETR4', 'VALE3', 'ITUB4']) {
      for (let day = 1; day <= 30; day += 1) memory.put(`daily/${symbol}_2024-01-${String(day).padStart(2, '0')}.csv`, 'x');
    }
    const wanted = Array.from({ length: 30 }, (_, i) => `daily/VALE3_2024-01-${String(i + 1).padStart(2, '0')}.csv`);
    const store = new CountingStore(memory);
    const found = await findExistingBlobs(store, wanted, EXISTENCE_CHECK);
    expect(found.size).to.equal(30);
    expect(store.listings).to.deep.equal(['daily/VALE3_2024-01-']);
    expect(store.listed).to.equal(30);
    expect(store.calls).to.equal(1);
  });

  it('probes scattered files with bounded concurrency', async function () {
    const memory = new MemoryBlobStore();
    const paths = Array.from({ length: 40 }, (_, i) => `folder-${i}/file.csv`);
    paths.slice(0, 10).forEach((path) => memory.put(path, 'x'));
    const store = new CountingStore(memory);
    const found = await findExistingBlobs(store, paths, { ...EXISTENCE_CHECK, concurrency: 4 });
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
