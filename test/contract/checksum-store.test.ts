import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { FileChecksumStore } from '../../src/adapters/changes/file-checksum-store.js';
import { MemoryChecksumStore } from '../../src/adapters/changes/memory-checksum-store.js';
import { TableChecksumStore } from '../../src/adapters/changes/table-checksum-store.js';
import { tablesFromConnectionString } from '../../src/adapters/changes/table-storage.js';
import type { ChecksumStore, Clock, FileVersion } from '../../src/domain/ports.js';
import { sharedAzuriteTables, tableConnectionString, uniqueTableName } from '../support/azurite.js';

/** The ChecksumStore port's contract, run against every adapter. */

interface Subject {
  readonly store: ChecksumStore;
  /** Another instance over the same store. */
  readonly other?: () => ChecksumStore;
  /** Storage calls made so far, where they can be counted. */
  readonly calls?: () => number;
  /** Another instance with a small cache. */
  readonly small?: () => ChecksumStore;
  close(): Promise<void>;
}

const clock = { now: () => new Date('2026-11-24T10:00:00Z') } satisfies Clock;

const adapters: { name: string; make: () => Promise<Subject> }[] = [
  { name: 'MemoryChecksumStore', make: async () => ({ store: new MemoryChecksumStore(), close: async () => undefined }) },
  {
    name: 'FileChecksumStore (a temporary folder)',
    make: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'dfg-checksums-'));
      const open = (): ChecksumStore => new FileChecksumStore(join(dir, 'changes', 'checksums.jsonl'));
      return { store: open(), other: open, close: () => rm(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'TableChecksumStore (Azurite tables)',
    make: async () => {
      const { tableEndpoint } = await sharedAzuriteTables();
      let calls = 0;
      const tables = tablesFromConnectionString(tableConnectionString(tableEndpoint), { maxTries: 1, onRequest: () => (calls += 1) });
      const name = uniqueTableName('checksums');
      // `staleAfterMs: 0`: a version missing from the cache reads its folder again at once.
      const open = (): ChecksumStore => new TableChecksumStore(tables(name), { clock, staleAfterMs: 0 });
      // A cache of 64 KiB: a folder of more than some 60 files is too big to keep, and is asked by name.
      const small = (): ChecksumStore => new TableChecksumStore(tables(name), { clock, staleAfterMs: 0, cacheBytes: 64 * 1024 });
      return { store: open(), other: open, small, calls: () => calls, close: async () => void (await tables(name).deleteTable()) };
    },
  },
];

const sha = (c: string): string => c.repeat(64);

for (const adapter of adapters) {
  describe(`ChecksumStore contract: ${adapter.name}`, function () {
    this.timeout(60_000);
    let subject: Subject;

    beforeEach(async function () {
      subject = await adapter.make();
    });

    afterEach(async function () {
      await subject.close();
    });

    it('knows nothing at first', async function () {
      expect(await subject.store.lookup([{ path: 'a.csv', etag: '"1"' }])).to.deep.equal(new Map());
    });

    it('gives the recorded SHA-256 for that exact version only', async function () {
      await subject.store.record({ path: 'daily/a.csv', etag: '"1"' }, sha('a'));
      const found = await subject.store.lookup([
        { path: 'daily/a.csv', etag: '"1"' },
        { path: 'daily/b.csv', etag: '"1"' },
      ]);
      expect([...found]).to.deep.equal([['daily/a.csv', sha('a')]]);
      expect(await subject.store.lookup([{ path: 'daily/a.csv', etag: '"2"' }])).to.deep.equal(new Map());
    });

    it('replaces an older version with a new one', async function () {
      await subject.store.record({ path: 'a.csv', etag: '"1"' }, sha('a'));
      await subject.store.record({ path: 'a.csv', etag: '"2"' }, sha('b'));
      expect([...(await subject.store.lookup([{ path: 'a.csv', etag: '"2"' }]))]).to.deep.equal([['a.csv', sha('b')]]);
      expect(await subject.store.lookup([{ path: 'a.csv', etag: '"1"' }])).to.deep.equal(new Map());
    });

    it('keeps paths with characters storage keys refuse, and very long ones', async function () {
      const long = `${'deep/'.repeat(60)}${'n'.repeat(500)}.csv`;
      await subject.store.record({ path: 'odd/a#b?c%d\\e.csv', etag: '"1"' }, sha('c'));
      await subject.store.record({ path: long, etag: '"1"' }, sha('d'));
      const found = await subject.store.lookup([{ path: 'odd/a#b?c%d\\e.csv', etag: '"1"' }, { path: long, etag: '"1"' }]);
      expect(found.get('odd/a#b?c%d\\e.csv')).to.equal(sha('c'));
      expect(found.get(long)).to.equal(sha('d'));
    });

    if (adapter.name !== 'MemoryChecksumStore') {
      it('answers another instance what this one recorded', async function () {
        await subject.store.record({ path: 'x/a.csv', etag: '"1"' }, sha('e'));
        const other = (subject.other as () => ChecksumStore)();
        expect((await other.lookup([{ path: 'x/a.csv', etag: '"1"' }])).get('x/a.csv')).to.equal(sha('e'));
        await subject.store.record({ path: 'x/b.csv', etag: '"1"' }, sha('f'));
        expect((await other.lookup([{ path: 'x/b.csv', etag: '"1"' }])).get('x/b.csv')).to.equal(sha('f'));
      });
    }

    if (adapter.name.startsWith('TableChecksumStore')) {
      it('looks up 1,000 versions of a few folders with a few queries, not a call each', async function () {
        const versions: FileVersion[] = Array.from({ length: 1000 }, (_, i) => ({ path: `folder${i % 4}/f${i}.csv`, etag: '"1"' }));
        for (let i = 0; i < 1000; i += 100) {
          await Promise.all(versions.slice(i, i + 100).map((v, k) => subject.store.record(v, sha('0123456789abcdef'[(i + k) % 16] as string))));
        }
        const other = (subject.other as () => ChecksumStore)();
        const before = (subject.calls as () => number)();
        const found = await other.lookup(versions);
        expect(found.size).to.equal(1000);
        // Four folders, a page of up to 1,000 rows each (and a table check).
        expect((subject.calls as () => number)() - before).to.be.at.most(6);
        const again = (subject.calls as () => number)();
        await other.lookup(versions);
        expect((subject.calls as () => number)() - again).to.equal(0);

        // With a small cache, each folder of 250 is asked by name (14 a query), and memory stays within the bound.
        const small = (subject.small as () => ChecksumStore)();
        const some = versions.filter((_, i) => i % 10 === 0);
        expect((await small.lookup(some)).size).to.equal(100);
        const byName = (subject.calls as () => number)();
        expect((await small.lookup(some)).size).to.equal(100);
        // Four folders of 25 asked names: two queries each.
        expect((subject.calls as () => number)() - byName).to.equal(8);
      });
    }
  });
}
