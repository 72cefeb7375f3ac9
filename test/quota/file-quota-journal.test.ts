import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { FileQuotaJournal } from '../../src/adapters/quota/file-quota-journal.js';
import { rejectionOf } from '../support/rejection.js';
import { deadline } from '../support/deadlines.js';

/** Waits until `condition` holds, for at most 5 s on an idle machine (`deadline`). */
async function eventually(condition: () => Promise<boolean>): Promise<void> {
  const giveUpAt = Date.now() + deadline(5000);
  while (!(await condition())) {
    if (Date.now() > giveUpAt) throw new Error(`the condition did not hold within ${deadline(5000)} ms`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('FileQuotaJournal', function () {
  let dir: string;
  const journals: FileQuotaJournal[] = [];
  const journal = (writerName: string, compactAfterLines?: number): FileQuotaJournal => {
    const made = new FileQuotaJournal({ dir, writerName, ...(compactAfterLines !== undefined && { compactAfterLines }) });
    journals.push(made);
    return made;
  };

  beforeEach(async function () {
    dir = await mkdtemp(join(tmpdir(), 'dfg-quota-journal-'));
  });

  afterEach(async function () {
    for (const made of journals.splice(0)) await made.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe('when two writers record into one folder', function () {
    it('answers each client\'s total over both writers\' records, refunds taken off', async function () {
      const a = journal('instance-a');
      const b = journal('instance-b');
      await Promise.all([
        a.record({ clientId: 'acme', period: '2026-11', delta: 600 }),
        b.record({ clientId: 'acme', period: '2026-11', delta: 300 }),
        b.record({ clientId: 'globex', period: '2026-11', delta: 50 }),
        a.record({ clientId: 'acme', period: '2026-11', delta: -100 }),
        a.record({ clientId: 'acme', period: '2026-12', delta: 7 }),
      ]);
      expect(Object.fromEntries(await b.totals('2026-11'))).to.deep.equal({ acme: 800, globex: 50 });
      expect(Object.fromEntries(await a.totals('2026-12'))).to.deep.equal({ acme: 7 });
      expect((await readdir(dir)).sort()).to.deep.equal(['2026-11.instance-a.jsonl', '2026-11.instance-b.jsonl', '2026-12.instance-a.jsonl']);
    });

    it('answers no total for a client whose refunds reach its reservations', async function () {
      const a = journal('instance-a');
      await a.record({ clientId: 'acme', period: '2026-11', delta: 100 });
      await a.record({ clientId: 'acme', period: '2026-11', delta: -100 });
      expect((await a.totals('2026-11')).has('acme')).to.equal(false);
    });
  });

  describe('when many records arrive at once', function () {
    it('writes every one of them, each on its own line', async function () {
      const a = journal('instance-a');
      await Promise.all(Array.from({ length: 200 }, (_, index) => a.record({ clientId: `client-${index % 5}`, period: '2026-11', delta: 1 })));
      const lines = (await readFile(join(dir, '2026-11.instance-a.jsonl'), 'utf8')).trim().split('\n');
      expect(lines).to.have.length(200);
      expect(Object.fromEntries(await a.totals('2026-11'))).to.deep.equal({ 'client-0': 40, 'client-1': 40, 'client-2': 40, 'client-3': 40, 'client-4': 40 });
    });
  });

  describe('when a writer\'s file reaches its bound of lines', function () {
    it('rewrites it as one line per client, with the same totals', async function () {
      const a = journal('instance-a', 10);
      for (let index = 0; index < 25; index += 1) await a.record({ clientId: index % 2 === 0 ? 'acme' : 'globex', period: '2026-11', delta: 10 });
      const lines = (await readFile(join(dir, '2026-11.instance-a.jsonl'), 'utf8')).trim().split('\n');
      expect(lines.length).to.be.below(10);
      expect(Object.fromEntries(await a.totals('2026-11'))).to.deep.equal({ acme: 130, globex: 120 });
    });

    it('stays bounded by its clients over 5,000 records, not by the records', async function () {
      const a = journal('instance-a', 100);
      // 100 rounds of 50 downloads at once.
      for (let round = 0; round < 100; round += 1) {
        await Promise.all(Array.from({ length: 50 }, (_, index) => a.record({ clientId: `client-${index % 20}`, period: '2026-11', delta: 1 })));
      }
      const lines = (await readFile(join(dir, '2026-11.instance-a.jsonl'), 'utf8')).trim().split('\n');
      expect(lines.length).to.be.at.most(150);
      const totals = await a.totals('2026-11');
      expect([totals.get('client-7'), totals.get('client-15')]).to.deep.equal([300, 200]);
    });
  });

  describe('when the file was written by an earlier writer of the same name', function () {
    it('keeps that writer\'s records when it compacts the file', async function () {
      const before = journal('instance-a');
      await before.record({ clientId: 'acme', period: '2026-11', delta: 500 });
      await before.close();
      const after = journal('instance-a', 3);
      for (let index = 0; index < 5; index += 1) await after.record({ clientId: 'globex', period: '2026-11', delta: 1 });
      const lines = (await readFile(join(dir, '2026-11.instance-a.jsonl'), 'utf8')).trim().split('\n');
      expect(lines.length).to.be.below(6);
      expect(Object.fromEntries(await after.totals('2026-11'))).to.deep.equal({ acme: 500, globex: 5 });
    });
  });

  describe('when the journal is closed', function () {
    it('rejects a later record and writes nothing', async function () {
      const a = journal('instance-a');
      await a.close();
      expect(await rejectionOf(a.record({ clientId: 'acme', period: '2026-11', delta: 1 }))).to.be.instanceOf(Error);
      expect(await readdir(dir)).to.deep.equal([]);
    });
  });

  describe('when a record of a newer period arrives', function () {
    it('removes every writer\'s files of the periods before the previous one, and keeps the previous one', async function () {
      const a = journal('instance-a');
      const b = journal('instance-b');
      await b.record({ clientId: 'acme', period: '2026-09', delta: 1 });
      await b.record({ clientId: 'acme', period: '2026-10', delta: 2 });
      await writeFile(join(dir, '2026-10.instance-c.jsonl.0123abcd.tmp'), 'a compaction a crash interrupted');
      await a.record({ clientId: 'acme', period: '2026-12', delta: 3 });
      await eventually(async () => (await readdir(dir)).length === 1);
      expect(await readdir(dir)).to.deep.equal(['2026-12.instance-a.jsonl']);
      await a.record({ clientId: 'acme', period: '2026-11', delta: 4 });
      await a.record({ clientId: 'acme', period: '2027-01', delta: 5 });
      await eventually(async () => (await readdir(dir)).length === 2);
      expect((await readdir(dir)).sort()).to.deep.equal(['2026-12.instance-a.jsonl', '2027-01.instance-a.jsonl']);
    });
  });

  describe('when a file holds a line cut short (a write that failed part-way)', function () {
    it('skips that line and sums every whole one', async function () {
      const a = journal('instance-a');
      await a.record({ clientId: 'acme', period: '2026-11', delta: 100 });
      await appendFile(join(dir, '2026-11.instance-a.jsonl'), '{"clientId":"acme","per');
      await writeFile(join(dir, '2026-11.other-writer.jsonl'), '{"clientId":"acme","period":"2026-11","delta":5}\n{"clientId":"acme"');
      expect(Object.fromEntries(await a.totals('2026-11'))).to.deep.equal({ acme: 105 });
    });
  });

  describe('when the folder cannot be written', function () {
    it('rejects the record, and writes the next one once the folder can be written again', async function () {
      const blocked = join(dir, 'journal');
      await writeFile(blocked, 'a file where the folder should be');
      const a = new FileQuotaJournal({ dir: blocked, writerName: 'instance-a' });
      journals.push(a);
      const error = await rejectionOf(a.record({ clientId: 'acme', period: '2026-11', delta: 100 }));
      expect((error as NodeJS.ErrnoException).code).to.be.oneOf(['EEXIST', 'ENOTDIR']);
      await rm(blocked);
      await a.record({ clientId: 'acme', period: '2026-11', delta: 40 });
      expect(Object.fromEntries(await a.totals('2026-11'))).to.deep.equal({ acme: 40 });
    });
  });

  describe('when the folder is removed while the journal is in use', function () {
    it('writes the next record into the folder made again, where readers find it', async function () {
      const a = journal('instance-a');
      await a.record({ clientId: 'acme', period: '2026-11', delta: 100 });
      await rm(dir, { recursive: true });
      await a.record({ clientId: 'acme', period: '2026-11', delta: 40 });
      expect(Object.fromEntries(await a.totals('2026-11'))).to.deep.equal({ acme: 40 });
    });
  });

  describe('when a record names a period that is not YYYY-MM', function () {
    it('rejects it before touching the file system', async function () {
      const a = journal('instance-a');
      expect(await rejectionOf(a.record({ clientId: 'acme', period: '../x', delta: 1 }))).to.be.instanceOf(RangeError);
      expect(await readdir(dir)).to.deep.equal([]);
    });
  });
});
