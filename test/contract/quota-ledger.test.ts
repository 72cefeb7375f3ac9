import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { FileQuotaJournal } from '../../src/adapters/quota/file-quota-journal.js';
import { MemoryQuotaLedger } from '../../src/adapters/quota/memory-quota-ledger.js';
import { RedisQuotaLedger } from '../../src/adapters/redis/redis-quota-ledger.js';
import type { Clock, QuotaLedger } from '../../src/domain/ports.js';
import { sharedRedis, uniqueKeyPrefix } from '../support/redis.js';

/** The QuotaLedger port's contract, run against every adapter. */
const clock: Clock = { now: () => new Date('2026-11-24T10:00:00Z') };
const expiresAt = new Date('2027-02-01T00:00:00Z');

const adapters: { name: string; make: () => Promise<{ ledger: QuotaLedger; close: () => Promise<void> }> }[] = [
  { name: 'MemoryQuotaLedger', make: async () => ({ ledger: new MemoryQuotaLedger(clock), close: async () => undefined }) },
  {
    name: 'RedisQuotaLedger (the machine’s Redis)',
    make: async () => {
      const redis = sharedRedis();
      const prefix = uniqueKeyPrefix('quota');
      return {
        ledger: new RedisQuotaLedger(redis, prefix),
        close: async () => {
          const keys = await redis.keys(`${prefix}*`);
          if (keys.length > 0) await redis.del(...keys);
          redis.disconnect();
        },
      };
    },
  },
  {
    name: 'RedisQuotaLedger with a FileQuotaJournal (the machine’s Redis, a temporary folder)',
    make: async () => {
      const redis = sharedRedis();
      const prefix = uniqueKeyPrefix('quota-journaled');
      const dir = await mkdtemp(join(tmpdir(), 'dfg-quota-journal-'));
      const journal = new FileQuotaJournal({ dir, writerName: 'contract' });
      const ledger = new RedisQuotaLedger(redis, prefix, {
        journal,
        onJournalError: 'deny',
        onJournalFailure: (error) => {
          throw error;
        },
        onRebuilt: () => undefined,
      });
      return {
        ledger,
        close: async () => {
          await journal.close();
          await rm(dir, { recursive: true, force: true });
          const keys = await redis.keys(`${prefix}*`);
          if (keys.length > 0) await redis.del(...keys);
          redis.disconnect();
        },
      };
    },
  },
];

for (const adapter of adapters) {
  describe(`QuotaLedger contract: ${adapter.name}`, function () {
    let ledger: QuotaLedger;
    let close: () => Promise<void>;

    beforeEach(async function () {
      ({ ledger, close } = await adapter.make());
    });

    afterEach(async function () {
      await close();
    });

    it('starts every client and period at zero', async function () {
      expect(await ledger.used('acme', '2026-11')).to.equal(0);
    });

    it('adds a reservation that fits and answers the count before it', async function () {
      expect(await ledger.reserve({ clientId: 'acme', period: '2026-11', bytes: 60, limit: 100, expiresAt })).to.deep.equal({ granted: true, used: 0 });
      expect(await ledger.reserve({ clientId: 'acme', period: '2026-11', bytes: 40, limit: 100, expiresAt })).to.deep.equal({ granted: true, used: 60 });
      expect(await ledger.used('acme', '2026-11')).to.equal(100);
    });

    it('refuses a reservation that would pass the limit whole, adding nothing', async function () {
      await ledger.reserve({ clientId: 'acme', period: '2026-11', bytes: 60, limit: 100, expiresAt });
      expect(await ledger.reserve({ clientId: 'acme', period: '2026-11', bytes: 60, limit: 100, expiresAt })).to.deep.equal({ granted: false, used: 60 });
      expect(await ledger.used('acme', '2026-11')).to.equal(60);
    });

    it('grants exactly as many of 50 concurrent reservations as fit', async function () {
      const results = await Promise.all(
        Array.from({ length: 50 }, () => ledger.reserve({ clientId: 'acme', period: '2026-11', bytes: 7, limit: 100, expiresAt })),
      );
      expect(results.filter((result) => result.granted)).to.have.length(14);
      expect(await ledger.used('acme', '2026-11')).to.equal(98);
    });

    it('takes a refund off the count, never below zero', async function () {
      await ledger.reserve({ clientId: 'acme', period: '2026-11', bytes: 60, limit: 100, expiresAt });
      await ledger.refund({ clientId: 'acme', period: '2026-11', bytes: 25 });
      expect(await ledger.used('acme', '2026-11')).to.equal(35);
      await ledger.refund({ clientId: 'acme', period: '2026-11', bytes: 500 });
      expect(await ledger.used('acme', '2026-11')).to.equal(0);
    });

    it('keeps clients and periods apart', async function () {
      await ledger.reserve({ clientId: 'acme', period: '2026-11', bytes: 100, limit: 100, expiresAt });
      expect(await ledger.used('acme', '2026-12')).to.equal(0);
      expect(await ledger.used('globex', '2026-11')).to.equal(0);
    });
  });
}
