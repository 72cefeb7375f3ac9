import { expect } from 'chai';
import { MemoryChangeLog } from '../../src/adapters/changes/memory-change-log.js';
import { MemoryChecksumStore } from '../../src/adapters/changes/memory-checksum-store.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { FileChange, FileChangeType, LoggedChange } from '../../src/domain/changes.js';
import { StorageUnavailable } from '../../src/domain/errors.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
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
    log = new ObservedLog();
    checksums = new MemoryChecksumStore();
    // A watcher reading the head every 20 ms keeps the long-poll tests short; production reads it every second.
    gateway = await startGateway({ store: seededStore(), clients, changeLog: log, checksums, changesPollMs: 20 });
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

      if (path === '/catalog') {
        it('/catalog answers a revalidation from its catalog alone: a 304 reads no position of the feed (head reads counted)', async function () {
          const first = await gateway.get('acme', path);
          const before = log.headReadCount;
          const again = await gateway.get('acme', path, { 'if-none-match': String(first.headers['etag']) });
          expect(again.status).to.equal(304);
          expect(log.headReadCount - before).to.equal(0);
          await gateway.get('acme', path);
          expect(log.headReadCount - before, 'a 200 reads it once').to.equal(1);
        });
      }

      it(`${path} still answers 304 to its ETag after the feed moved on (the position is not part of the tag)`, async function () {
        const first = await gateway.get('acme', path);
        await log.append([change('acme', 'later.csv')]);
        const again = await gateway.get('acme', path, { 'if-none-match': String(first.headers['etag']) });
        expect(again.status).to.equal(304);
        const fresh = await gateway.get('acme', path);
        expect(jsonOf<{ changesCursor: string }>(fresh).changesCursor).to.not.equal(jsonOf<{ changesCursor: string }>(first).changesCursor);
      });
    }
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

describe('GET /changes when the change log fails', function () {
  for (const [status, failure] of [
    [503, new StorageUnavailable('table storage throttled', { retryable: true })],
    [500, new Error('unexpected')],
  ] as const) {
    it(`responds ${status} when reading the log throws ${failure.name}`, async function () {
      const log = new MemoryChangeLog();
      log.read = (): Promise<readonly LoggedChange[]> => Promise.reject(failure);
      const gateway = await startGateway({ store: seededStore(), clients, changeLog: log });
      try {
        const response = await gateway.get('acme', '/changes');
        expect(response.status).to.equal(status);
      } finally {
        await gateway.close();
      }
    });
  }
});
