import type { ChecksumStore, FileVersion } from '../../domain/ports.js';

/**
 * The SHA-256 of the versions one process computed, for tests and the embedded demo: one entry per
 * stored path (a new version replaces the old), so it is bounded by storage, not by clients.
 */
export class MemoryChecksumStore implements ChecksumStore {
  readonly #byPath = new Map<string, { readonly etag: string; readonly sha256: string }>();

  async record(version: FileVersion, sha256: string): Promise<void> {
    this.#byPath.set(version.path, { etag: version.etag, sha256 });
  }

  async lookup(versions: readonly FileVersion[]): Promise<ReadonlyMap<string, string>> {
    const found = new Map<string, string>();
    for (const version of versions) {
      const known = this.#byPath.get(version.path);
      if (known !== undefined && known.etag === version.etag) found.set(version.path, known.sha256);
    }
    return found;
  }
}
