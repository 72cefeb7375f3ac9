import { CHANGES_POSITION_RETRY_MS } from './changes.js';
import { GatewayError, StorageUnavailable } from './errors.js';
import type { CatalogProvider } from './entitlement.js';
import { FileCatalogBuilder, type CatalogEntry, type CatalogWarning, type FileCatalog } from './file-catalog.js';
import { isReleased } from './subscription.js';
import type { BoundedMemory, Clock, IndexSource } from './ports.js';
import type { SliceBudget } from './slices.js';

export interface CatalogCacheOptions {
  readonly source: IndexSource;
  /** Where parsed catalogs are kept, within CATALOG_CACHE_MB; an evicted one is loaded again when asked for. */
  readonly memory: BoundedMemory;
  readonly clock: Clock;
  /** How long a catalog is used before the stored index's version is checked again. */
  readonly refreshAfterMs: number;
  /** Told once per parsed index version about the rows it left out. */
  readonly onWarnings?: (indexPath: string, warnings: readonly CatalogWarning[]) => void;
  /** Told when storage failed and a previously loaded catalog is served instead. */
  readonly onStaleServed?: (indexPath: string, cause: StorageUnavailable) => void;
  /**
   * How a parsed index becomes a catalog: in slices with a turn of the event loop between them
   * (`FileCatalog.inSlices`); in one piece when absent.
   */
  readonly slices?: SliceBudget;
  /**
   * The change log's position now (the change feed's). Read before each check of an index against
   * storage, it is the position that catalog is known to include (`changesSeen`): every change
   * logged up to it happened before the check, so the catalog shows it. `undefined` (it never
   * rejects) when it cannot be read now: the check goes on, keeping the position it had (an older,
   * safe one). Absent: no positions.
   */
  readonly changesPosition?: () => Promise<number | undefined>;
}

type Outcome =
  | { readonly kind: 'catalog'; readonly catalog: FileCatalog }
  | { readonly kind: 'absent' }
  | { readonly kind: 'failed'; readonly error: GatewayError };

interface CachedOutcome {
  readonly outcome: Outcome;
  readonly version: string | undefined;
  checkedAt: number;
  /** The change log's position read before the last check that found this outcome (see `changesSeen`). */
  changesSeen: number | undefined;
}

/** What a cached outcome costs besides its catalog: the objects around it and the version string. */
const outcomeBytes = 256;
/** The rows of a catalog released between two boundaries: `subset` when some are not, nothing when all are. */
interface KeptRelease {
  readonly since: number;
  readonly until: number;
  readonly subset: FileCatalog | undefined;
}

/** What a kept released set costs besides its own catalog (none when it is the whole catalog). */
const releasedBytes = 128;

/**
 * Keeps each parsed index for `refreshAfterMs`, then re-checks only the index's version (one
 * property read) and re-parses only when it changed, so an updated index takes effect within that
 * bound without a restart. Concurrent requests for the same index share one load. Catalogs live
 * in the bounded memory: the least recently used is dropped when the bound is reached, and read
 * again from storage the next time it is needed.
 *
 * A catalog whose index has release windows is handed out as the rows released now, kept until the
 * next window boundary (not `refreshAfterMs` later): a file appears and disappears at its boundary
 * without any index change.
 */
export class CatalogCache implements CatalogProvider {
  private readonly inFlight = new Map<string, Promise<CachedOutcome>>();
  /** When each index was last invalidated, until a check that began after it ends (one entry per index path at most). */
  readonly #invalidatedAt = new Map<string, number>();
  /** The check each handed-out catalog (a whole one or its released rows) came from: its `changesSeen`. */
  readonly #checks = new WeakMap<FileCatalog, CachedOutcome>();

  constructor(private readonly options: CatalogCacheOptions) {}

  async catalogAt(indexPath: string): Promise<FileCatalog | undefined> {
    return this.#releasedOf(await this.#wholeCatalogAt(indexPath));
  }

