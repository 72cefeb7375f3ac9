import { expect } from 'chai';
import { MemoryChangeLog } from '../../src/adapters/changes/memory-change-log.js';
import { originZeroClock } from '../support/change-log-origin.js';
import { MemoryChecksumStore } from '../../src/adapters/changes/memory-checksum-store.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { FileChange, FileChangeType, LoggedChange } from '../../src/domain/changes.js';
import { StorageUnavailable } from '../../src/domain/errors.js';
import { changeStoresWith, startGateway, type TestGateway } from '../support/gateway.js';
import { MovableClock } from '../support/movable-clock.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody } from '../support/json.js';

const clients = [
  { clientId: 'acme', secret: 'acme-secret-acme-secret' },
  { clientId: 'other', secret: 'other-secret-other-secret' },
];

interface FeedBody {
  readonly events: ReadonlyArray<{ id: string; type: string; time: string; file: { symbol: string; fileName: string; size: number; etag: string; uploaded: string; sha256?: string } }>;
  readonly nextCursor: string;
  readonly hasMore: boolean;
}

function change(clientId: string, fileName: string, type: FileChangeType = 'file.released', time = new Date('2026-11-20T10:00:00Z')): FileChange {
  return {
    clientId,
    type,
    time,
    file: { symbol: fileName.split('.')[0]?.toUpperCase() ?? fileName, fileName, size: 12, etag: `"${fileName}-v1"`, uploaded: new Date('2026-11-20T09:59:00Z') },
  };
}

/** The memory log, telling the test each time its head is read (by a page, or by the long polls' watcher). */
class ObservedLog extends MemoryChangeLog {
  #headReads = 0;
  #waiting: Array<{ at: number; resolve: () => void }> = [];

  override async head(): Promise<number> {
    this.#headReads += 1;
    for (const waiter of this.#waiting.filter((w) => this.#headReads >= w.at)) waiter.resolve();
    this.#waiting = this.#waiting.filter((w) => this.#headReads < w.at);
    return super.head();
  }

  /** How many times the head was read. */
  get headReadCount(): number {
    return this.#headReads;
  }

  /** Resolves once the head has been read `count` more times from now. */
  headReads(count: number): Promise<void> {
    return new Promise((resolve) => this.#waiting.push({ at: this.#headReads + count, resolve }));
  }
}

function seededStore(): MemoryBlobStore {
  const store = new MemoryBlobStore();
  const index = buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'data/a.csv' })]);
  store.put('indexes/acme.csv', index);
  store.put('indexes/other.csv', index);
  store.put('data/a.csv', 'a,b\n1,2\n');
  return store;
}

