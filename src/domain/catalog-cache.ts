import { GatewayError, StorageUnavailable } from './errors.js';
import type { CatalogProvider } from './entitlement.js';
import { FileCatalog, type CatalogWarning } from './file-catalog.js';
import type { Clock, IndexSource } from './ports.js';

export interface CatalogCacheOptions {
  readonly source: IndexSource;
  readonly clock: Clock;
  /** How long a catalog is used before the stored index's version is checked again. */
  readonly refreshAfterMs: number;
  /** Told once per parsed index version about the rows it left out. */
  readonly onWarnings?: (indexPath: string, warnings: readonly CatalogWarning[]) => void;
  /** Told when storage failed and a previously loaded catalog is served instead. */
  readonly onStaleServed?: (indexPath: string, cause: StorageUnavailable) => void;
}

type Outcome =
  | { readonly kind: 'catalog'; readonly catalog: FileCatalog }
  | { readonly kind: 'absent' }
  | { readonly kind: 'failed'; readonly error: GatewayError };

interface CachedOutcome {
  readonly outcome: Outcome;
  readonly version: string | undefined;
  checkedAt: number;
}

/**
 * Keeps each parsed index for `refreshAfterMs`, then re-checks only the index's version (one
 * property read) and re-parses only when it changed, so an updated index takes effect within that
 * bound without a restart. Concurrent requests for the same index share one load.
 */
export class CatalogCache implements CatalogProvider {
  private readonly cached = new Map<string, CachedOutcome>();
  private readonly inFlight = new Map<string, Promise<CachedOutcome>>();

  constructor(private readonly options: CatalogCacheOptions) {}

  async catalogAt(indexPath: string): Promise<FileCatalog | undefined> {
    const now = this.options.clock.now().getTime();
    const cached = this.cached.get(indexPath);
    if (cached !== undefined && now - cached.checkedAt < this.options.refreshAfterMs) {
      return unwrap(cached.outcome);
    }
    let pending = this.inFlight.get(indexPath);
    if (pending === undefined) {
      pending = this.refresh(indexPath, cached, now).finally(() => this.inFlight.delete(indexPath));
      this.inFlight.set(indexPath, pending);
    }
    return unwrap((await pending).outcome);
  }

  private async refresh(indexPath: string, cached: CachedOutcome | undefined, now: number): Promise<CachedOutcome> {
    try {
      const next = await this.revalidate(indexPath, cached, now);
      this.cached.set(indexPath, next);
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
      const loaded = await this.options.source.load(indexPath);
      if (loaded === undefined) return { outcome: { kind: 'absent' }, version: undefined, checkedAt: now };
      const { catalog, warnings } = FileCatalog.fromIndex(loaded.records, loaded.rejectedRows);
      if (warnings.length > 0) this.options.onWarnings?.(indexPath, warnings);
      return { outcome: { kind: 'catalog', catalog }, version: loaded.version, checkedAt: now };
    } catch (error) {
      if (!(error instanceof GatewayError) || error instanceof StorageUnavailable) throw error;
      // A malformed index stays failed until the stored file changes, without re-reading it each time.
      const version = await this.options.source.version(indexPath);
      return { outcome: { kind: 'failed', error }, version, checkedAt: now };
    }
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
