import { expect } from 'chai';
import { MemoryChangeLog } from '../../src/adapters/changes/memory-change-log.js';
import { originZeroClock } from '../support/change-log-origin.js';
import type { ChangeScanner, ScanReport } from '../../src/application/change-scanner.js';
import { LeaderDuties } from '../../src/application/leader-duties.js';
import type { ScannerLease } from '../../src/domain/ports.js';

const report: ScanReport = { first: false, listed: 1, added: 0, changed: 0, removed: 0, indexesRead: 0, indexesChanged: [], changes: 0, hashedBytes: 0, backlogHashedBytes: 0, backlogLeft: 0, heldBytes: 0 };

/** A scanner that counts its scans and forgets, and fails when told to. */
function fakeScanner(): { scanner: ChangeScanner; scans: number; forgets: number; fail: boolean } {
  const fake = {
    scans: 0,
    forgets: 0,
    fail: false,
    scanner: {
      scan: async () => {
        fake.scans += 1;
        if (fake.fail) throw new Error('storage down');
        return report;
      },
      forget: () => void (fake.forgets += 1),
    } as unknown as ChangeScanner,
  };
  return fake;
}

describe('LeaderDuties', function () {
  let at: number;
  const clock = { now: () => new Date(at) };
  let held: boolean;
  let released: number;
  const lease: ScannerLease = { acquire: async () => held, release: async () => void (released += 1) };
  let errors: string[];

  beforeEach(function () {
    at = Date.parse('2026-11-24T10:00:00Z');
    held = true;
    released = 0;
    errors = [];
  });

  function duties(fake: ReturnType<typeof fakeScanner>, log = new MemoryChangeLog({ clock: originZeroClock })): LeaderDuties {
    return new LeaderDuties({
      lease,
      scanner: fake.scanner,
      log,
      clock,
      scanEveryMs: 60_000,
      retentionMs: 24 * 3600 * 1000,
      onError: (error, what) => errors.push(`${what}: ${(error as Error).message}`),
    });
  }

  it('scans only while it holds the lease, every scanEveryMs, and starts from the saved state whenever it (re)gains it', async function () {
    const fake = fakeScanner();
    const leader = duties(fake);
    await leader.tick();
    at += 59_999;
    await leader.tick();
    expect(fake.scans).to.equal(1);
    at += 1;
    await leader.tick();
    expect(fake.scans).to.equal(2);
    held = false;
    at += 60_000;
    await leader.tick();
    expect(fake.scans).to.equal(2);
    expect(leader.leading).to.equal(false);
    held = true;
    at += 1_000;
    await leader.tick();
    expect(fake.scans).to.equal(3);
    // Once when it first held it, once when it lost it, once when it took it back.
    expect(fake.forgets).to.equal(3);
  });

  it('runs every afterScan duty after a scan, in order, a failing one reported and the next still run', async function () {
    const fake = fakeScanner();
    const leader = duties(fake);
    const ran: string[] = [];
    leader.afterScan(async () => {
      ran.push('first');
      throw new Error('receiver down');
    });
    leader.afterScan(async ({ report: r }) => void ran.push(`second ${r.listed}`));
    await leader.tick();
    expect(ran).to.deep.equal(['first', 'second 1']);
    expect(errors).to.deep.equal(['duty: receiver down']);
  });

  it('reports a failed scan, runs no duty after it, and starts the next scan from the saved state', async function () {
    const fake = fakeScanner();
    const leader = duties(fake);
    let ran = 0;
    leader.afterScan(async () => void (ran += 1));
    fake.fail = true;
    await leader.tick();
    expect(errors).to.deep.equal(['scan: storage down']);
    expect(ran).to.equal(0);
    expect(fake.forgets).to.equal(2);
  });

  it('prunes what was found longer ago than the retention', async function () {
    const log = new MemoryChangeLog({ clock: originZeroClock });
    const file = { symbol: 'A', fileName: 'a.csv', size: 1, etag: '"1"', uploaded: new Date(at) };
    await log.append([{ clientId: 'acme', type: 'file.released', time: new Date(at), file }]);
    const leader = duties(fakeScanner(), log);
    await leader.tick();
    expect(await log.horizon()).to.equal(0);
    at += 24 * 3600 * 1000 + 1;
    await log.append([{ clientId: 'acme', type: 'file.updated', time: new Date(at), file }]);
    await leader.tick();
    expect(await log.horizon()).to.equal(1);
  });

  it('prunes past the retention even while every scan fails (a scanner over its memory budget keeps failing)', async function () {
    const log = new MemoryChangeLog({ clock: originZeroClock });
    const file = { symbol: 'A', fileName: 'a.csv', size: 1, etag: '"1"', uploaded: new Date(at) };
    await log.append([{ clientId: 'acme', type: 'file.released', time: new Date(at), file }]);
    const fake = fakeScanner();
    fake.fail = true;
    const leader = duties(fake, log);
    await leader.tick();
    at += 24 * 3600 * 1000 + 1;
    await log.append([{ clientId: 'acme', type: 'file.updated', time: new Date(at), file }]);
    await leader.tick();
    expect(errors).to.deep.equal(['scan: storage down', 'scan: storage down']);
    expect(await log.horizon()).to.equal(1);
  });

  it('asks for the next tick at the next scan when that comes before the renewal, so that scans keep their schedule', async function () {
    const leader = duties(fakeScanner());
    expect(leader.delayBeforeNextTick(15_000)).to.equal(15_000);
    await leader.tick();
    expect(leader.delayBeforeNextTick(15_000)).to.equal(15_000);
    at += 50_000;
    expect(leader.delayBeforeNextTick(15_000)).to.equal(10_000);
    at += 20_000;
    expect(leader.delayBeforeNextTick(15_000)).to.equal(0);
    held = false;
    await leader.tick();
    expect(leader.delayBeforeNextTick(15_000)).to.equal(15_000);
  });

  it('gives the lease up when stopped', async function () {
    const leader = duties(fakeScanner());
    await leader.tick();
    await leader.stop();
    expect(released).to.equal(1);
    expect(leader.leading).to.equal(false);
  });
});
