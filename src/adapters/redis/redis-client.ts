import { Redis } from 'ioredis';
import type { Logger } from 'pino';

export interface RedisClientOptions {
  /** `redis://` or `rediss://` (TLS): Azure Managed Redis listens on 10000 with TLS. */
  readonly url: string;
  readonly connectTimeoutMs: number;
  /** Every command gets an answer or an error within this time. */
  readonly commandTimeoutMs: number;
  readonly logger: Logger;
}

/** The longest wait between reconnection attempts. */
const MAX_RECONNECT_DELAY_MS = 2000;

/**
 * A Redis connection that never makes a request wait on it: commands fail at once while it is
 * disconnected (no offline queue) and after `commandTimeoutMs` when Redis does not answer; it
 * keeps reconnecting in the background, so the gateway starts without Redis and recovers when it
 * comes back. Connection state changes are logged once each, not per attempt.
 */
export function connectRedis(options: RedisClientOptions): Redis {
  const client = new Redis(options.url, {
    connectTimeout: options.connectTimeoutMs,
    commandTimeout: options.commandTimeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 200, MAX_RECONNECT_DELAY_MS),
    // The connection is made in the background; nothing waits for it.
    lazyConnect: false,
  });
  let state: 'connecting' | 'ready' | 'failing' = 'connecting';
  client.on('ready', () => {
    if (state !== 'ready') options.logger.info('redis connected');
    state = 'ready';
  });
  client.on('error', (error: Error) => {
    // ioredis emits every failed attempt; an operator needs the first of each outage.
    if (state !== 'failing') options.logger.error({ err: error }, 'redis unreachable: retrying in the background');
    state = 'failing';
  });
  return client;
}

/** Answers whether Redis answers a PING within the client's command timeout. */
export async function pingRedis(client: Redis): Promise<string | undefined> {
  try {
    const answer = await client.ping();
    return answer === 'PONG' ? undefined : `Redis answered PING with ${answer}`;
  } catch (error) {
    return `Redis does not answer: ${error instanceof Error ? error.message : String(error)}`;
  }
}
