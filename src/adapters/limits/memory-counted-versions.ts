import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Clock, CountedVersionsFactory } from '../../domain/ports.js';
import { keyCountBound } from './memory-rate-limit-store.js';

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
      // At most `maxEntries`, with arrays that grow with what is held (see `keyCountBound`).
      ...keyCountBound(maxEntries),
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