describe('GET /changes (the change feed)', function () {
  let log: ObservedLog;
  let checksums: MemoryChecksumStore;
  let gateway: TestGateway;

  beforeEach(async function () {
    log = new ObservedLog({ clock: originZeroClock });
    checksums = new MemoryChecksumStore();
    // A watcher reading the head every 20 ms keeps the long-poll tests short; production reads it every second.
    gateway = await startGateway({ store: seededStore(), clients, changeStores: changeStoresWith({ log, checksums }), changesPollMs: 20 });
  });

  afterEach(async function () {
    await gateway?.close();
  });

  const feed = async (clientId: string, query = ''): Promise<FeedBody> => {
    const response = await gateway.get(clientId, `/changes${query}`);
    expect(response.status, response.body.toString()).to.equal(200);
    expect(response.headers['cache-control']).to.equal('no-store');
    return jsonOf<FeedBody>(response);
  };

  it('responds 401 without a bearer token', async function () {
    expect((await gateway.request('GET', '/changes')).status).to.equal(401);
  });

  describe('without a cursor', function () {
    it('answers the caller’s events from the oldest retained one, in order, each with id, type, time and file', async function () {
      await log.append([change('acme', 'a.csv'), change('other', 'secret.csv'), change('acme', 'a.csv', 'file.updated'), change('acme', 'b.csv', 'file.withdrawn')]);
      await checksums.record({ path: 'a.csv', etag: '"a.csv-v1"' }, 'c'.repeat(64));
      const body = await feed('acme');
      expect(body.events.map((event) => [event.id, event.type, event.file.fileName])).to.deep.equal([
        ['chg_000000000001', 'file.released', 'a.csv'],
        ['chg_000000000003', 'file.updated', 'a.csv'],
        ['chg_000000000004', 'file.withdrawn', 'b.csv'],
      ]);
      expect(body.events[0]).to.deep.equal({
        id: 'chg_000000000001',
        type: 'file.released',
        time: '2026-11-20T10:00:00.000Z',
        file: { symbol: 'A', fileName: 'a.csv', size: 12, etag: '"a.csv-v1"', uploaded: '2026-11-20T09:59:00.000Z', sha256: 'c'.repeat(64) },
      });
      expect(body.events[2]?.file).to.not.have.property('sha256');
      expect(body.hasMore).to.equal(false);
    });

    it('never shows another client’s events (isolation)', async function () {
      await log.append([change('other', 'theirs-1.csv'), change('other', 'theirs-2.csv')]);
      expect((await feed('acme')).events).to.deep.equal([]);
      expect((await feed('other')).events.map((event) => event.file.fileName)).to.deep.equal(['theirs-1.csv', 'theirs-2.csv']);
    });
  });

  describe('when following nextCursor', function () {
    it('pages by limit with hasMore, each event exactly once, then continues with what is appended later', async function () {
      await log.append(['1', '2', '3', '4', '5'].map((n) => change('acme', `${n}.csv`)));
      const seen: string[] = [];
      let body = await feed('acme', '?limit=2');
      seen.push(...body.events.map((event) => event.id));
      expect(body.hasMore).to.equal(true);
      while (body.hasMore) {
        body = await feed('acme', `?limit=2&cursor=${encodeURIComponent(body.nextCursor)}`);
        seen.push(...body.events.map((event) => event.id));
      }
      expect(seen).to.deep.equal(['1', '2', '3', '4', '5'].map((n) => `chg_00000000000${n}`));
      const idle = await feed('acme', `?cursor=${encodeURIComponent(body.nextCursor)}`);
      expect(idle.events).to.deep.equal([]);
      await log.append([change('other', 'x.csv'), change('acme', '6.csv')]);
      const next = await feed('acme', `?cursor=${encodeURIComponent(idle.nextCursor)}`);
      expect(next.events.map((event) => event.file.fileName)).to.deep.equal(['6.csv']);
    });
  });

  describe('when the cursor or a parameter is not acceptable', function () {
    for (const [what, query] of [
      ['limit 0', '?limit=0'],
      ['limit 1001', '?limit=1001'],
      ['wait 61', '?wait=61'],
      ['wait -1', '?wait=-1'],
      ['a cursor that is not one of ours', '?cursor=MToz.bm90LWEtbWFj'],
    ] as const) {
      it(`responds 400 with a code for ${what}`, async function () {
        const response = await gateway.get('acme', `/changes${query}`);
        expect(response.status).to.equal(400);
        expect(jsonOf<ErrorBody>(response).code).to.equal('invalid_request');
      });
    }

    it('responds 400 to a cursor made for another client, and to an altered one', async function () {
      await log.append([change('acme', 'a.csv')]);
      const theirs = (await feed('other')).nextCursor;
      const refused = await gateway.get('acme', `/changes?cursor=${encodeURIComponent(theirs)}`);
      expect(refused.status).to.equal(400);
      expect(jsonOf<ErrorBody>(refused).code).to.equal('invalid_request');
      const mine = (await feed('acme')).nextCursor;
      const payload = Buffer.from('1:0', 'utf8').toString('base64url');
      const altered = `${payload}${mine.slice(mine.indexOf('.'))}`;
      expect((await gateway.get('acme', `/changes?cursor=${encodeURIComponent(altered)}`)).status).to.equal(400);
    });

    it('responds 410 cursor_expired to a cursor older than the retention', async function () {
      await log.append([change('acme', 'old.csv', 'file.released', new Date('2026-10-01T00:00:00Z'))]);
      const start = await feed('acme', '?limit=1');
      await log.append([change('acme', 'a.csv', 'file.released', new Date('2026-10-02T00:00:00Z'))]);
      const cursorAtOne = start.nextCursor;
      await log.prune(new Date('2026-11-01T00:00:00Z'));
      const gone = await gateway.get('acme', `/changes?cursor=${encodeURIComponent(cursorAtOne)}`);
      expect(gone.status).to.equal(410);
      expect(jsonOf<ErrorBody>(gone).code).to.equal('cursor_expired');
    });
  });

  describe('a quiet client', function () {
    it('gets back the very cursor it sent when none of its own events came, whatever other clients got', async function () {
      await log.append([change('acme', 'a.csv')]);
      const start = await feed('acme');
      await log.append([change('other', 'theirs-1.csv'), change('other', 'theirs-2.csv')]);
      const idle = await feed('acme', `?cursor=${encodeURIComponent(start.nextCursor)}`);
      expect(idle).to.deep.equal({ events: [], nextCursor: start.nextCursor, hasMore: false });
      const waited = await feed('acme', `?wait=1&cursor=${encodeURIComponent(start.nextCursor)}`);
      expect(waited, 'after a wait too').to.deep.equal({ events: [], nextCursor: start.nextCursor, hasMore: false });
    });

    it('keeps a cursor older than the retention as long as none of its own events were pruned', async function () {
      await log.append([change('acme', 'mine.csv', 'file.released', new Date('2026-10-01T00:00:00Z'))]);
      const caughtUp = await feed('acme');
      await log.append([change('other', 'theirs.csv', 'file.released', new Date('2026-10-02T00:00:00Z'))]);
      await log.prune(new Date('2026-11-01T00:00:00Z'));
      expect(await log.horizon(), 'the log pruned past the cursor').to.be.above(1);
      const still = await feed('acme', `?cursor=${encodeURIComponent(caughtUp.nextCursor)}`);
      expect(still.events).to.deep.equal([]);
      await log.append([change('acme', 'next.csv')]);
      expect((await feed('acme', `?cursor=${encodeURIComponent(caughtUp.nextCursor)}`)).events.map((event) => event.file.fileName)).to.deep.equal(['next.csv']);
    });
  });

  describe('from the changesCursor of /list and /catalog', function () {
    for (const path of ['/list', '/catalog']) {
      it(`${path} carries the feed's position when it was taken: following it gives exactly the later events`, async function () {
        await log.append([change('acme', 'before.csv')]);
        const listing = await gateway.get('acme', path);
        expect(listing.status).to.equal(200);
        const { changesCursor } = jsonOf<{ changesCursor: string }>(listing);
        await log.append([change('acme', 'after.csv'), change('other', 'theirs.csv')]);
        const body = await feed('acme', `?cursor=${encodeURIComponent(changesCursor)}`);
        expect(body.events.map((event) => event.file.fileName)).to.deep.equal(['after.csv']);
        const refused = await gateway.get('other', `/changes?cursor=${encodeURIComponent(changesCursor)}`);
        expect(refused.status, 'bound to the client it was made for').to.equal(400);
      });

      it(`${path} still answers 304 to its ETag after the feed moved on (the position is not part of the tag)`, async function () {
        const first = await gateway.get('acme', path);
        await log.append([change('acme', 'later.csv')]);
        const again = await gateway.get('acme', path, { 'if-none-match': String(first.headers['etag']) });
        expect(again.status).to.equal(304);
      });
    }

    it('reads the position once per check of the index or of storage, never per request (head reads counted)', async function () {
      const before = log.headReadCount;
      const first = await gateway.get('acme', '/catalog');
      expect(log.headReadCount - before, 'the index loaded: one read').to.equal(1);
      await gateway.get('acme', '/catalog');
      await gateway.get('acme', '/catalog', { 'if-none-match': String(first.headers['etag']) });
      expect(log.headReadCount - before, 'a 200 and a 304 from the kept catalog: none').to.equal(1);
      await gateway.get('acme', '/list');
      expect(log.headReadCount - before, 'which files exist, asked of storage: one more').to.equal(2);
      await gateway.get('acme', '/list');
      await gateway.get('acme', '/list?limit=1');
      expect(log.headReadCount - before, 'listings from the kept answer: none').to.equal(2);
    });
  });

  describe('list once, then follow: nothing a cached listing missed is skipped', function () {
    // The gap this guards: a listing answered from the gateway's caches (the catalog for
    // INDEX_REFRESH_SECONDS, which files exist for LIST_CACHE_SECONDS) with the feed's position of
    // the moment would skip a change logged after those caches were filled.
    let clock: MovableClock;
    let store: MemoryBlobStore;

    beforeEach(async function () {
      await gateway.close();
      clock = new MovableClock();
      store = seededStore();
      gateway = await startGateway({ store, clients, changeStores: changeStoresWith({ log, checksums }), clock, env: { INDEX_REFRESH_SECONDS: '60', LIST_CACHE_SECONDS: '5' } });
    });

    /** What a client knows after listing with `path` and following the feed from its changesCursor. */
    const listThenFollow = async (path: '/list' | '/catalog'): Promise<string[]> => {
      const listing = jsonOf<{ files: ReadonlyArray<{ fileName?: string; FileName?: string }>; changesCursor: string }>(await gateway.get('acme', path));
      const followed = await feed('acme', `?cursor=${encodeURIComponent(listing.changesCursor)}`);
      return [...listing.files.map((file) => file.fileName ?? file.FileName ?? ''), ...followed.events.map((event) => event.file.fileName)];
    };

    it('an upload logged while /list answers from its kept storage check reaches the client through the feed', async function () {
      store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'data/a.csv' }), buildIndexRow({ Symbol: 'N', FileName: 'data/new.csv' })]));
      await gateway.get('acme', '/list');
      store.put('data/new.csv', 'x\n');
      await log.append([change('acme', 'data/new.csv')]);
      // Within LIST_CACHE_SECONDS: the listing still lacks the file, so its cursor must come before the event.
      expect(await listThenFollow('/list')).to.include('data/new.csv');
      // Past INDEX_REFRESH_SECONDS too: the catalog and the storage check are both redone after the event.
      clock.offsetMs += 60_000;
      const fresh = jsonOf<{ files: ReadonlyArray<{ fileName: string }>; changesCursor: string }>(await gateway.get('acme', '/list'));
      expect(fresh.files.map((file) => file.fileName), 'the storage check redone').to.include('data/new.csv');
      const after = await feed('acme', `?cursor=${encodeURIComponent(fresh.changesCursor)}`);
      expect(after.events, 'a position that moved on with the checks').to.deep.equal([]);
    });

    for (const path of ['/list', '/catalog'] as const) {
      it(`an index row added and logged while ${path} answers from its kept catalog reaches the client through the feed`, async function () {
        await gateway.get('acme', path);
        store.put('data/b.csv', 'b\n');
        store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'data/a.csv' }), buildIndexRow({ Symbol: 'B', FileName: 'data/b.csv' })]));
        await log.append([change('acme', 'data/b.csv')]);
        clock.offsetMs += 5_000;
        // The catalog is kept for INDEX_REFRESH_SECONDS: the row is not listed yet.
        expect(await listThenFollow(path)).to.include('data/b.csv');
        clock.offsetMs += 60_000;
        const fresh = jsonOf<{ changesCursor: string }>(await gateway.get('acme', path));
        expect((await feed('acme', `?cursor=${encodeURIComponent(fresh.changesCursor)}`)).events, 'the catalog checked again: the position moved on').to.deep.equal([]);
      });
    }

    it('the last page of a paged /list carries a position for every page, whatever each page saw', async function () {
      store.put('indexes/acme.csv', buildIndexCsv(['a', 'b', 'c'].map((name) => buildIndexRow({ Symbol: name.toUpperCase(), FileName: `data/${name}.csv` }))));
      store.put('data/b.csv', 'b\n');
      store.put('data/c.csv', 'c\n');
      const first = jsonOf<{ nextCursor: string; changesCursor: string }>(await gateway.get('acme', '/list?limit=1'));
      await log.append([change('acme', 'data/x.csv')]);
      // The kept storage check expires: the next page asks storage again, after the event was logged.
      clock.offsetMs += 5_000;
      const last = jsonOf<{ changesCursor: string; truncated: boolean }>(await gateway.get('acme', `/list?limit=5&cursor=${encodeURIComponent(first.nextCursor)}`));
      expect(last.truncated).to.equal(false);
      const followed = await feed('acme', `?cursor=${encodeURIComponent(last.changesCursor)}`);
      expect(followed.events.map((event) => event.file.fileName), 'the first page was older than the event').to.deep.equal(['data/x.csv']);
    });

    it('answers 503 with Retry-After while the position cannot be read, and lists again once it can', async function () {
      const head = log.head.bind(log);
      log.head = (): Promise<number> => Promise.reject(new StorageUnavailable('table storage throttled', { retryable: true }));
      const refused = await gateway.get('acme', '/list');
      expect(refused.status).to.equal(503);
      expect(refused.headers['retry-after']).to.be.a('string');
      expect((await gateway.get('acme', '/count')).status, 'a count needs no position').to.equal(200);
      log.head = head;
      clock.offsetMs += 1_000;
      expect((await gateway.get('acme', '/list')).status).to.equal(200);
      expect((await gateway.get('acme', '/catalog')).status).to.equal(200);
    });
  });

  describe('with wait', function () {
    it('holds an empty answer and returns early, with the event, when one of the caller is appended', async function () {
      const start = await feed('acme');
      // The page read (one head read), then two polls of the watcher: the request is surely waiting.
      const polled = log.headReads(3);
      const waiting = gateway.get('acme', `/changes?wait=60&cursor=${encodeURIComponent(start.nextCursor)}`);
      await polled;
      await log.append([change('other', 'theirs.csv')]);
      await log.append([change('acme', 'fresh.csv')]);
      const response = await waiting;
      expect(response.status).to.equal(200);
      // A wait that ended by its timeout would carry no event: this one returned because of the append.
      expect(jsonOf<FeedBody>(response).events.map((event) => event.file.fileName)).to.deep.equal(['fresh.csv']);
    });

    it('answers with no events and a cursor at the same place when the wait ends', async function () {
      const start = await feed('acme');
      const body = await feed('acme', `?wait=1&cursor=${encodeURIComponent(start.nextCursor)}`);
      expect(body).to.deep.equal({ events: [], nextCursor: start.nextCursor, hasMore: false });
    });
  });
});

