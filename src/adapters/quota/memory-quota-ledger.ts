import type { Clock, QuotaLedger, QuotaReservationRequest } from '../../domain/ports.js';

interface Count {
  used: number;
  expiresAt: number;
}

/**
 * One instance's quota counts (no `REDIS_URL`). Keys are registered client ids per period, so the
 * map is bounded by the registry; a period's count is dropped once it expires.
 */
export class MemoryQuotaLedger implements QuotaLedger {
  readonly #counts = new Map<string, Count>();

  constructor(private readonly clock: Clock) {}

  async reserve(request: QuotaReservationRequest): Promise<{ granted: boolean; used: number }> {
    this.#forgetExpired();
    const key = keyOf(request.clientId, request.period);
    const count = this.#counts.get(key) ?? { used: 0, expiresAt: request.expiresAt.getTime() };
    if (count.used + request.bytes > request.limit) return { granted: false, used: count.used };
    const used = count.used;
    count.used += request.bytes;
    count.expiresAt = Math.max(count.expiresAt, request.expiresAt.getTime());
    this.#counts.set(key, count);
    return { granted: true, used };
  }

  async refund(request: { clientId: string; period: string; bytes: number }): Promise<void> {
    const count = this.#counts.get(keyOf(request.clientId, request.period));
    if (count !== undefined) count.used = Math.max(0, count.used - request.bytes);
  }

  async used(clientId: string, period: string): Promise<number> {
    this.#forgetExpired();
    return this.#counts.get(keyOf(clientId, period))?.used ?? 0;
  }

  #forgetExpired(): void {
    const now = this.clock.now().getTime();
    for (const [key, count] of this.#counts) if (count.expiresAt <= now) this.#counts.delete(key);
  }
}

function keyOf(clientId: string, period: string): string {
  return `${period}\u0000${clientId}`;
}
