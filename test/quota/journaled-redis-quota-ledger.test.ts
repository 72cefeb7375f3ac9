import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { FileQuotaJournal } from '../../src/adapters/quota/file-quota-journal.js';
import { RedisQuotaLedger, type QuotaLedgerRebuild } from '../../src/adapters/redis/redis-quota-ledger.js';
import type { QuotaJournal, QuotaJournalEntry } from '../../src/domain/ports.js';
import { rejectionOf } from '../support/rejection.js';
import { sharedRedis, uniqueKeyPrefix } from '../support/redis.js';

const period = '2026-11';
const expiresAt = new Date('2027-02-01T00:00:00Z');
const limit = 1000;

/** A journal whose writes fail while `failing` is set. */
class SwitchableJournal implements QuotaJournal {
  failing = false;
  totalsRead = 0;
  constructor(private readonly inner: QuotaJournal) {}
  async record(entry: QuotaJournalEntry): Promise<void> {
    if (this.failing) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    await this.inner.record(entry);
  }
  totals(of: string): Promise<ReadonlyMap<string, number>> {
    this.totalsRead += 1;
    return this.inner.totals(of);
  }
}

/**
 * The Redis quota ledger with a file journal on the machine's Redis: a lost month is simulated by
 * deleting the test's keys (a real restart of a redis-server is in quota-ledger-redis-restart.test.ts).
 */
describe('RedisQuotaLedger with a quota journal', function () {
  let redis: Redis;
  let prefix: string;
  let dir: string;
  const files: FileQuotaJournal[] = [];
  let rebuilds: QuotaLedgerRebuild[];
  let failures: { entry: QuotaJournalEntry; kept: boolean }[];

  /** One gateway instance's ledger: its own journal writer in the shared folder. */
  const instance = (writerName: string, onJournalError: 'allow' | 'deny' = 'deny'): { ledger: RedisQuotaLedger; journal: SwitchableJournal } => {
    const file = new FileQuotaJournal({ dir, writerName });
    files.push(file);
    const journal = new SwitchableJournal(file);
    const ledger = new RedisQuotaLedger(redis, prefix, {
      journal,
      onJournalError,
      onJournalFailure: (_error, entry, kept) => failures.push({ entry, kept }),
      onRebuilt: (rebuild) => rebuilds.push(rebuild),
    });
    return { ledger, journal };
  };
  const reserve = (ledger: RedisQuotaLedger, clientId: string, bytes: number) => ledger.reserve({ clientId, period, bytes, limit, expiresAt });
  /** What a Redis restart without persistence does to this test's keys. */
  const loseEveryKey = async (): Promise<void> => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  };

  beforeEach(async function () {
    redis = sharedRedis();
    prefix = uniqueKeyPrefix('quota-rebuild');
    dir = await mkdtemp(join(tmpdir(), 'dfg-quota-journal-'));
    rebuilds = [];
    failures = [];
  });

  afterEach(async function () {
    for (const file of files.splice(0)) await file.close();
    await rm(dir, { recursive: true, force: true });
    await loseEveryKey();
    redis.disconnect();
  });

  describe('when the month starts (no sentinel, nothing in the journal)', function () {
    it('counts from zero, writes the sentinel and reports no rebuild', async function () {
      const { ledger } = instance('a');
      expect(await reserve(ledger, 'acme', 100)).to.deep.equal({ granted: true, used: 0 });
      expect(await redis.exists(`${prefix}quota-epoch:${period}`)).to.equal(1);
      expect(rebuilds).to.deep.equal([]);
    });
  });

  describe('when Redis has lost the month\'s counts', function () {
    it('starts each client again from its journal total, refunds included, and reports one rebuild of both clients', async function () {
      const { ledger } = instance('a');
      await reserve(ledger, 'acme', 600);
      await reserve(ledger, 'globex', 300);
      await ledger.refund({ clientId: 'acme', period, bytes: 100 });
      await loseEveryKey();
      expect(await reserve(ledger, 'acme', 10)).to.deep.equal({ granted: true, used: 500 });
      expect(await ledger.used('globex', period)).to.equal(300);
      expect(rebuilds).to.deep.equal([{ period, clients: 2 }]);
    });

    it('refuses a reservation that would pass the limit over the rebuilt count', async function () {
      const { ledger } = instance('a');
      await reserve(ledger, 'acme', 900);
      await loseEveryKey();
      expect(await reserve(ledger, 'acme', 200)).to.deep.equal({ granted: false, used: 900 });
    });

    it('shows the journal total to a standing read before any reservation', async function () {
      const { ledger } = instance('a');
      await reserve(ledger, 'acme', 700);
      await loseEveryKey();
      expect(await ledger.used('acme', period)).to.equal(700);
    });

    it('writes each lost count back once when two instances reserve at the same time: none is added twice', async function () {
      const a = instance('a').ledger;
      const b = instance('b').ledger;
      await reserve(a, 'acme', 400);
      await reserve(b, 'acme', 100);
      await reserve(b, 'globex', 50);
      await loseEveryKey();
      const results = await Promise.all(Array.from({ length: 20 }, (_, index) => reserve(index % 2 === 0 ? a : b, 'acme', 50)));
      expect(results.filter((result) => result.granted)).to.have.length(10);
      expect(await a.used('acme', period)).to.equal(1000);
      expect(await b.used('globex', period)).to.equal(50);
      expect(rebuilds.reduce((clients, rebuild) => clients + rebuild.clients, 0)).to.equal(2);
    });
  });

  describe('when a client\'s first reservation of the month comes after the sentinel is written', function () {
    it('starts it at zero without reading the journal again', async function () {
      const { ledger, journal } = instance('a');
      await reserve(ledger, 'acme', 100);
      expect(journal.totalsRead).to.equal(1);
      expect(await reserve(ledger, 'globex', 100)).to.deep.equal({ granted: true, used: 0 });
      expect(journal.totalsRead).to.equal(1);
      expect(rebuilds).to.deep.equal([]);
    });
  });

  describe('when the journal cannot record a reservation', function () {
    it('with RATE_LIMIT_ON_STORE_ERROR=deny, takes the reservation back and rejects', async function () {
      const { ledger, journal } = instance('a', 'deny');
      await reserve(ledger, 'acme', 100);
      journal.failing = true;
      expect(await rejectionOf(reserve(ledger, 'acme', 200))).to.have.property('code', 'ENOSPC');
      expect(await ledger.used('acme', period)).to.equal(100);
      expect(failures).to.deep.equal([{ entry: { clientId: 'acme', period, delta: 200 }, kept: false }]);
    });

    it('with RATE_LIMIT_ON_STORE_ERROR=allow, keeps the reservation counted in Redis and reports the failure', async function () {
      const { ledger, journal } = instance('a', 'allow');
      journal.failing = true;
      expect(await reserve(ledger, 'acme', 200)).to.deep.equal({ granted: true, used: 0 });
      expect(await ledger.used('acme', period)).to.equal(200);
      expect(failures).to.deep.equal([{ entry: { clientId: 'acme', period, delta: 200 }, kept: true }]);
    });
  });

  describe('when the journal cannot record a refund', function () {
    it('gives the bytes back in Redis and reports the failure, whatever the policy', async function () {
      const { ledger, journal } = instance('a', 'deny');
      await reserve(ledger, 'acme', 300);
      journal.failing = true;
      await ledger.refund({ clientId: 'acme', period, bytes: 100 });
      expect(await ledger.used('acme', period)).to.equal(200);
      expect(failures).to.deep.equal([{ entry: { clientId: 'acme', period, delta: -100 }, kept: true }]);
    });
  });
});