describe('GET /changes after the change log was reset (a new log where the old one was: a restart of a memory log)', function () {
  it('responds 410 cursor_expired to a cursor of the old log, before and after the new log passes its position', async function () {
    const madeAt = (ms: number): MemoryChangeLog => new MemoryChangeLog({ clock: { now: () => new Date(ms) } });
    const before = madeAt(Date.parse('2026-11-20T09:00:00Z'));
    await before.append(Array.from({ length: 32 }, (_, i) => change('acme', `old-${i}.csv`)));
    let oldCursor: string;
    const first = await startGateway({ store: seededStore(), clients, changeStores: changeStoresWith({ log: before }) });
    try {
      const body = jsonOf<{ events: unknown[]; nextCursor: string }>(await first.get('acme', '/changes?limit=100'));
      expect(body.events).to.have.length(32);
      oldCursor = body.nextCursor;
    } finally {
      await first.close();
    }
    const after = madeAt(Date.parse('2026-11-20T10:00:00Z'));
    const second = await startGateway({ store: seededStore(), clients, changeStores: changeStoresWith({ log: after }) });
    try {
      const empty = await second.get('acme', `/changes?cursor=${encodeURIComponent(oldCursor)}`);
      expect([empty.status, jsonOf<ErrorBody>(empty).code]).to.deep.equal([410, 'cursor_expired']);
      await after.append(Array.from({ length: 40 }, (_, i) => change('acme', `new-${i}.csv`)));
      const passed = await second.get('acme', `/changes?limit=100&cursor=${encodeURIComponent(oldCursor)}`);
      expect([passed.status, jsonOf<ErrorBody>(passed).code], 'never 200 with events 33-40 only').to.deep.equal([410, 'cursor_expired']);
      const fresh = jsonOf<{ events: Array<{ id: string }> }>(await second.get('acme', '/changes?limit=100'));
      expect(fresh.events, 'starting over gives every event of the new log').to.have.length(40);
      expect(fresh.events[0]?.id).to.equal(`chg_${Date.parse('2026-11-20T10:00:00Z') * 1000 + 1}`);
    } finally {
      await second.close();
    }
  });
});

