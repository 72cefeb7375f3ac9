import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ChunkedList, ShardedMap } from '../../src/adapters/storage/big-collections.js';
import { LocalFolderBlobStore } from '../../src/adapters/storage/local-folder-blob-store.js';

describe('LocalFolderBlobStore.existing sharing the thread', function () {
  let root: string;

  before(async function () {
    root = await mkdtemp(join(tmpdir(), 'gateway-existing-slices-'));
    await mkdir(join(root, 'big'));
    await mkdir(join(root, 'small'));
    // 200 files in a folder that is read whole, 3 in one whose files are stat'ed one by one.
    await Promise.all(Array.from({ length: 200 }, (_, i) => writeFile(join(root, 'big', `f${i}.csv`), 'x')));
    await Promise.all([0, 1, 2].map((i) => writeFile(join(root, 'small', `f${i}.csv`), 'x')));
  });

  after(async function () {
    await rm(root, { recursive: true, force: true });
  });

  describe('when asked about 30,000 paths, 1,000 steps a slice', function () {
    it('gives the event loop a turn at least once per 1,000 paths, and answers exactly which exist, each once', async function () {
      let yields = 0;
      const store = new LocalFolderBlobStore(root, { stepsPerSlice: 1000, yieldToLoop: async () => void (yields += 1) });
      const paths = [
        ...Array.from({ length: 29_000 }, (_, i) => `big/f${i % 400}.csv`),
        ...Array.from({ length: 997 }, (_, i) => `absent/f${i}.csv`),
        'small/f0.csv',
        'small/f2.csv',
        'small/f9.csv',
      ];

      const found = await store.existing(paths);

      expect(yields).to.be.at.least(paths.length / 1000);
      expect(found.size).to.equal(202);
      expect([...found.keys()].filter((path) => path.startsWith('small/')).sort()).to.deep.equal(['small/f0.csv', 'small/f2.csv']);
      expect(found.has('big/f199.csv')).to.equal(true);
      expect(found.has('big/f200.csv')).to.equal(false);
      expect(found.get('big/f7.csv')?.size).to.equal(1);
    });
  });
});

describe('the big collections of storage answers', function () {
  describe('ChunkedList', function () {
    it('keeps 20,000 elements in order across its chunks', function () {
      const list = new ChunkedList<number>();
      for (let i = 0; i < 20_000; i += 1) list.push(i * 3);
      expect(list.length).to.equal(20_000);
      expect([list.at(0), list.at(8191), list.at(8192), list.at(19_999)]).to.deep.equal([0, 8191 * 3, 8192 * 3, 19_999 * 3]);
      expect([...list].every((value, i) => value === i * 3)).to.equal(true);
    });
  });

  describe('ShardedMap', function () {
    it('counts each key once, however often it is set, and finds every key', function () {
      const map = new ShardedMap<number>();
      for (let i = 0; i < 5_000; i += 1) map.set(`k${i % 3_000}`, i);
      expect(map.size).to.equal(3_000);
      expect(map.get('k2999')).to.equal(2999);
      expect(map.get('k0')).to.equal(3000);
      expect(map.has('k3000')).to.equal(false);
      expect(map.get('k3000')).to.equal(undefined);
    });
  });
});
