import { scryptSync } from 'node:crypto';
import { expect } from 'chai';
import { ScryptThreads } from '../../src/adapters/clients/scrypt-threads.js';
import { hashSecret, ScryptSecretHasher } from '../../src/adapters/clients/secret-hash.js';

const options = { N: 1024, r: 8, p: 1, maxmem: 32 * 1024 * 1024 };

describe('ScryptThreads', function () {
  this.timeout(30_000);
  let threads: ScryptThreads;
  afterEach(async () => threads.close());

  describe('when asked for a key', function () {
    it('derives the key crypto.scryptSync derives from the same secret, salt and parameters', async function () {
      threads = new ScryptThreads(1);
      const salt = Buffer.from('0123456789abcdef');
      const key = await threads.derive('a secret', salt, 32, options);
      expect(Buffer.isBuffer(key)).to.equal(true);
      expect(key.toString('hex')).to.equal(scryptSync('a secret', salt, 32, options).toString('hex'));
    });
  });

  describe('when scrypt refuses the parameters', function () {
    it('rejects, and the thread derives the next key', async function () {
      threads = new ScryptThreads(1);
      const salt = Buffer.from('0123456789abcdef');
      let failure: unknown;
      await threads.derive('a secret', salt, 32, { ...options, maxmem: 1024 }).catch((error: unknown) => (failure = error));
      expect(failure).to.be.instanceOf(Error);
      expect((await threads.derive('a secret', salt, 32, options)).length).to.equal(32);
    });
  });

  describe('when more derivations are asked for at once than it has threads', function () {
    it('runs as many as it has threads and refuses the one more', async function () {
      threads = new ScryptThreads(2);
      const salt = Buffer.from('0123456789abcdef');
      const running = [threads.derive('one', salt, 32, options), threads.derive('two', salt, 32, options)];
      let refused: unknown;
      await threads.derive('three', salt, 32, options).catch((error: unknown) => (refused = error));
      expect(String(refused)).to.include('more than 2 scrypt derivations at once');
      const keys = await Promise.all(running);
      expect(keys.map((key) => key.toString('hex'))).to.deep.equal(['one', 'two'].map((secret) => scryptSync(secret, salt, 32, options).toString('hex')));
    });
  });
});

describe('ScryptSecretHasher', function () {
  this.timeout(30_000);

  describe('when more verifications are asked for than its concurrency', function () {
    it('verifies them all on its threads, accepting the right secrets only', async function () {
      const hasher = new ScryptSecretHasher({ concurrency: 2 });
      try {
        const hash = await hashSecret('the right secret');
        const answers = await Promise.all(['the right secret', 'a wrong secret', 'the right secret', 'the right secreT', 'the right secret'].map((secret) => hasher.verify(secret, hash)));
        expect(answers).to.deep.equal([true, false, true, false, true]);
        expect(await hasher.verify('the right secret', await hasher.decoyHash())).to.equal(false);
      } finally {
        await hasher.close();
      }
    });
  });
});