describe('listings and downloads when the change log hangs', function () {
  it('serves the download at once and answers the listing 503 once the bounded wait for the position ends', async function () {
    const log = new MemoryChangeLog({ clock: originZeroClock });
    let heads = 0;
    log.head = (): Promise<number> => {
      heads += 1;
      return new Promise<number>(() => undefined);
    };
    const gateway = await startGateway({ store: seededStore(), clients, changeStores: changeStoresWith({ log }), changesPositionWaitMs: 50 });
    try {
      const download = await gateway.get('acme', '/download/A');
      expect(download.status, 'the catalog loaded without a position').to.equal(200);
      expect(heads).to.equal(1);
      expect((await gateway.get('acme', '/list')).status).to.equal(503);
      expect((await gateway.get('acme', '/catalog')).status).to.equal(503);
    } finally {
      await gateway.close();
    }
  });
});

describe('GET /changes when the change log fails', function () {
  for (const [status, failure] of [
    [503, new StorageUnavailable('table storage throttled', { retryable: true })],
    [500, new Error('unexpected')],
  ] as const) {
    it(`responds ${status} when reading the log throws ${failure.name}`, async function () {
      const log = new MemoryChangeLog({ clock: originZeroClock });
      log.read = (): Promise<readonly LoggedChange[]> => Promise.reject(failure);
      const gateway = await startGateway({ store: seededStore(), clients, changeStores: changeStoresWith({ log }) });
      try {
        const response = await gateway.get('acme', '/changes');
        expect(response.status).to.equal(status);
      } finally {
        await gateway.close();
      }
    });
  }
});
