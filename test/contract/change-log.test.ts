import { appendFile, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TableClient } from '@azure/data-tables';
import { expect } from 'chai';
import { ChangeFeed } from '../../src/application/change-feed.js';
import { MemoryChecksumStore } from '../../src/adapters/changes/memory-checksum-store.js';
import { CursorExpired } from '../../src/domain/errors.js';
import { FileChangeLog } from '../../src/adapters/changes/file-change-log.js';
import { MemoryChangeLog } from '../../src/adapters/changes/memory-change-log.js';
import { TableChangeLog } from '../../src/adapters/changes/table-change-log.js';
import { tablesFromConnectionString } from '../../src/adapters/changes/table-storage.js';
import type { FileChange } from '../../src/domain/changes.js';
import type { ChangeLog, Clock } from '../../src/domain/ports.js';
import { sharedAzuriteTables, tableConnectionString, uniqueTableName } from '../support/azurite.js';

/** The ChangeLog port's contract, run against every adapter. */

interface Subject {
  readonly log: ChangeLog;
  /** The same log as another process would open it (a restart, or another instance), with its own clock; `undefined` for memory. */
  readonly reopen?: (clock?: Clock) => ChangeLog;
  /** A new log where this one was, made at `clock`'s time (a reset: a new folder, a new table, a new process's memory). */
  readonly reset: (clock: Clock) => Promise<ChangeLog>;
  /** Makes the store look as a log written before origins existed left it. */
  readonly forgetOrigin?: () => Promise<void>;
  /** Simulates a writer that died after writing rows of a batch but before committing it. */
  readonly crashMidAppend?: (changes: readonly FileChange[]) => Promise<void>;
  close(): Promise<void>;
}

/** A clock standing at `ms` since 1970. */
function clockAt(ms: number): Clock {
  return { now: () => new Date(ms) };
}

/** Logs made at 1970-01-01 have origin 0: their positions start at 1. */
const epoch = clockAt(0);

