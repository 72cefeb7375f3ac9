import { expect } from 'chai';
import { MemoryChangeLog } from '../../src/adapters/changes/memory-change-log.js';
import { originZeroClock } from '../support/change-log-origin.js';
import { MemoryChecksumStore } from '../../src/adapters/changes/memory-checksum-store.js';
import { ChangeFeed, type FeedPage, type Schedule } from '../../src/application/change-feed.js';
import type { FileChange, FileChangeType } from '../../src/domain/changes.js';
import { CursorExpired } from '../../src/domain/errors.js';
import type { ChangeLog } from '../../src/domain/ports.js';

/** Timers the test fires by hand, at a time it moves: nothing here waits on the wall clock. */
class ManualSchedule {
  nowMs = 0;
  readonly #timers = new Map<number, { at: number; run: () => void }>();
  #next = 0;

  readonly schedule: Schedule = (ms, run) => {
    const id = (this.#next += 1);
    this.#timers.set(id, { at: this.nowMs + ms, run });
    return () => void this.#timers.delete(id);
  };

  get pending(): number {
    return this.#timers.size;
  }

  /** Moves time by `ms`, running each timer due (in order), letting the promises they start settle. */
  async advance(ms: number): Promise<void> {
    const until = this.nowMs + ms;
    for (;;) {
      await settle();
      const due = [...this.#timers.entries()].filter(([, timer]) => timer.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (due === undefined) break;
      this.#timers.delete(due[0]);
      this.nowMs = due[1].at;
      due[1].run();
    }
    this.nowMs = until;
    await settle();
  }
}

/** Lets every promise chain already started run to its next real wait. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

/** A change log that counts how often its head is read. */
class CountingLog extends MemoryChangeLog {
  headReads = 0;
  override async head(): Promise<number> {
    this.headReads += 1;
    return super.head();
  }
}

function change(clientId: string, fileName: string, type: FileChangeType = 'file.released', overrides: Partial<FileChange> = {}): FileChange {
  return {
    clientId,
    type,
    time: new Date('2026-11-20T10:00:00Z'),
    file: { symbol: fileName.toUpperCase(), fileName, size: 10, etag: `"${fileName}-1"`, uploaded: new Date('2026-11-20T09:59:00Z') },
    ...overrides,
  };
}

function feedOver(log: ChangeLog, timers: ManualSchedule, overrides: { maxWaiters?: number; maxWaitersPerClient?: number; checksums?: MemoryChecksumStore } = {}): ChangeFeed {
  return new ChangeFeed({
    log,
    checksums: overrides.checksums ?? new MemoryChecksumStore(),
    schedule: timers.schedule,
    pollMs: 1000,
    maxWaiters: overrides.maxWaiters ?? 100,
    maxWaitersPerClient: overrides.maxWaitersPerClient ?? 10,
  });
}

/** The promise's outcome once it settled, or `'pending'`. */
async function stateOf<T>(promise: Promise<T>): Promise<T | 'pending'> {
  let outcome: T | 'pending' = 'pending';
  void promise.then((value) => (outcome = value));
  await settle();
  return outcome;
}

describe('ChangeFeed (the use case behind GET /changes)', () => {
  describe('when reading a page', () => {
    it('returns only the client’s own events, in order, and a next position at its own last one', async () => {
      const log = new MemoryChangeLog({ clock: originZeroClock });
      await log.append([change('acme', 'a.csv'), change('other', 'b.csv'), change('acme', 'c.csv', 'file.updated'), change('other', 'd.csv')]);
      const page = await feedOver(log, new ManualSchedule()).read('acme', { limit: 10, waitMs: 0 });
      expect(page.events.map((event) => [event.file.fileName, event.type])).to.deep.equal([
        ['a.csv', 'file.released'],
        ['c.csv', 'file.updated'],
      ]);
      expect(page.next, 'another client’s later event changes nothing of this client’s cursor').to.equal(3);
      expect(page.hasMore).to.equal(false);
    });

    it('cuts at limit, says hasMore, and continues from next without repeating or skipping', async () => {
      const log = new MemoryChangeLog({ clock: originZeroClock });
      await log.append(['1', '2', '3', '4', '5'].map((n) => change('acme', `${n}.csv`)));
      const feed = feedOver(log, new ManualSchedule());
      const first = await feed.read('acme', { limit: 2, waitMs: 0 });
      expect(first.events.map((event) => event.position)).to.deep.equal([1, 2]);
      expect(first).to.include({ next: 2, hasMore: true });
      const second = await feed.read('acme', { after: first.next, limit: 2, waitMs: 0 });
      expect(second.events.map((event) => event.position)).to.deep.equal([3, 4]);
      const third = await feed.read('acme', { after: second.next, limit: 2, waitMs: 0 });
      expect(third.events.map((event) => event.position)).to.deep.equal([5]);
      expect(third).to.include({ next: 5, hasMore: false });
    });

    it('starts at the oldest retained event without a position', async () => {
      const log = new MemoryChangeLog({ clock: originZeroClock });
      await log.append([change('acme', 'old.csv', 'file.released', { time: new Date('2026-10-01T00:00:00Z') })]);
      await log.append([change('acme', 'new.csv', 'file.released', { time: new Date('2026-11-20T00:00:00Z') })]);
      await log.prune(new Date('2026-11-01T00:00:00Z'));
      const page = await feedOver(log, new ManualSchedule()).read('acme', { limit: 10, waitMs: 0 });
      expect(page.events.map((event) => event.file.fileName)).to.deep.equal(['new.csv']);
    });

    it('fills in the SHA-256 the checksum store knows for that exact version, in one lookup per page', async () => {
      const log = new MemoryChangeLog({ clock: originZeroClock });
      await log.append([change('acme', 'a.csv'), change('acme', 'b.csv')]);
      const checksums = new MemoryChecksumStore();
      await checksums.record({ path: 'a.csv', etag: '"a.csv-1"' }, 'a'.repeat(64));
      await checksums.record({ path: 'b.csv', etag: '"b.csv-2"' }, 'b'.repeat(64));
      let lookups = 0;
      const lookup = checksums.lookup.bind(checksums);
      checksums.lookup = (versions) => ((lookups += 1), lookup(versions));
      const page = await feedOver(log, new ManualSchedule(), { checksums }).read('acme', { limit: 10, waitMs: 0 });
      expect(page.events.map((event) => event.file.sha256)).to.deep.equal(['a'.repeat(64), undefined]);
      expect(lookups).to.equal(1);
    });
  });

  describe('when the position is older than the retention', () => {
    it('refuses it as CursorExpired (cursor_expired)', async () => {
      const log = new MemoryChangeLog({ clock: originZeroClock });
      await log.append([change('acme', 'a.csv', 'file.released', { time: new Date('2026-10-01T00:00:00Z') })]);
      await log.append([change('acme', 'b.csv', 'file.released', { time: new Date('2026-10-02T00:00:00Z') })]);
      await log.prune(new Date('2026-11-01T00:00:00Z'));
      const feed = feedOver(log, new ManualSchedule());
      const refusal = await feed.read('acme', { after: 1, limit: 10, waitMs: 0 }).catch((error: unknown) => error);
      expect(refusal).to.be.instanceOf(CursorExpired).and.to.have.property('code', 'cursor_expired');
      // At the horizon nothing was missed.
      expect((await feed.read('acme', { after: 2, limit: 10, waitMs: 0 })).events).to.deep.equal([]);
    });

    it('refuses a position beyond the head (a log reset since) as CursorExpired', async () => {
      const feed = feedOver(new MemoryChangeLog({ clock: originZeroClock }), new ManualSchedule());
      const refusal = await feed.read('acme', { after: 7, limit: 10, waitMs: 0 }).catch((error: unknown) => error);
      expect(refusal).to.be.instanceOf(CursorExpired);
    });
  });

  describe('when waiting for new events (the long poll)', () => {
    it('answers as soon as the watcher sees an event of the client appended, before the wait ends', async () => {
      const log = new MemoryChangeLog({ clock: originZeroClock });
      const timers = new ManualSchedule();
      const feed = feedOver(log, timers);
      const answer = feed.read('acme', { after: 0, limit: 10, waitMs: 30_000 });
      expect(await stateOf(answer)).to.equal('pending');
      await log.append([change('acme', 'fresh.csv')]);
      await timers.advance(1000);
      const page = (await stateOf(answer)) as FeedPage;
      expect(page.events.map((event) => event.file.fileName)).to.deep.equal(['fresh.csv']);
      expect(timers.nowMs).to.equal(1000);
      expect(feed.waiting).to.equal(0);
      expect(timers.pending, 'no timer left behind').to.equal(0);
    });

    it('keeps waiting through another client’s events, and ends empty at the same position when the wait ends', async () => {
      const log = new MemoryChangeLog({ clock: originZeroClock });
      const timers = new ManualSchedule();
      const feed = feedOver(log, timers);
      const answer = feed.read('acme', { after: 0, limit: 10, waitMs: 5000 });
      await settle();
      await log.append([change('other', 'theirs.csv')]);
      await timers.advance(4999);
      expect(await stateOf(answer)).to.equal('pending');
      await timers.advance(1);
      const page = (await stateOf(answer)) as FeedPage;
      expect(page.events).to.deep.equal([]);
      expect(page.next, 'the position asked: the same cursor').to.equal(0);
      expect(timers.pending).to.equal(0);
    });

    it('reads the head once per poll for all waiting requests, not once per request', async () => {
      const log = new CountingLog({ clock: originZeroClock });
      const timers = new ManualSchedule();
      const feed = feedOver(log, timers);
      const answers = Array.from({ length: 50 }, (_, i) => feed.read(`client-${i % 5}`, { after: 0, limit: 10, waitMs: 10_000 }));
      await settle();
      const before = log.headReads;
      await timers.advance(5000);
      expect(log.headReads - before).to.equal(5);
      await timers.advance(5000);
      expect((await Promise.all(answers)).every((page) => page.events.length === 0)).to.equal(true);
      expect(timers.pending, 'the watcher stops when no one waits').to.equal(0);
    });

    it('answers at once, empty, past the bound of waiting requests (in all and per client)', async () => {
      const timers = new ManualSchedule();
      const feed = feedOver(new MemoryChangeLog({ clock: originZeroClock }), timers, { maxWaiters: 3, maxWaitersPerClient: 2 });
      const held = [feed.read('acme', { after: 0, limit: 10, waitMs: 10_000 }), feed.read('acme', { after: 0, limit: 10, waitMs: 10_000 })];
      await settle();
      expect(await stateOf(feed.read('acme', { after: 0, limit: 10, waitMs: 10_000 })), 'a third of the same client').to.deep.include({ events: [] });
      held.push(feed.read('beta', { after: 0, limit: 10, waitMs: 10_000 }));
      await settle();
      expect(await stateOf(feed.read('gamma', { after: 0, limit: 10, waitMs: 10_000 })), 'a fourth in all').to.deep.include({ events: [] });
      expect(feed.waiting).to.equal(3);
      await timers.advance(10_000);
      await Promise.all(held);
    });

    it('ends a wait when its client goes away', async () => {
      const timers = new ManualSchedule();
      const feed = feedOver(new MemoryChangeLog({ clock: originZeroClock }), timers);
      const gone = new AbortController();
      const answer = feed.read('acme', { after: 0, limit: 10, waitMs: 60_000, signal: gone.signal });
      await settle();
      expect(feed.waiting).to.equal(1);
      gone.abort();
      expect(await stateOf(answer)).to.deep.include({ events: [], next: 0 });
      expect(feed.waiting).to.equal(0);
      expect(timers.pending).to.equal(0);
    });

    it('ends every wait at close() (graceful shutdown) and waits no more after it', async () => {
      const timers = new ManualSchedule();
      const feed = feedOver(new MemoryChangeLog({ clock: originZeroClock }), timers);
      const answers = [feed.read('acme', { after: 0, limit: 10, waitMs: 60_000 }), feed.read('beta', { after: 0, limit: 10, waitMs: 60_000 })];
      await settle();
      feed.close();
      expect((await Promise.all(answers)).map((page) => page.events.length)).to.deep.equal([0, 0]);
      expect(await stateOf(feed.read('acme', { after: 0, limit: 10, waitMs: 60_000 }))).to.deep.include({ events: [] });
      expect(timers.pending).to.equal(0);
    });

    it('goes on waiting when the log cannot be read for a poll', async () => {
      const log = new MemoryChangeLog({ clock: originZeroClock });
      const timers = new ManualSchedule();
      const feed = feedOver(log, timers);
      const answer = feed.read('acme', { after: 0, limit: 10, waitMs: 10_000 });
      await settle();
      const head = log.head.bind(log);
      log.head = () => Promise.reject(new Error('table unreachable'));
      await timers.advance(1000);
      log.head = head;
      await log.append([change('acme', 'late.csv')]);
      await timers.advance(1000);
      expect(await stateOf(answer)).to.have.nested.property('events[0].file.fileName', 'late.csv');
    });
  });

  it('reads the head again after a caller gave up on a read that hangs (abandonPositionRead)', async () => {
    const log = new MemoryChangeLog();
    let hang = true;
    let reads = 0;
    const head = log.head.bind(log);
    log.head = () => {
      reads += 1;
      return hang ? new Promise<number>(() => undefined) : head();
    };
    const feed = feedOver(log, new ManualSchedule());
    void feed.position();
    void feed.position();
    expect(reads, 'shared').to.equal(1);
    feed.abandonPositionRead();
    hang = false;
    expect(await feed.position()).to.equal(await head());
    expect(reads).to.equal(2);
  });
});
