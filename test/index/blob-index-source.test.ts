import { expect } from 'chai';
import { BlobIndexSource } from '../../src/adapters/index/blob-index-source.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { IndexMalformed } from '../../src/domain/errors.js';
import type { IndexRecord, IndexRowSink, IndexRowWarning } from '../../src/domain/ports.js';

/** Keeps what the source hands it. */
class CollectingSink implements IndexRowSink {
  readonly records: IndexRecord[] = [];
  readonly warnings: IndexRowWarning[] = [];
  record(record: IndexRecord): void {
    this.records.push(record);
  }
  rejected(warning: IndexRowWarning): void {
    this.warnings.push(warning);
  }
}
const collect = () => new CollectingSink();
const megabyte = 1024 * 1024;

describe('BlobIndexSource', function () {
  it('loads an index with its entity tag as version', async function () {
    const store = new MemoryBlobStore();
    store.put('indexes/acme.csv', '\uFEFFSymbol,FileName\r\nA,a.csv\r\n');
    const source = new BlobIndexSource(store, megabyte);
    const loaded = await source.load('indexes/acme.csv', collect);
    expect(loaded?.rows.records.map((r) => r.Symbol)).to.deep.equal(['A']);
    expect(loaded?.version).to.equal((await store.getProperties('indexes/acme.csv'))?.etag);
    expect(await source.version('indexes/acme.csv')).to.equal(loaded?.version);
  });

  it('returns undefined when there is no index', async function () {
    const source = new BlobIndexSource(new MemoryBlobStore(), megabyte);
    expect(await source.load('indexes/none.csv', collect)).to.equal(undefined);
    expect(await source.version('indexes/none.csv')).to.equal(undefined);
  });

  it('refuses an index that is not UTF-8', async function () {
    const store = new MemoryBlobStore();
    store.put('indexes/latin1.csv', Uint8Array.from([...Buffer.from('Symbol,FileName\nA,'), 0xe7, 0x0a]));
    const failure = await new BlobIndexSource(store, megabyte).load('indexes/latin1.csv', collect).catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(IndexMalformed);
    expect((failure as Error).message).to.match(/UTF-8/);
  });

  it('refuses an index larger than its size bound without reading it', async function () {
    const store = new MemoryBlobStore();
    store.put('indexes/huge.csv', `Symbol,FileName\n${'A,a.csv\n'.repeat(100)}`);
    const failure = await new BlobIndexSource(store, 64).load('indexes/huge.csv', collect).catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(IndexMalformed);
    expect((failure as Error).message).to.match(/more than the 64 allowed \(INDEX_MAX_MB\)/);
  });

  it('reads an index bigger than the old fixed 16 MiB when INDEX_MAX_MB allows it, streaming it row by row', async function () {
    this.timeout(60_000);
    const store = new MemoryBlobStore();
    const description = 'Cotações diárias do mercado à vista, ajustadas por proventos';
    const rows = Array.from({ length: 200_000 }, (_, i) => `S${i},"${description}",equities/${i % 100}/S${i}.parquet`);
    store.put('indexes/big.csv', `\uFEFFSymbol,ShortDescriptionPt,FileName\r\n${rows.join('\r\n')}\r\n`);
    const size = (await store.getProperties('indexes/big.csv'))?.size ?? 0;
    expect(size).to.be.greaterThan(16 * megabyte);
    let recorded = 0;
    let last: IndexRecord | undefined;
    const loaded = await new BlobIndexSource(store, 128 * megabyte).load('indexes/big.csv', () => ({
      record: (record: IndexRecord) => {
        recorded += 1;
        last = record;
      },
      rejected: () => undefined,
    }));
    expect(loaded?.version).to.be.a('string');
    expect(recorded).to.equal(200_000);
    expect(last).to.deep.include({ row: 200_000, Symbol: 'S199999', ShortDescriptionPt: description, FileName: 'equities/99/S199999.parquet' });
  });
});
