import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { FileChangeLog } from '../../src/adapters/changes/file-change-log.js';
import { StorageUnavailable } from '../../src/domain/errors.js';

describe('FileChangeLog when its folder cannot be used', function () {
  let dir: string;

  beforeEach(async function () {
    dir = await mkdtemp(join(tmpdir(), 'dfg-log-faults-'));
  });

  afterEach(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  it('reports every operation on a folder replaced by a file as a retryable StorageUnavailable (a 503, not a 500)', async function () {
    const folder = join(dir, 'log');
    await writeFile(folder, 'not a folder');
    const log = new FileChangeLog({ dir: folder });
    const operations: Array<[string, () => Promise<unknown>]> = [
      ['head', () => log.head()],
      ['horizon', () => log.horizon()],
      ['read', () => log.read('acme', 0, 10)],
      ['prunedThrough', () => log.prunedThrough('acme')],
      ['prune', () => log.prune(new Date())],
      ['append', () => log.append([{ clientId: 'acme', type: 'file.released', time: new Date(), file: { symbol: 'A', fileName: 'a.csv', size: 1, etag: '"1"', uploaded: new Date() } }])],
    ];
    for (const [name, operation] of operations) {
      const failure = await operation().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure, name).to.be.instanceOf(StorageUnavailable);
      expect((failure as StorageUnavailable).code, name).to.equal('storage_unavailable');
    }
  });
});

describe('FileChangeLog when its folder is made anew while it runs (a reset)', function () {
  it("takes the new log's origin, and a later prune by the old process writes that one back, not its own", async function () {
    const dir = await mkdtemp(join(tmpdir(), 'dfg-log-reset-'));
    try {
      const folder = join(dir, 'log');
      const early = new FileChangeLog({ dir: folder, clock: { now: () => new Date('2026-11-01T00:00:00Z') } });
      await early.append([{ clientId: 'acme', type: 'file.released', time: new Date('2026-11-01T00:00:00Z'), file: { symbol: 'A', fileName: 'a.csv', size: 1, etag: '"1"', uploaded: new Date() } }]);
      await rm(folder, { recursive: true });
      const later = new FileChangeLog({ dir: folder, clock: { now: () => new Date('2026-11-20T00:00:00Z') } });
      const origin = await later.head();
      await later.append([{ clientId: 'acme', type: 'file.released', time: new Date('2026-11-20T00:00:00Z'), file: { symbol: 'B', fileName: 'b.csv', size: 1, etag: '"2"', uploaded: new Date() } }]);
      expect(await early.head(), 'the old process sees the new log').to.equal(origin + 1);
      await early.prune(new Date('2026-11-25T00:00:00Z'));
      expect((JSON.parse(await readFile(join(folder, 'horizon.json'), 'utf8')) as { origin: number }).origin).to.equal(origin);
      expect(await early.prunedThrough('acme'), "the new log's own change went").to.equal(origin + 1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
