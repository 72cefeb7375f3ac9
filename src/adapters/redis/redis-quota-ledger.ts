import type { Redis } from 'ioredis';
import type { QuotaLedger, QuotaReservationRequest } from '../../domain/ports.js';

// Check and add in one script, so that instances sharing Redis never both spend the last bytes.
const RESERVE = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local bytes = tonumber(ARGV[1])
if used + bytes > tonumber(ARGV[2]) then return {0, used} end
redis.call('INCRBY', KEYS[1], bytes)
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
return {1, used}
`;

// Never below zero, whatever the order of refunds and an expiry.
const REFUND = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used <= 0 then return 0 end
local left = math.max(0, used - tonumber(ARGV[1]))
redis.call('SET', KEYS[1], left, 'KEEPTTL')
return left
`;

/**
 * Quota counts shared by every instance (`REDIS_URL`): one integer per client and period,
 * `<prefix>quota:<period>:<client id>`, with an expiry, so the key space is bounded by the registry.
 */
export class RedisQuotaLedger implements QuotaLedger {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  async reserve(request: QuotaReservationRequest): Promise<{ granted: boolean; used: number }> {
    const [granted, used] = (await this.redis.eval(
      RESERVE,
      1,
      this.#key(request.clientId, request.period),
      String(request.bytes),
      String(request.limit),
      String(request.expiresAt.getTime()),
    )) as [number, number];
    return { granted: granted === 1, used: Number(used) };
  }

  async refund(request: { clientId: string; period: string; bytes: number }): Promise<void> {
    await this.redis.eval(REFUND, 1, this.#key(request.clientId, request.period), String(request.bytes));
  }

  async used(clientId: string, period: string): Promise<number> {
    return Number((await this.redis.get(this.#key(clientId, period))) ?? 0);
  }

  #key(clientId: string, period: string): string {
    return `${this.keyPrefix}quota:${period}:${clientId}`;
  }
}
