import { appendFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TableClient } from '@azure/data-tables';
import { expect } from 'chai';
import { FileChangeLog } from '../../src/adapters/changes/file-change-log.js';
import { MemoryChangeLog } from '../../src/adapters/changes/memory-change-log.js';
import { TableChangeLog } from '../../src/adapters/changes/table-change-log.js';
import { tablesFromConnectionString } from '../../src/adapters/changes/table-storage.js';
import type { FileChange } from '../../src/domain/changes.js';
import type { ChangeLog } from '../../src/domain/ports.js';
import { sharedAzuriteTables, tableConnectionString, uniqueTableName } from '../support/azurite.js';

/** The ChangeLog port's contract, run against every adapter. */

interface Subject {
  readonly log: ChangeLog;
  /** The same log as another process would open it (a restart, or another instance); `undefined` for memory. */
  readonly reopen?: () => ChangeLog;
  /** Simulates a writer that died after writing rows of a batch but before committing it. */
  readonly crashMidAppend?: (changes: readonly FileChange[]) => Promise<void>;
  close(): Promise<void>;
}

const adapters: { name: string; crashable?: true; make: () => Promise<Subject> }[] = [
  { name: 'MemoryChangeLog', make: async () => ({ log: new MemoryChangeLog(), close: async () => undefined }) },
  {
    name: 'FileChangeLog (a temporary folder, small segments)',
    crashable: true,
    make: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'dfg-change-log-'));
      const open = (): ChangeLog => new FileChangeLog({ dir: join(dir, 'changes'), segmentBytes: 600 });
      return {
        log: open(),
        reopen: open,
        crashMidAppend: async (changes) => {
          // A writer that died within its write (a line is the file's unit of commit): half a line.
          const last = (await readdir(join(dir, 'changes'))).filter((name) => name.endsWith('.jsonl')).sort().at(-1) as string;
          const line = (c: FileChange, p: number): string =>
            JSON.stringify({ p, c: c.clientId, t: c.type, at: c.time.toISOString(), f: { ...c.file, uploaded: c.file.uploaded.toISOString() } });
          await appendFile(join(dir, 'changes', last), line(changes[0] as FileChange, 2).slice(0, 30));
        },
        close: () => rm(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'TableChangeLog (Azurite tables)',
    crashable: true,
    make: async () => {
      const { tableEndpoint } = await sharedAzuriteTables();
      const tables = tablesFromConnectionString(tableConnectionString(tableEndpoint), { maxTries: 1 });
      const name = uniqueTableName('changes');
      const open = (): ChangeLog => new TableChangeLog(tables(name));
      return {
        log: open(),
        reopen: open,
        crashMidAppend: async (changes) => {
          // Rows written above the head with the epoch a dead writer had recorded, never committed.
          const client: TableClient = tables(name);
          const meta = await client.getEntity<{ head: number; epoch: number }>('meta', 'log');
          let position = Number(meta.head);
          for (const change of changes) {
            position += 1;
            await client.upsertEntity({
              partitionKey: `c_${change.clientId}`,
              rowKey: position.toString().padStart(15, '0'),
              type: change.type,
              time: change.time,
              symbol: change.file.symbol,
              fileName: change.file.fileName,
              size: change.file.size,
              fileEtag: change.file.etag,
              uploaded: change.file.uploaded,
              epoch: Number(meta.epoch),
            });
          }
        },
        close: async () => {
          await tables(name).deleteTable();
        },
      };
    },
  },
];

const t0 = new Date('2026-11-20T10:00:00Z');

function change(clientId: string, fileName: string, overrides: Partial<FileChange> = {}): FileChange {
  return {
    clientId,
    type: 'file.released',
    time: t0,
    file: { symbol: fileName.toUpperCase(), fileName, size: 12, etag: '"0x1"', uploaded: new Date('2026-11-19T08:00:00Z') },
    ...overrides,
  };
}

