import { expect } from 'chai';
import { BlobIndexSource } from '../../src/adapters/index/blob-index-source.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { IndexMalformed } from '../../src/domain/errors.js';

describe('BlobIndexSource', function () {
  it('loads an index with its entity tag as version', async function () {
    const store = new MemoryBlobStore();
    store.put('indexes/acme.csv', '\uFEFFSymbol,FileName\r\nA,a.csv\r\n');
    const source = new BlobIndexSource(store);
    const loaded = await source.load('indexes/acme.csv');
    expect(loaded?.records.map((r) => r.Symbol)).to.deep.equal(['A']);
    expect(loaded?.version).to.equal((await store.getProperties('indexes/acme.csv'))?.etag);
    expect(await source.version('indexes/acme.csv')).to.equal(loaded?.version);
  });

  it('returns undefined when there is no index', async function () {
    const source = new BlobIndexSource(new MemoryBlobStore());
    expect(await source.load('indexes/none.csv')).to.equal(undefined);
    expect(await source.version('indexes/none.csv')).to.equal(undefined);
  });

  it('refuses an index that is not UTF-8', async function () {
    const store = new MemoryBlobStore();
    store.put('indexes/latin1.csv', Uint8Array.from([...Buffer.from('Symbol,FileName\nA,'), 0xe7, 0x0a]));
    const failure = await new BlobIndexSource(store).load('indexes/latin1.csv').catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(IndexMalformed);
    expect((failure as Error).message).to.match(/UTF-8/);
  });

  it('refuses an index larger than its size bound without reading it', async function () {
    const store = new MemoryBlobStore();
    store.put('indexes/huge.csv', `Symbol,FileName\n${'A,a.csv\n'.repeat(100)}`);
    const failure = await new BlobIndexSource(store, 64).load('indexes/huge.csv').catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(IndexMalformed);
    expect((failure as Error).message).to.match(/more than the 64 allowed/);
  });
});
