import { expect } from 'chai';
import { MemoryQuotaLedger } from '../../src/adapters/quota/memory-quota-ledger.js';
import { crossedAlerts, MonthlyQuota, quotaPeriodOf } from '../../src/domain/monthly-quota.js';
import type { Clock } from '../../src/domain/ports.js';

const MiB = 1024 * 1024;

describe('MonthlyQuota', function () {
  let now: Date;
  const clock: Clock = { now: () => now };
  let quota: MonthlyQuota;

  beforeEach(function () {
    now = new Date('2026-11-24T10:00:00Z');
    quota = new MonthlyQuota(new MemoryQuotaLedger(clock), clock);
  });

  describe('quotaPeriodOf', function () {
    it('is the calendar month in UTC, from its first millisecond to the next month’s', function () {
      expect(quotaPeriodOf(new Date('2026-11-30T23:59:59.999Z'))).to.deep.equal({
        key: '2026-11',
        start: new Date('2026-11-01T00:00:00Z'),
        end: new Date('2026-12-01T00:00:00Z'),
      });
      expect(quotaPeriodOf(new Date('2026-12-01T00:00:00Z')).key).to.equal('2026-12');
    });

    it('rolls over the year in December', function () {
      expect(quotaPeriodOf(new Date('2026-12-31T12:00:00Z')).end).to.deep.equal(new Date('2027-01-01T00:00:00Z'));
    });
  });

  describe('when the client has a quota of 10 MiB', function () {
    it('grants a 6 MiB download and then refuses a second one that does not fit, naming what is left', async function () {
      const first = await quota.reserve('acme', 10 * MiB, 6 * MiB);
      expect(first.kind).to.equal('granted');
      const second = await quota.reserve('acme', 10 * MiB, 6 * MiB);
      expect(second).to.deep.include({ kind: 'refused' });
      if (second.kind !== 'refused') throw new Error('unreachable');
      expect(second.standing.remaining).to.equal(4 * MiB);
      expect(second.standing.period.end).to.deep.equal(new Date('2026-12-01T00:00:00Z'));
    });

    it('gives back what an aborted download did not send, once and never more than it reserved', async function () {
      const first = await quota.reserve('acme', 10 * MiB, 6 * MiB);
      await quota.reserve('acme', 10 * MiB, 3 * MiB);
      if (first.kind !== 'granted') throw new Error('not granted');
      await first.refund(5 * MiB);
      expect((await quota.standing('acme', 10 * MiB))?.used).to.equal(4 * MiB);
      // Only 1 MiB of the first reservation is left to give back; the other reservation keeps its 3.
      await first.refund(5 * MiB);
      expect((await quota.standing('acme', 10 * MiB))?.used).to.equal(3 * MiB);
    });

    it('lets a zero-byte answer (a 304, a HEAD) through even when the quota is spent', async function () {
      await quota.reserve('acme', 10 * MiB, 10 * MiB);
      expect((await quota.reserve('acme', 10 * MiB, 0)).kind).to.equal('granted');
    });

    it('starts from zero when the month rolls over', async function () {
      await quota.reserve('acme', 10 * MiB, 10 * MiB);
      now = new Date('2026-12-01T00:00:00Z');
      expect((await quota.reserve('acme', 10 * MiB, 6 * MiB)).kind).to.equal('granted');
    });

    it('reports the 80 % and 100 % crossings once each, on the reservation that crosses them', async function () {
      const crossings: number[][] = [];
      for (const bytes of [7 * MiB, 1 * MiB, 1 * MiB, 1 * MiB]) {
        const decision = await quota.reserve('acme', 10 * MiB, bytes);
        if (decision.kind === 'granted') crossings.push([...decision.crossed]);
      }
      expect(crossings).to.deep.equal([[], [80], [], [100]]);
    });

    it('counts each client on its own', async function () {
      await quota.reserve('acme', 10 * MiB, 10 * MiB);
      expect((await quota.reserve('globex', 10 * MiB, 6 * MiB)).kind).to.equal('granted');
    });
  });

  it('never limits a client without a quota', async function () {
    expect(await quota.reserve('acme', undefined, 10 ** 15)).to.deep.equal({ kind: 'unlimited' });
    expect(await quota.standing('acme', undefined)).to.equal(undefined);
  });

  it('refuses to reserve a negative or fractional number of bytes', async function () {
    await quota.reserve('acme', 10, -1).then(
      () => expect.fail('reserved -1 bytes'),
      (error: unknown) => expect(error).to.be.instanceOf(RangeError),
    );
  });

  describe('crossedAlerts', function () {
    it('crosses both shares at once when one reservation goes from under 80 % to the whole quota', function () {
      expect(crossedAlerts(0, 100, 100)).to.deep.equal([80, 100]);
      expect(crossedAlerts(80, 90, 100)).to.deep.equal([]);
    });
  });
});
