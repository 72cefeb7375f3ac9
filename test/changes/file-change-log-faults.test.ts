import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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
