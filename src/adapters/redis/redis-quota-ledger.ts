import type { Redis } from 'ioredis';
import type { QuotaJournal, QuotaJournalEntry, QuotaLedger, QuotaReservationRequest } from '../../domain/ports.js';

// Check and add in one script, so that instances sharing Redis never both spend the last bytes.
// A count that is not there is started at ARGV[4]; without ARGV[4] the script answers -1 and adds
// nothing, so that a count Redis lost is never started again from zero by mistake. One key per
// script: Azure Managed Redis is clustered and refuses a script whose keys lie in two hash slots.
const RESERVE = `
local raw = redis.call('GET', KEYS[1])
if not raw then
  if ARGV[4] == '' then return {-1, 0} end
  raw = ARGV[4]
  redis.call('SET', KEYS[1], raw, 'PXAT', ARGV[3])
end
local used = tonumber(raw)
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

const MISSING = -1;

/**
 * The period's sentinel expires this much before its counts, so that Redis evicting by nearest
 * expiry (`volatile-ttl`) drops it before any count and the loss is noticed.
 */
const SENTINEL_EARLIER_MS = 3600 * 1000;

/** What a rebuild from the journal restored. */
export interface QuotaLedgerRebuild {
  readonly period: string;
  /** Clients whose lost count this instance wrote back (others may have been written back by another instance at the same time). */
  readonly clients: number;
}

/** The durable side of the ledger: the journal that every reservation and refund is recorded in, and what to do when it fails. */
export interface QuotaLedgerJournaling {
  readonly journal: QuotaJournal;
  /**
   * RATE_LIMIT_ON_STORE_ERROR for a reservation the journal cannot record: `allow` keeps it (counted
   * in Redis only, so a later rebuild would miss it), `deny` takes it back and rejects.
   */
  readonly onJournalError: 'allow' | 'deny';
  /** Told of each change the journal could not record (and whether the reservation was kept). */
  readonly onJournalFailure: (error: unknown, entry: QuotaJournalEntry, kept: boolean) => void;
  /** Told when this instance wrote back counts that Redis had lost. */
  readonly onRebuilt: (rebuild: QuotaLedgerRebuild) => void;
}

/**
 * Quota counts shared by every instance (`REDIS_URL`): one integer per client and period,
 * `<prefix>quota:<period>:<client id>`, with an expiry, so the key space is bounded by the registry.
 *
 * With a journal, Redis is the fast path and the journal the record: every granted reservation and
 * every refund is recorded after Redis counted it. A count is only ever started by a script that is
 * told where to start it, and `<prefix>quota-epoch:<period>` says this Redis has every count of
 * the period that the journal has: it is written once those are written. When a count is missing
 * and so is the sentinel (Redis restarted without persistence, failed over, or evicted it), the
 * instance sums the journal and writes back each client's count with SET NX: instances that do
 * this at the same time write the same totals and never add twice, and a count that a reservation
 * has already started again is left alone.
 */
export class RedisQuotaLedger implements QuotaLedger {
  /** Rebuilds under way on this instance, by period: concurrent reservations wait for the one. */
  readonly #rebuilds = new Map<string, Promise<ReadonlyMap<string, number>>>();

  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly journaling?: QuotaLedgerJournaling,
  ) {}

  async reserve(request: QuotaReservationRequest): Promise<{ granted: boolean; used: number }> {
    const key = this.#key(request.clientId, request.period);
    // Without a journal there is nothing to rebuild from: a missing count starts at zero.
    let result = await this.#reserve(key, request, this.journaling === undefined ? '0' : '');
    if (result[0] === MISSING) result = await this.#reserve(key, request, String(await this.#startOf(request.clientId, request.period, request.expiresAt)));
    const [granted, used] = result;
    if (granted !== 1) return { granted: false, used };
    await this.#record({ clientId: request.clientId, period: request.period, delta: request.bytes }, async () => {
      await this.redis.eval(REFUND, 1, key, String(request.bytes));
    });
    return { granted: true, used };
  }

  async refund(request: { clientId: string; period: string; bytes: number }): Promise<void> {
    await this.redis.eval(REFUND, 1, this.#key(request.clientId, request.period), String(request.bytes));
    // A refund the journal misses only leaves a rebuilt count higher: the subscriber loses bytes, never the vendor.
    await this.#record({ clientId: request.clientId, period: request.period, delta: -request.bytes }, undefined);
  }

  async used(clientId: string, period: string): Promise<number> {
    const key = this.#key(clientId, period);
    const count = await this.redis.get(key);
    if (count !== null || this.journaling === undefined) return Number(count ?? 0);
    if ((await this.redis.exists(this.#sentinelKey(period))) === 1) return 0;
    // Lost or never counted: a standing read after a reset must not show a full quota.
    return (await this.#rebuild(period, undefined)).get(clientId) ?? 0;
  }

  async #reserve(key: string, request: QuotaReservationRequest, start: string): Promise<[number, number]> {
    const [status, used] = (await this.redis.eval(
      RESERVE,
      1,
      key,
      String(request.bytes),
      String(request.limit),
      String(request.expiresAt.getTime()),
      start,
    )) as [number, number];
    return [Number(status), Number(used)];
  }

  /** Where a client's missing count starts: zero while the sentinel stands, its journal total once the period is rebuilt. */
  async #startOf(clientId: string, period: string, expiresAt: Date): Promise<number> {
    if ((await this.redis.exists(this.#sentinelKey(period))) === 1) return 0;
    return (await this.#rebuild(period, expiresAt)).get(clientId) ?? 0;
  }

  /**
   * Writes back the period's counts from the journal (SET NX each) and then the sentinel. Without
   * `expiresAt` (a read of the standing) the counts are only read, not written.
   */
  #rebuild(period: string, expiresAt: Date | undefined): Promise<ReadonlyMap<string, number>> {
    const journaling = this.journaling;
    if (journaling === undefined) return Promise.resolve(new Map());
    if (expiresAt === undefined) return this.#rebuilds.get(period) ?? journaling.journal.totals(period);
    let rebuild = this.#rebuilds.get(period);
    if (rebuild === undefined) {
      rebuild = (async () => {
        const totals = await journaling.journal.totals(period);
        const expiry = String(expiresAt.getTime());
        const writes = this.redis.pipeline();
        for (const [clientId, used] of totals) writes.set(this.#key(clientId, period), String(used), 'PXAT', expiry, 'NX');
        const answers = (await writes.exec()) ?? [];
        const failure = answers.find(([error]) => error !== null)?.[0];
        if (failure) throw failure;
        const clients = answers.filter(([, answer]) => answer === 'OK').length;
        await this.redis.set(this.#sentinelKey(period), new Date().toISOString(), 'PXAT', String(expiresAt.getTime() - SENTINEL_EARLIER_MS), 'NX');
        if (clients > 0) journaling.onRebuilt({ period, clients });
        return totals;
      })().finally(() => this.#rebuilds.delete(period));
      this.#rebuilds.set(period, rebuild);
    }
    return rebuild;
  }

  /** Records `entry` in the journal; when it cannot, `undo` (a reservation's) runs unless RATE_LIMIT_ON_STORE_ERROR allows. */
  async #record(entry: QuotaJournalEntry, undo: (() => Promise<void>) | undefined): Promise<void> {
    const journaling = this.journaling;
    if (journaling === undefined) return;
    try {
      await journaling.journal.record(entry);
    } catch (error) {
      const kept = undo === undefined || journaling.onJournalError === 'allow';
      journaling.onJournalFailure(error, entry, kept);
      if (kept) return;
      await undo();
      throw error;
    }
  }

  #key(clientId: string, period: string): string {
    return `${this.keyPrefix}quota:${period}:${clientId}`;
  }

  #sentinelKey(period: string): string {
    return `${this.keyPrefix}quota-epoch:${period}`;
  }
}