for (const adapter of adapters) {
  describe(`ChangeLog contract: ${adapter.name}`, function () {
    this.timeout(20_000);
    let subject: Subject;

    beforeEach(async function () {
      subject = await adapter.make();
    });

    afterEach(async function () {
      await subject.close();
    });

    it('starts empty: head and horizon 0, nothing to read', async function () {
      expect(await subject.log.head()).to.equal(0);
      expect(await subject.log.horizon()).to.equal(0);
      expect(await subject.log.read('acme', 0, 10)).to.deep.equal([]);
    });

    it('gives appended changes dense positions from 1 and ids named after them', async function () {
      const logged = await subject.log.append([change('acme', 'a.csv'), change('beta', 'b.csv')]);
      expect(logged.map((c) => [c.position, c.id])).to.deep.equal([[1, 'chg_000000000001'], [2, 'chg_000000000002']]);
      const more = await subject.log.append([change('acme', 'c.csv')]);
      expect(more.map((c) => c.position)).to.deep.equal([3]);
      expect(await subject.log.head()).to.equal(3);
    });

    it('reads a client its own changes only, in order, with every field', async function () {
      await subject.log.append([
        change('acme', 'a.csv'),
        change('beta', 'b.csv'),
        change('acme', 'c.csv', { type: 'file.updated', file: { symbol: 'C', fileName: 'c.csv', size: 3_000_000_000, etag: '"0x9"', uploaded: t0, sha256: 'ab'.repeat(32) } }),
      ]);
      const read = await subject.log.read('acme', 0, 10);
      expect(read.map((c) => [c.position, c.clientId, c.type, c.file.fileName])).to.deep.equal([
        [1, 'acme', 'file.released', 'a.csv'],
        [3, 'acme', 'file.updated', 'c.csv'],
      ]);
      expect(read[1]).to.deep.equal({
        clientId: 'acme',
        id: 'chg_000000000003',
        position: 3,
        type: 'file.updated',
        time: t0,
        file: { symbol: 'C', fileName: 'c.csv', size: 3_000_000_000, etag: '"0x9"', uploaded: t0, sha256: 'ab'.repeat(32) },
      });
      expect((await subject.log.read('beta', 0, 10)).map((c) => c.position)).to.deep.equal([2]);
      expect(await subject.log.read('nobody', 0, 10)).to.deep.equal([]);
    });

    it('keeps client ids that storage keys refuse apart (slashes, hashes, question marks, percent signs)', async function () {
      await subject.log.append([change('a/b#c?d%e', 'x.csv'), change('a', 'y.csv'), change('a%2Fb', 'z.csv')]);
      expect((await subject.log.read('a/b#c?d%e', 0, 10)).map((c) => c.file.fileName)).to.deep.equal(['x.csv']);
      expect((await subject.log.read('a%2Fb', 0, 10)).map((c) => c.file.fileName)).to.deep.equal(['z.csv']);
    });

    it('reads after a position, exclusive, and at most `limit` changes', async function () {
      await subject.log.append(Array.from({ length: 25 }, (_, i) => change(i % 2 === 0 ? 'acme' : 'beta', `f${i}.csv`)));
      const first = await subject.log.read('acme', 0, 5);
      expect(first.map((c) => c.position)).to.deep.equal([1, 3, 5, 7, 9]);
      const next = await subject.log.read('acme', 9, 5);
      expect(next.map((c) => c.position)).to.deep.equal([11, 13, 15, 17, 19]);
      expect((await subject.log.read('acme', 19, 100)).map((c) => c.position)).to.deep.equal([21, 23, 25]);
      expect(await subject.log.read('acme', 25, 100)).to.deep.equal([]);
    });

    it('forgets changes found before the cut-off, moves the horizon to the last one pruned, and keeps the head', async function () {
      const day = 24 * 3600 * 1000;
      for (let d = 0; d < 4; d += 1) {
        await subject.log.append(Array.from({ length: 6 }, (_, i) => change(i % 2 === 0 ? 'acme' : 'beta', `d${d}-${i}.csv`, { time: new Date(t0.getTime() + d * day) })));
      }
      await subject.log.prune(new Date(t0.getTime() + 2 * day));
      const horizon = await subject.log.horizon();
      // Segmented stores may keep some older changes; never one found on or after the cut-off is gone.
      expect(horizon).to.be.within(6, 12);
      expect(await subject.log.head()).to.equal(24);
      const acme = await subject.log.read('acme', 0, 100);
      expect(acme[0]?.position).to.be.above(horizon);
      expect(acme.filter((c) => c.position > 12).map((c) => c.position)).to.deep.equal([13, 15, 17, 19, 21, 23]);
      await subject.log.prune(new Date(t0.getTime() + 10 * day));
      expect(await subject.log.horizon()).to.equal(24);
      expect(await subject.log.head()).to.equal(24);
      expect(await subject.log.read('acme', 0, 100)).to.deep.equal([]);
      expect((await subject.log.append([change('acme', 'after.csv')])).map((c) => c.position)).to.deep.equal([25]);
    });

    it("records per client the position of its last change pruned (prunedThrough), 0 for a client that lost none", async function () {
      const day = 24 * 3600 * 1000;
      expect(await subject.log.prunedThrough('acme')).to.equal(0);
      for (let d = 0; d < 4; d += 1) {
        await subject.log.append(Array.from({ length: 6 }, (_, i) => change(i % 2 === 0 ? 'acme' : 'beta', `d${d}-${i}.csv`, { time: new Date(t0.getTime() + d * day) })));
      }
      await subject.log.append([change('gamma', 'late.csv', { time: new Date(t0.getTime() + 3 * day) })]);
      await subject.log.prune(new Date(t0.getTime() + 2 * day));
      const horizon = await subject.log.horizon();
      // acme has the odd positions, beta the even ones (1-24), gamma 25.
      const lastAtOrBelow = (parity: number): number => (horizon % 2 === parity ? horizon : horizon - 1);
      expect(await subject.log.prunedThrough('acme')).to.equal(lastAtOrBelow(1));
      expect(await subject.log.prunedThrough('beta')).to.equal(lastAtOrBelow(0));
      expect(await subject.log.prunedThrough('gamma'), 'none of its changes went').to.equal(0);
      expect(await subject.log.prunedThrough('nobody')).to.equal(0);
      expect((await subject.log.read('acme', 0, 100))[0]?.position).to.equal(lastAtOrBelow(1) + 2);
      if (subject.reopen !== undefined) expect(await subject.reopen().prunedThrough('acme'), 'after a restart').to.equal(lastAtOrBelow(1));
      await subject.log.prune(new Date(t0.getTime() + 10 * day));
      expect(await subject.log.prunedThrough('acme')).to.equal(23);
      expect(await subject.log.prunedThrough('gamma')).to.equal(25);
    });

    it('does nothing for an empty append', async function () {
      expect(await subject.log.append([])).to.deep.equal([]);
      expect(await subject.log.head()).to.equal(0);
    });

    if (adapter.name !== 'MemoryChangeLog') {
      it('survives a reopen (a restart): the same changes, head and horizon, and appends continue after them', async function () {
        await subject.log.append([change('acme', 'a.csv'), change('beta', 'b.csv'), change('acme', 'c.csv', { time: new Date(t0.getTime() + 1000) })]);
        const reopened = (subject.reopen as () => ChangeLog)();
        expect(await reopened.head()).to.equal(3);
        expect((await reopened.read('acme', 0, 10)).map((c) => c.file.fileName)).to.deep.equal(['a.csv', 'c.csv']);
        expect((await reopened.append([change('acme', 'd.csv')])).map((c) => c.position)).to.deep.equal([4]);
        // The first instance (another reader) sees what the second appended.
        expect((await subject.log.read('acme', 3, 10)).map((c) => c.file.fileName)).to.deep.equal(['d.csv']);
      });
    }

    if (adapter.crashable === true) {
      it('never shows the rows of an append that a dead writer did not commit, even where the next writer does not overwrite them', async function () {
        await subject.log.append([change('acme', 'a.csv')]);
        await (subject.crashMidAppend as NonNullable<Subject['crashMidAppend']>)([change('beta', 'ghost1.csv'), change('acme', 'ghost2.csv')]);
        const next = (subject.reopen as () => ChangeLog)();
        expect(await next.head()).to.equal(1);
        await next.append([change('acme', 'b.csv')]);
        await next.append([change('gamma', 'c.csv')]);
        expect((await next.read('beta', 0, 10)).map((c) => c.file.fileName)).to.deep.equal([]);
        expect((await next.read('acme', 0, 10)).map((c) => c.file.fileName)).to.deep.equal(['a.csv', 'b.csv']);
      });
    }
  });
}
