import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { FileQuotaJournal } from '../../src/adapters/quota/file-quota-journal.js';
import { connectRedis } from '../../src/adapters/redis/redis-client.js';
import { RedisQuotaLedger, type QuotaLedgerRebuild } from '../../src/adapters/redis/redis-quota-ledger.js';
import { MonthlyQuota, quotaPeriodOf } from '../../src/domain/monthly-quota.js';
import type { Clock } from '../../src/domain/ports.js';
import { quietLogger } from '../support/gateway.js';
import { startRedisServer, type RunningRedis } from '../support/redis.js';
import { deadline } from '../support/deadlines.js';

/** Resolves once `client` answers a PING (again), within 10 s. */
async function answering(client: Redis): Promise<void> {
  const giveUpAt = Date.now() + deadline(10_000);
  for (;;) {
    try {
      if ((await client.ping()) === 'PONG') return;
    } catch (error) {
      if (Date.now() > giveUpAt) throw new Error(`Redis did not answer again within ${deadline(10_000)} ms`, { cause: error });
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A redis-server of the test's own, kept in memory only (`--save "" --appendonly no`, as on this
 * machine and on Azure Managed Redis without persistence), killed and started again mid-month under
 * two gateway instances, each with its Redis connection and its own writer in one journal folder.
 */
describe('two gateway instances sharing a quota journal, when their redis-server restarts without persistence mid-month', function () {
  this.timeout(30_000);
  const limit = 1000;
  // One moment for the whole test, so that the reservations before and after the restart fall in one month.
  const moment = new Date();
  const clock: Clock = { now: () => moment };
  const period = quotaPeriodOf(moment).key;
  let redis: RunningRedis;
  let dir: string;
  const connections: Redis[] = [];
  const journals: FileQuotaJournal[] = [];
  const rebuilds: QuotaLedgerRebuild[] = [];

  const instance = (writerName: string): { quota: MonthlyQuota; ledger: RedisQuotaLedger } => {
    const connection = connectRedis({ url: redis.url, connectTimeoutMs: 1000, commandTimeoutMs: 1000, logger: quietLogger });
    connections.push(connection);
    const journal = new FileQuotaJournal({ dir, writerName });
    journals.push(journal);
    const ledger = new RedisQuotaLedger(connection, 'dfg:', {
      journal,
      onJournalError: 'deny',
      onJournalFailure: (error) => {
        throw error;
      },
      onRebuilt: (rebuild) => rebuilds.push(rebuild),
    });
    return { quota: new MonthlyQuota(ledger, clock), ledger };
  };

  before(async function () {
    redis = await startRedisServer();
    dir = await mkdtemp(join(tmpdir(), 'dfg-quota-journal-'));
  });

  after(async function () {
    for (const connection of connections) connection.disconnect();
    for (const journal of journals) await journal.close();
    await redis?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('counts the next reservations on from the counts before the restart, refuses one that would pass the limit, and reports one rebuild of both clients', async function () {
    const a = instance('gateway-a');
    const b = instance('gateway-b');
    for (const connection of connections) await answering(connection);
    expect((await a.quota.reserve('acme', limit, 600)).kind).to.equal('granted');
    expect((await b.quota.reserve('acme', limit, 100)).kind).to.equal('granted');
    expect((await b.quota.reserve('globex', limit, 300)).kind).to.equal('granted');
    expect(await readdir(dir)).to.have.length(2);

    await redis.stop();
    redis = await startRedisServer(redis.port);
    for (const connection of connections) await answering(connection);
    // The restarted server has nothing: every count of the month is gone.
    expect(await connections[0]?.dbsize()).to.equal(0);

    const next = await b.quota.reserve('acme', limit, 50);
    expect(next.kind).to.equal('granted');
    expect(next.kind === 'granted' && next.standing.used).to.equal(750);
    const tooMuch = await a.quota.reserve('acme', limit, 300);
    expect(tooMuch.kind).to.equal('refused');
    expect(tooMuch.kind === 'refused' && tooMuch.standing.remaining).to.equal(250);
    expect((await a.quota.standing('globex', limit))?.used).to.equal(300);
    expect(rebuilds).to.deep.equal([{ period, clients: 2 }]);
  });
});