const adapters: { name: string; crashable?: true; make: (clock: Clock) => Promise<Subject> }[] = [
  {
    name: 'MemoryChangeLog',
    make: async (clock) => ({ log: new MemoryChangeLog({ clock }), reset: async (later) => new MemoryChangeLog({ clock: later }), close: async () => undefined }),
  },
  {
    name: 'FileChangeLog (a temporary folder, small segments)',
    crashable: true,
    make: async (clock) => {
      const dir = await mkdtemp(join(tmpdir(), 'dfg-change-log-'));
      const open = (at: Clock = clock): ChangeLog => new FileChangeLog({ dir: join(dir, 'changes'), segmentBytes: 600, clock: at });
      return {
        log: open(),
        reopen: open,
        // What an operator does: the old folder moved away, the gateway started again.
        reset: async (later) => {
          await rename(join(dir, 'changes'), join(dir, 'changes.bak'));
          return open(later);
        },
        forgetOrigin: async () => {
          // No horizon.json before the first prune, segments named with 15 digits.
          await rm(join(dir, 'changes', 'horizon.json'));
          for (const name of await readdir(join(dir, 'changes'))) {
            if (name.endsWith('.jsonl')) await rename(join(dir, 'changes', name), join(dir, 'changes', name.replace(/^changes-0/, 'changes-')));
          }
        },
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
    make: async (clock) => {
      const { tableEndpoint } = await sharedAzuriteTables();
      const tables = tablesFromConnectionString(tableConnectionString(tableEndpoint), { maxTries: 1 });
      const names = [uniqueTableName('changes')];
      const open = (at: Clock = clock): ChangeLog => new TableChangeLog(tables(names[0] as string), { clock: at });
      return {
        log: open(),
        reopen: open,
        // The table dropped and made again: a table of a new name, where the gateway looks from now on.
        reset: async (later) => {
          names.unshift(uniqueTableName('changes'));
          return open(later);
        },
        forgetOrigin: async () => {
          const client: TableClient = tables(names[0] as string);
          const { etag: _etag, origin: _origin, ...meta } = await client.getEntity<Record<string, unknown>>('meta', 'log');
          await client.updateEntity({ ...meta, partitionKey: 'meta', rowKey: 'log' }, 'Replace');
        },
        crashMidAppend: async (changes) => {
          // Rows written above the head with the epoch a dead writer had recorded, never committed.
          const client: TableClient = tables(names[0] as string);
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
          for (const name of names) await tables(name).deleteTable();
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
      subject = await adapter.make(epoch);
    });

    afterEach(async function () {
      await subject.close();
    });

    it('starts empty at its origin, the time it was made in ms times 1000: head, horizon and prunedThrough there, nothing to read', async function () {
      const made = await adapter.make(clockAt(t0.getTime()));
      try {
        const origin = t0.getTime() * 1000;
        expect(await made.log.head()).to.equal(origin);
        expect(await made.log.horizon()).to.equal(origin);
        expect(await made.log.prunedThrough('acme')).to.equal(origin);
        expect(await made.log.read('acme', 0, 10)).to.deep.equal([]);
        const logged = await made.log.append([change('acme', 'a.csv'), change('beta', 'b.csv')]);
        expect(logged.map((c) => [c.position, c.id])).to.deep.equal([
          [origin + 1, `chg_${origin + 1}`],
          [origin + 2, `chg_${origin + 2}`],
        ]);
        expect((await made.log.read('acme', 0, 10)).map((c) => c.position), 'a position below the origin reads from the start').to.deep.equal([origin + 1]);
        if (made.reopen !== undefined) {
          const later = made.reopen(clockAt(t0.getTime() + 3_600_000));
          expect(await later.head(), 'reopened later: the same origin').to.equal(origin + 2);
          expect(await later.prunedThrough('gamma')).to.equal(origin);
        }
      } finally {
        await made.close();
      }
    });

    if (adapter.name !== 'MemoryChangeLog') {
      it('gives processes that open an empty store at once one origin, the first one made', async function () {
        const made = await adapter.make(clockAt(t0.getTime()));
        try {
          const others = [1, 2, 3].map((i) => (made.reopen as (clock: Clock) => ChangeLog)(clockAt(t0.getTime() + i)));
          const heads = await Promise.all([made.log, ...others].map((log) => log.head()));
          expect(new Set(heads).size, heads.join(', ')).to.equal(1);
          expect(heads[0]).to.be.within(t0.getTime() * 1000, (t0.getTime() + 3) * 1000);
        } finally {
          await made.close();
        }
      });
    }

    if (adapter.name !== 'MemoryChangeLog') {
      it('keeps origin 0 for a log written before origins existed, whenever it is reopened', async function () {
        await subject.log.append([change('acme', 'a.csv'), change('beta', 'b.csv')]);
        await (subject.forgetOrigin as () => Promise<void>)();
        const reopened = (subject.reopen as (clock: Clock) => ChangeLog)(clockAt(t0.getTime()));
        expect(await reopened.head()).to.equal(2);
        expect(await reopened.prunedThrough('acme')).to.equal(0);
        expect((await reopened.append([change('acme', 'c.csv')])).map((c) => c.position)).to.deep.equal([3]);
        expect((await reopened.read('acme', 0, 10)).map((c) => c.position)).to.deep.equal([1, 3]);
      });
    }

    it('after a reset (a log made later), refuses through the feed a cursor of the earlier log with cursor_expired, before and after the new log passes its position', async function () {
      const made = await adapter.make(clockAt(t0.getTime()));
      try {
        const feed = (log: ChangeLog): ChangeFeed =>
          new ChangeFeed({ log, checksums: new MemoryChecksumStore(), schedule: () => () => undefined, pollMs: 1000, maxWaiters: 10, maxWaitersPerClient: 10 });
        await made.log.append(Array.from({ length: 32 }, (_, i) => change('acme', `old-${i}.csv`)));
        const oldCursor = (await feed(made.log).read('acme', { limit: 100, waitMs: 0 })).next;
        expect(oldCursor).to.equal(t0.getTime() * 1000 + 32);
        const reset = await made.reset(clockAt(t0.getTime() + 60_000));
        const refusal = (): Promise<unknown> => feed(reset).read('acme', { after: oldCursor, limit: 100, waitMs: 0 }).catch((error: unknown) => error);
        expect(await refusal(), 'the new log is empty').to.be.instanceOf(CursorExpired);
        await reset.append(Array.from({ length: 40 }, (_, i) => change('acme', `new-${i}.csv`)));
        expect(await reset.head()).to.be.above(oldCursor + 32);
        expect(await refusal(), 'the new log appended more than the cursor had read').to.be.instanceOf(CursorExpired).and.to.have.property('code', 'cursor_expired');
        // A reader that starts over (no cursor, as after listing again) gets every new event; so does a webhook position of the old log.
        expect((await feed(reset).read('acme', { limit: 100, waitMs: 0 })).events).to.have.length(40);
        expect(await reset.read('acme', oldCursor, 100)).to.have.length(40);
      } finally {
        await made.close();
      }
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
        const reopened = (subject.reopen as (clock?: Clock) => ChangeLog)();
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
        const next = (subject.reopen as (clock?: Clock) => ChangeLog)();
        expect(await next.head()).to.equal(1);
        await next.append([change('acme', 'b.csv')]);
        await next.append([change('gamma', 'c.csv')]);
        expect((await next.read('beta', 0, 10)).map((c) => c.file.fileName)).to.deep.equal([]);
        expect((await next.read('acme', 0, 10)).map((c) => c.file.fileName)).to.deep.equal(['a.csv', 'b.csv']);
      });
    }
  });
}