  /**
   * Makes the next request for the index at `indexPath` check its stored version (and read it again
   * if it changed), whatever `refreshAfterMs` says: the change scanner found it changed, and this
   * instance's listings should show what its feed already says.
   */
  invalidate(indexPath: string): void {
    // Kept until a check that began after it ends: one under way now may have read the old version.
    this.#invalidatedAt.set(indexPath, this.options.clock.now().getTime());
    const cached = this.options.memory.get(memoryKey(indexPath)) as CachedOutcome | undefined;
    if (cached !== undefined) cached.checkedAt = -Infinity;
  }

  /**
   * The catalog from a check of the stored index that began at or after `since` (a request's
   * arrival): the one kept if it is that recent, else a new check (one property read, concurrent
   * callers sharing it; a shared check that began earlier is followed by one more). Asked before a
   * refusal, so a row added to the index is served as soon as the change scanner logs it, not
   * `refreshAfterMs` later. A refusal costs storage at most about one read, as `/info` does,
   * bounded by the client's request budget.
   */
  async recheckedCatalogAt(indexPath: string, since: number): Promise<FileCatalog | undefined> {
    let checked = this.options.memory.get(memoryKey(indexPath)) as CachedOutcome | undefined;
    for (let attempt = 0; attempt < 2 && (checked === undefined || checked.checkedAt < since); attempt += 1) {
      checked = await this.#refreshShared(indexPath, checked, this.options.clock.now().getTime());
    }
    return this.#releasedOf(checked === undefined ? undefined : unwrap(checked.outcome));
  }

