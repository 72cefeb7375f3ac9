import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../domain/ports.js';

/**
 * Which version of each file every client has been counted a download for within the download
 * window. Random-access readers (parquet readers, fsspec and other HTTP file systems) read one file
 * by many ranges: requests of the same client for the same file version within the window are one
 * download, so only the first of them is counted.
 */
export interface CountedVersions {
  /** The version (entity tag) of `path` counted for `clientId` within the window, if any. */
  counted(clientId: string, path: string): Promise<string | undefined>;
  /**
   * Records `etag` as the version of `path` counted for `clientId`, atomically: `true` when it was
   * not already (the caller must count this download now), `false` when it was (the download is free).
   */
  claim(clientId: string, path: string, etag: string): Promise<boolean>;
  /** Takes back a claim whose download was then refused, unless another version was claimed since. */
  release(clientId: string, path: string, etag: string): Promise<void>;
}

/** Makes the memory for a download window of `windowMs`. */
export type CountedVersionsFactory = (windowMs: number) => CountedVersions;

/**
 * How many (client, file) pairs one instance remembers. Past it the least recently used pair is
 * forgotten, and its next download counts again: an eviction can only over-count, never let a
 * download through uncounted. About 200 bytes each.
 */
export const COUNTED_VERSIONS_KEPT = 100_000;

/**
 * The key of one client's file: a hash, so that its length is bounded whatever the path (and a
 * Redis key names neither the client nor the file).
 */
export function countedVersionKey(clientId: string, path: string): string {
  return createHash('sha256').update(clientId).update('\0').update(path).digest('base64url');
}

/**
 * This instance's memory: a bounded LRU whose entries expire a window after the version was first
 * counted (on the gateway's clock). Each instance of a fleet counts on its own; REDIS_URL shares it.
 */
export function memoryCountedVersions(clock: Clock, maxEntries = COUNTED_VERSIONS_KEPT): CountedVersionsFactory {
  return (windowMs) => {
    const versions = new LRUCache<string, string>({
      max: maxEntries,
      ttl: windowMs,
      // Ages read from the gateway's clock at every call, not cached between timer ticks.
      ttlResolution: 0,
      perf: { now: () => clock.now().getTime() },
    });
    return {
      counted: async (clientId, path) => versions.get(countedVersionKey(clientId, path)),
      async claim(clientId, path, etag) {
        const key = countedVersionKey(clientId, path);
        if (versions.get(key) === etag) return false;
        versions.set(key, etag);
        return true;
      },
      async release(clientId, path, etag) {
        const key = countedVersionKey(clientId, path);
        if (versions.get(key) === etag) versions.delete(key);
      },
    };
  };
}
