import { MemoryChecksumStore } from '../../src/adapters/changes/memory-checksum-store.js';
import { expect } from 'chai';
import { LruBoundedMemory } from '../../src/adapters/index/lru-bounded-memory.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { FileAccess } from '../../src/application/file-access.js';
import { Entitlement, type CatalogProvider } from '../../src/domain/entitlement.js';
import { FileCatalog } from '../../src/domain/file-catalog.js';
import type { BlobSummary, Principal } from '../../src/domain/ports.js';

const acme: Principal = { clientId: 'acme', indexPath: 'indexes/acme.csv' };
const LIST_CACHE_MS = 5_000;

/** A store whose existence check answers only when the test says, counting the checks. */
class SlowExistenceStore extends MemoryBlobStore {
  checks = 0;
  #release: (() => void) | undefined;

  override async existing(paths: readonly string[]): Promise<ReadonlyMap<string, BlobSummary>> {
    this.checks += 1;
    await new Promise<void>((resolve) => (this.#release = resolve));
    return super.existing(paths);
  }

  /** Lets the check under way answer. */
  answer(): void {
    this.#release?.();
  }
}

describe('the list cache (LIST_CACHE_SECONDS) of which catalog files exist', function () {
  it('counts its age from when the answer was kept: a check that took longer than the cache lasts is reused, with one storage check in all', async function () {
    const store = new SlowExistenceStore();
    store.put('data/a.csv', 'a');
    let now = Date.parse('2026-11-26T10:00:00Z');
    const clock = { now: () => new Date(now) };
    const catalog = FileCatalog.fromIndex([{ row: 1, Symbol: 'A', ShortDescriptionPt: '', ShortDescription: '', FileName: 'data/a.csv' }]).catalog;
    const catalogs: CatalogProvider = { catalogAt: async () => catalog };
    const files = new FileAccess({
      entitlement: new Entitlement(catalogs, clock),
      checksums: new MemoryChecksumStore(),
      store,
      clock,
      listCacheMs: LIST_CACHE_MS,
      memory: new LruBoundedMemory(1024 * 1024),
      yieldToLoop: () => new Promise((resolve) => setImmediate(resolve)),
    });
    const first = files.count(acme);
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.checks).to.equal(1);
    // The check outlasts the cache's lifetime.
    now += 2 * LIST_CACHE_MS;
    store.answer();
    expect(await first).to.equal(1);
    // Within LIST_CACHE_SECONDS of the answer: served from memory, no second check.
    now += LIST_CACHE_MS - 1;
    expect(await files.count(acme)).to.equal(1);
    expect(store.checks).to.equal(1);
    // Past it: asked again.
    now += 1;
    const again = files.count(acme);
    await new Promise((resolve) => setImmediate(resolve));
    store.answer();
    expect(await again).to.equal(1);
    expect(store.checks).to.equal(2);
  });
});
