import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createHash } from 'node:crypto';
import type { CountedVersionsFactory } from '../../domain/ports.js';

/** Sets the version unless it is already the one kept (which keeps its expiry); 1 when it was not. */
const CLAIM = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

/** Deletes the key only while it still holds this version. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * The counted versions in Redis, shared by every instance: one key per (client, file),
 * `<prefix>download-versions:<hash>`, holding the entity tag counted, expiring a window after it
 * was first counted. While Redis fails, every download is counted (the download limit's own store
 * then applies RATE_LIMIT_ON_STORE_ERROR): an outage can over-count, never let one through
 * uncounted. The outage and the recovery are logged once each.
 */
export function redisCountedVersions(client: Redis, keyPrefix: string, logger: Logger): CountedVersionsFactory {
  return (windowMs) => {
    // A hash of the client and the path: bounded in length whatever the path, and naming neither.
    const keyOf = (clientId: string, path: string): string =>
      `${keyPrefix}download-versions:${createHash('sha256').update(clientId).update('\0').update(path).digest('base64url')}`;
    let failing = false;
    const attempt = async <T>(operation: () => Promise<T>, fallback: T): Promise<T> => {
      try {
        const result = await operation();
        if (failing) logger.info('counted download versions readable again in redis');
        failing = false;
        return result;
      } catch (error) {
        if (!failing) logger.error({ err: error }, 'redis failing: every download is counted, range reads of one file version included');
        failing = true;
        return fallback;
      }
    };
    return {
      counted: (clientId, path) => attempt(async () => (await client.get(keyOf(clientId, path))) ?? undefined, undefined),
      claim: (clientId, path, etag) => attempt(async () => (await client.eval(CLAIM, 1, keyOf(clientId, path), etag, String(windowMs))) === 1, true),
      release: (clientId, path, etag) =>
        attempt(async () => {
          await client.eval(RELEASE, 1, keyOf(clientId, path), etag);
        }, undefined),
    };
  };
}
