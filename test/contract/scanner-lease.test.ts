import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { BlobScannerLease } from '../../src/adapters/changes/blob-scanner-lease.js';
import { FileScannerLease } from '../../src/adapters/changes/file-scanner-lease.js';
import type { Clock, ScannerLease } from '../../src/domain/ports.js';
import { createTestContainer, sharedAzurite } from '../support/azurite.js';

/** The ScannerLease port's contract, run against every adapter: two instances and a clock the test moves. */

class FixedClock implements Clock {
  constructor(public at: number) {}
  now(): Date {
    return new Date(this.at);
  }
}

interface Subject {
  /** A lease of another instance, on its own clock. */
  instance(clock: Clock): ScannerLease;
  close(): Promise<void>;
}

const expiryMs = 45_000;

const adapters: { name: string; make: () => Promise<Subject> }[] = [
  {
    name: 'FileScannerLease (a temporary folder)',
    make: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'dfg-lease-'));
      return {
        instance: (clock) => new FileScannerLease({ file: join(dir, 'changes', 'scanner.lock'), clock, expiryMs }),
        close: () => rm(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'BlobScannerLease (Azurite)',
    make: async () => {
      const { connectionString } = await sharedAzurite();
      const container = await createTestContainer(connectionString, 'dfg-system-lease');
      return {
        instance: (clock) => new BlobScannerLease({ container, clock, expiryMs }),
        close: async () => void (await container.deleteIfExists()),
      };
    },
  },
];

for (const adapter of adapters) {
  describe(`ScannerLease contract: ${adapter.name}`, function () {
    let subject: Subject;
    let clock: FixedClock;

    beforeEach(async function () {
      subject = await adapter.make();
      clock = new FixedClock(Date.now());
    });

    afterEach(async function () {
      await subject.close();
    });

    it('is held by one instance at a time, and renewed by its holder', async function () {
      const first = subject.instance(clock);
      const second = subject.instance(clock);
      expect(await first.acquire()).to.equal(true);
      expect(await second.acquire()).to.equal(false);
      clock.at += 30_000;
      expect(await first.acquire()).to.equal(true);
      clock.at += 30_000;
      // 60 s after the first take, 30 s after the renewal: still the first's.
      expect(await second.acquire()).to.equal(false);
      expect(await first.acquire()).to.equal(true);
    });

    it('goes to another instance at once when released', async function () {
      const first = subject.instance(clock);
      const second = subject.instance(clock);
      expect(await first.acquire()).to.equal(true);
      await first.release();
      expect(await second.acquire()).to.equal(true);
      expect(await first.acquire()).to.equal(false);
    });

    it('is taken over once its holder stopped renewing for longer than the expiry, and the old holder knows it lost it', async function () {
      const first = subject.instance(clock);
      const second = subject.instance(clock);
      expect(await first.acquire()).to.equal(true);
      clock.at += expiryMs;
      expect(await second.acquire()).to.equal(false);
      clock.at += 1;
      expect(await second.acquire()).to.equal(true);
      expect(await first.acquire()).to.equal(false);
      expect(await second.acquire()).to.equal(true);
    });

    it('releases nothing it does not hold', async function () {
      const first = subject.instance(clock);
      const second = subject.instance(clock);
      expect(await first.acquire()).to.equal(true);
      await second.release();
      expect(await second.acquire()).to.equal(false);
    });
  });
}
