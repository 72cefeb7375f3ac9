import type { Redis } from 'ioredis';
import type { ClientRateLimitInfo } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import type { RateLimitStores } from '../../domain/ports.js';

/**
 * Rate-limit stores in Redis (rate-limit-redis), one key space per limit under `keyPrefix`, so
 * that every gateway instance counts the same requests: `dfg:downloads:client:acme`.
 *
 * Every key has an expiry (`PX`, the limit's window): rate-limit-redis sets it on the first
 * increment; taking a request back (`decrement`) touches only a key that still exists, since a
 * plain `DECR` of an expired key would create one that never expires.
 */
export function redisStores(client: Redis, keyPrefix: string): RateLimitStores {
  return (name) => new ExpiringRedisStore(client, `${keyPrefix}${name}:`);
}

/** Decrements a count that still has its expiry, never below 0; a missing key stays missing. */
const DECREMENT_SCRIPT = `
if redis.call("PTTL", KEYS[1]) > 0 and tonumber(redis.call("GET", KEYS[1]) or "0") > 0 then
  return redis.call("DECR", KEYS[1])
end
return 0
`.trim();

class ExpiringRedisStore extends RedisStore {
  constructor(
    private readonly client: Redis,
    prefix: string,
  ) {
    super({ sendCommand: (command: string, ...args: string[]) => client.call(command, ...args) as Promise<RedisReply>, prefix });
  }

  /** A key with no count (never counted, or expired) has none: rate-limit-redis reads it as `NaN` hits. */
  override async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const info = await super.get(key);
    return info === undefined || !Number.isFinite(info.totalHits) ? undefined : info;
  }

  override async decrement(key: string): Promise<void> {
    await this.client.eval(DECREMENT_SCRIPT, 1, this.prefixKey(key));
  }
}
