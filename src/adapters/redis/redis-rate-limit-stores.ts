import type { Redis } from 'ioredis';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import type { RateLimitStoreFactory } from '../http/rate-limits.js';

/**
 * Rate-limit stores in Redis (rate-limit-redis), one key space per limit under `keyPrefix`, so
 * that every gateway instance counts the same requests: `dfg:downloads:client:acme`.
 */
export function redisStores(client: Redis, keyPrefix: string): RateLimitStoreFactory {
  return (name) =>
    new RedisStore({
      sendCommand: (command: string, ...args: string[]) => client.call(command, ...args) as Promise<RedisReply>,
      prefix: `${keyPrefix}${name}:`,
    });
}