  #releasedOf(catalog: FileCatalog | undefined): FileCatalog | undefined {
    return catalog === undefined || !catalog.hasWindows ? catalog : this.#released(catalog);
  }

  /**
   * The change log's position read before `catalog` was last found current in storage: every
   * change logged up to it is in the catalog (a later check that found the index unchanged moves it
   * on). `undefined` when no position could be read yet, or for a catalog this cache did not hand out.
   */
  changesSeen(catalog: FileCatalog): number | undefined {
    return this.#checks.get(catalog)?.changesSeen;
  }

  async unreleasedEntry(indexPath: string, target: { readonly symbol: string } | { readonly path: string }): Promise<CatalogEntry | undefined> {
    const catalog = await this.#wholeCatalogAt(indexPath);
    if (catalog === undefined || !catalog.hasWindows) return undefined;
    const entry = 'symbol' in target ? catalog.findBySymbol(target.symbol) : catalog.findByFileName(target.path);
    // Released after all (a boundary passed since the caller looked): not a file this refusal is about.
    return entry !== undefined && !isReleased(entry, this.options.clock.now()) ? entry : undefined;
  }

  async #wholeCatalogAt(indexPath: string): Promise<FileCatalog | undefined> {
    const now = this.options.clock.now().getTime();
    const cached = this.options.memory.get(memoryKey(indexPath)) as CachedOutcome | undefined;
    if (cached !== undefined && now - cached.checkedAt < this.#freshFor(cached)) {
      return unwrap(cached.outcome);
    }
    return unwrap((await this.#refreshShared(indexPath, cached, now)).outcome);
  }

  /** A check of the stored index, shared by concurrent callers. */
  #refreshShared(indexPath: string, cached: CachedOutcome | undefined, now: number): Promise<CachedOutcome> {
    let pending = this.inFlight.get(indexPath);
    if (pending === undefined) {
      pending = this.refresh(indexPath, cached, now).finally(() => this.inFlight.delete(indexPath));
      this.inFlight.set(indexPath, pending);
    }
    return pending;
  }

  /** How long a check stands: a catalog without the change position it should have is checked again soon. */
  #freshFor(cached: CachedOutcome): number {
    const missing = this.options.changesPosition !== undefined && cached.changesSeen === undefined && cached.outcome.kind === 'catalog';
    return missing ? Math.min(CHANGES_POSITION_RETRY_MS, this.options.refreshAfterMs) : this.options.refreshAfterMs;
  }

  /** The rows of `catalog` released now: kept in the bounded memory between two window boundaries. */
  #released(catalog: FileCatalog): FileCatalog {
    // Read after the catalog is in hand: the load may have awaited storage for a while.
    const now = this.options.clock.now().getTime();
    const key = `released:${catalog.serial}`;
    const kept = this.options.memory.get(key) as KeptRelease | undefined;
    if (kept !== undefined && kept.since <= now && now < kept.until) return kept.subset ?? catalog;
    const { catalog: released, since, until } = catalog.releasedAt(now);
    // Never the whole catalog itself: a kept reference would hold it in memory after the bound evicted it.
    const subset = released === catalog ? undefined : released;
    const check = this.#checks.get(catalog);
    if (subset !== undefined && check !== undefined) this.#checks.set(subset, check);
    this.options.memory.set(key, { since, until, subset } satisfies KeptRelease, releasedBytes + (subset?.bytes ?? 0));
    return released;
  }

  private async refresh(indexPath: string, cached: CachedOutcome | undefined, now: number): Promise<CachedOutcome> {
    try {
      // Read before storage is asked: a change logged up to it happened before the check sees the index.
      const position = await this.options.changesPosition?.();
      const next = await this.revalidate(indexPath, cached, now);
      // A failed read keeps the position the outcome had: older, so still one the catalog includes.
      if (position !== undefined) next.changesSeen = position;
      const invalidated = this.#invalidatedAt.get(indexPath);
      if (invalidated !== undefined && invalidated >= now) next.checkedAt = -Infinity;
      else this.#invalidatedAt.delete(indexPath);
      if (next.outcome.kind === 'catalog') this.#checks.set(next.outcome.catalog, next);
      this.options.memory.set(memoryKey(indexPath), next, sizeOf(next));
      return next;
    } catch (error) {
      if (error instanceof StorageUnavailable && cached !== undefined && cached.outcome.kind === 'catalog') {
        this.options.onStaleServed?.(indexPath, error);
        return cached;
      }
      throw error;
    }
  }

  private async revalidate(indexPath: string, cached: CachedOutcome | undefined, now: number): Promise<CachedOutcome> {
    if (cached !== undefined) {
      const version = await this.options.source.version(indexPath);
      if (version === cached.version) {
        cached.checkedAt = now;
        return cached;
      }
    }
    try {
      const loaded = await this.options.source.load(indexPath, () => new FileCatalogBuilder());
      const changesSeen = cached?.changesSeen;
      if (loaded === undefined) return { outcome: { kind: 'absent' }, version: undefined, checkedAt: now, changesSeen };
      const slices = this.options.slices;
      const { catalog, warnings } = slices === undefined ? loaded.rows.build(loaded.version) : await loaded.rows.buildInSlices(loaded.version, slices);
      if (warnings.length > 0) this.options.onWarnings?.(indexPath, warnings);
      return { outcome: { kind: 'catalog', catalog }, version: loaded.version, checkedAt: now, changesSeen };
    } catch (error) {
      if (!(error instanceof GatewayError) || error instanceof StorageUnavailable) throw error;
      // A malformed index stays failed until the stored file changes, without re-reading it each time.
      const version = await this.options.source.version(indexPath);
      return { outcome: { kind: 'failed', error }, version, checkedAt: now, changesSeen: cached?.changesSeen };
    }
  }
}

/** Keys of catalogs in the shared memory; what is derived from a catalog uses its `serial`. */
function memoryKey(indexPath: string): string {
  return `catalog:${indexPath}`;
}

function sizeOf(cached: CachedOutcome): number {
  const version = 2 * (cached.version?.length ?? 0);
  switch (cached.outcome.kind) {
    case 'catalog':
      return outcomeBytes + version + cached.outcome.catalog.bytes;
    case 'absent':
      return outcomeBytes + version;
    case 'failed':
      return outcomeBytes + version + 2 * cached.outcome.error.message.length;
  }
}

function unwrap(outcome: Outcome): FileCatalog | undefined {
  switch (outcome.kind) {
    case 'catalog':
      return outcome.catalog;
    case 'absent':
      return undefined;
    case 'failed':
      throw outcome.error;
  }
}
