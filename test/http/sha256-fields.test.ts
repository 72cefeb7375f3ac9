import { expect } from 'chai';
import { MemoryChecksumStore } from '../../src/adapters/changes/memory-checksum-store.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { FileVersion } from '../../src/domain/ports.js';
import { changeStoresWith, startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf } from '../support/json.js';

/** The memory checksum store, counting its lookups (one per page is the rule). */
class CountingChecksums extends MemoryChecksumStore {
  lookups = 0;
  override async lookup(versions: readonly FileVersion[]): Promise<ReadonlyMap<string, string>> {
    this.lookups += 1;
    return super.lookup(versions);
  }
}

describe('sha256 on /info and /list', function () {
  let store: MemoryBlobStore;
  let checksums: CountingChecksums;
  let gateway: TestGateway;
  const digest = (letter: string): string => letter.repeat(64);

  before(async function () {
    store = new MemoryBlobStore();
    const names = ['a', 'b', 'c', 'd', 'e'];
    store.put('indexes/acme.csv', buildIndexCsv(names.map((name) => buildIndexRow({ Symbol: name.toUpperCase(), FileName: `data/${name}.csv` }))));
    for (const name of names) store.put(`data/${name}.csv`, `${name}\n`);
    checksums = new CountingChecksums();
    for (const name of ['a', 'c', 'e']) {
      const etag = (await store.getProperties(`data/${name}.csv`))?.etag ?? '';
      await checksums.record({ path: `data/${name}.csv`, etag }, digest(name));
    }
    await checksums.record({ path: 'data/b.csv', etag: '"an older version"' }, digest('b'));
    gateway = await startGateway({ store, changeStores: changeStoresWith({ checksums }), clients: [{ clientId: 'acme', secret: 'acme-secret-acme-secret' }] });
  });

  after(async function () {
    await gateway?.close();
  });

  it('gives each /list entry the SHA-256 of its current version where known, in one lookup per page', async function () {
    const before = checksums.lookups;
    const response = await gateway.get('acme', '/list');
    expect(response.status).to.equal(200);
    const files = jsonOf<{ files: Array<{ fileName: string; sha256?: string }> }>(response).files;
    expect(files.map((file) => [file.fileName, file.sha256])).to.deep.equal([
      ['data/a.csv', digest('a')],
      ['data/b.csv', undefined],
      ['data/c.csv', digest('c')],
      ['data/d.csv', undefined],
      ['data/e.csv', digest('e')],
    ]);
    expect(checksums.lookups - before).to.equal(1);
    const paged = await gateway.get('acme', '/list?limit=2');
    expect(jsonOf<{ files: Array<{ sha256?: string }> }>(paged).files.map((file) => file.sha256)).to.deep.equal([digest('a'), undefined]);
    expect(checksums.lookups - before).to.equal(2);
  });

  it('gives /info the SHA-256 of the current version, and none for a version not yet hashed', async function () {
    const known = await gateway.get('acme', '/info/A');
    expect(known.status).to.equal(200);
    expect(jsonOf(known).sha256).to.equal(digest('a'));
    const older = await gateway.get('acme', '/info/B');
    expect(older.status).to.equal(200);
    expect(jsonOf(older)).to.not.have.property('sha256');
  });
});
