import { CatalogNotFound, IndexMalformed, InvalidPath, NotEntitled } from './errors.js';
import type { CatalogEntry, FileCatalog } from './file-catalog.js';
import type { Principal } from './ports.js';
import { validateStoragePath } from './storage-path.js';

/** Gives the current catalog of the index at a storage path, or `undefined` when there is none. */
export interface CatalogProvider {
  catalogAt(indexPath: string): Promise<FileCatalog | undefined>;
}

/** Decides what a client may see: exactly what its own index lists. */
export class Entitlement {
  constructor(private readonly catalogs: CatalogProvider) {}

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

  /** The caller's entry for `symbol`. Throws `NotEntitled` when its index does not list it. */
  async entryForSymbol(principal: Principal, symbol: string): Promise<CatalogEntry> {
    const entry = (await this.catalogFor(principal)).findBySymbol(symbol);
    if (entry === undefined) {
      throw new NotEntitled(`Symbol "${symbol}" is not in the subscription of client "${principal.clientId}"`);
    }
    return entry;
  }

  /** The caller's entry for a storage path. Throws `NotEntitled` when its index does not list it. */
  async entryForPath(principal: Principal, fileName: string): Promise<CatalogEntry> {
    const entry = (await this.catalogFor(principal)).findByFileName(fileName);
    if (entry === undefined) {
      throw new NotEntitled(`File "${fileName}" is not in the subscription of client "${principal.clientId}"`);
    }
    return entry;
  }
}
