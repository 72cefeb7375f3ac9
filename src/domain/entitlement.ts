import { CatalogNotFound, IndexMalformed, InvalidPath, NotEntitled } from './errors.js';
import type { CatalogEntry, FileCatalog } from './file-catalog.js';
import type { Clock, Principal } from './ports.js';
import { validateStoragePath } from './storage-path.js';

/** Gives the current catalog of the index at a storage path, or `undefined` when there is none. */
export interface CatalogProvider {
  /** The rows released now (every row, for an index without release windows). */
  catalogAt(indexPath: string): Promise<FileCatalog | undefined>;
  /**
   * The row of the index for a symbol or storage path that `catalogAt` leaves out because it is
   * outside its release window, if there is one: so that a refusal can say when the file is served.
   */
  unreleasedEntry?(indexPath: string, target: { readonly symbol: string } | { readonly path: string }): Promise<CatalogEntry | undefined>;
  /**
   * The change log's position that a catalog it handed out is known to include: every change
   * logged up to it is in that catalog. `undefined` when it has none.
   */
  changesSeen?(catalog: FileCatalog): number | undefined;
  /**
   * The catalog from a check of the stored index that began at or after `since` (ms; a request's
   * arrival): asked before a refusal, so that a row added to the index is served as soon as the
   * change feed says so, whatever INDEX_REFRESH_SECONDS is.
   */
  recheckedCatalogAt?(indexPath: string, since: number): Promise<FileCatalog | undefined>;
}

/** Decides what a client may see: exactly what its own index lists. */
export class Entitlement {
  constructor(
    private readonly catalogs: CatalogProvider,
    /** When a request arrived, for `recheckedCatalogAt`. */
    private readonly clock: Clock,
  ) {}

  /**
   * The caller's catalog. Throws `CatalogNotFound` when the caller has no index, and
   * `IndexMalformed` when the index path registered for it is not a storage path: the operator's
   * mistake, never the subscriber's.
   */
  async catalogFor(principal: Principal): Promise<FileCatalog> {
    try {
      validateStoragePath(principal.indexPath);
    } catch (error) {
      if (!(error instanceof InvalidPath)) throw error;
      throw new IndexMalformed(`The index path registered for this client is not a valid storage path: ${error.message}`);
    }
    const catalog = await this.catalogs.catalogAt(principal.indexPath);
    if (catalog === undefined) {
      throw new CatalogNotFound(`No catalog was found for client "${principal.clientId}"`);
    }
    return catalog;
  }

  /**
   * The caller's catalog from a check of its stored index that began at or after `since` (ms), or
   * `undefined` when the provider cannot tell: for a listing continued with a cursor of an index
   * version this instance has not loaded yet (another instance of a fleet had).
   */
  async recheckedCatalogFor(principal: Principal, since: number): Promise<FileCatalog | undefined> {
    await this.catalogFor(principal);
    return this.#rechecked(principal, since);
  }

  /** The change log's position the catalog (one `catalogFor` gave) is known to include, if known. */
  changesSeen(catalog: FileCatalog): number | undefined {
    return this.catalogs.changesSeen?.(catalog);
  }

  /**
   * The caller's entry for `symbol`. Throws `NotEntitled` when its index does not list it, or
   * lists it outside its release window.
   */
  async entryForSymbol(principal: Principal, symbol: string): Promise<CatalogEntry> {
    const arrived = this.clock.now().getTime();
    const entry = (await this.catalogFor(principal)).findBySymbol(symbol) ?? (await this.#rechecked(principal, arrived))?.findBySymbol(symbol);
    if (entry === undefined) {
      throw await this.#refusal(principal, { symbol }, `Symbol "${symbol}"`);
    }
    return entry;
  }

  /**
   * The caller's entry for a storage path. Throws `NotEntitled` when its index does not list it,
   * or lists it outside its release window.
   */
  async entryForPath(principal: Principal, fileName: string): Promise<CatalogEntry> {
    const arrived = this.clock.now().getTime();
    const entry = (await this.catalogFor(principal)).findByFileName(fileName) ?? (await this.#rechecked(principal, arrived))?.findByFileName(fileName);
    if (entry === undefined) {
      throw await this.#refusal(principal, { path: fileName }, `File "${fileName}"`);
    }
    return entry;
  }

  /** Before a refusal: the catalog as the stored index had it when the request arrived or later (rows added since the last refresh), if the provider can tell. */
  async #rechecked(principal: Principal, arrived: number): Promise<FileCatalog | undefined> {
    return this.catalogs.recheckedCatalogAt?.(principal.indexPath, arrived);
  }

  async #refusal(principal: Principal, target: { readonly symbol: string } | { readonly path: string }, what: string): Promise<NotEntitled> {
    const unreleased = await this.catalogs.unreleasedEntry?.(principal.indexPath, target);
    if (unreleased === undefined) return new NotEntitled(`${what} is not in the subscription of client "${principal.clientId}"`);
    return new NotEntitled(`${what} is outside its release window (${describeWindow(unreleased)}): it is served only within it`);
  }
}

/** `from 2026-11-24T21:00:00.000Z until 2026-12-31T00:00:00.000Z`, each side where it is bounded. */
function describeWindow(entry: CatalogEntry): string {
  return [
    entry.availableFrom === undefined ? '' : `from ${entry.availableFrom.toISOString()}`,
    entry.availableUntil === undefined ? '' : `until ${entry.availableUntil.toISOString()}`,
  ]
    .filter((part) => part !== '')
    .join(' ');
}
