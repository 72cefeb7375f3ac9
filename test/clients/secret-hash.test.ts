import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { expect } from 'chai';
import {
  generateSecret,
  hashSecret,
  ScryptSecretHasher,
  secretFingerprint,
  verifySecret,
} from '../../src/adapters/clients/secret-hash.js';

describe('secret hashing', () => {
  describe('hashSecret', () => {
    it('produces a self-describing scrypt string with N=16384, r=8, p=1, a 16-byte salt and a 32-byte key', async () => {
      const hash = await hashSecret('correct horse battery staple');
      const [scheme, n, r, p, salt, key, ...rest] = hash.split('$');
      expect([scheme, n, r, p]).to.deep.equal(['scrypt', '16384', '8', '1']);
      expect(rest).to.deep.equal([]);
      expect(Buffer.from(salt ?? '', 'base64url')).to.have.length(16);
      expect(Buffer.from(key ?? '', 'base64url')).to.have.length(32);
    });

    it('gives two different hashes for the same secret, because each has its own salt', async () => {
      const first = await hashSecret('same-secret-twice');
      const second = await hashSecret('same-secret-twice');
      expect(first).to.not.equal(second);
      expect(await verifySecret('same-secret-twice', first)).to.equal(true);
      expect(await verifySecret('same-secret-twice', second)).to.equal(true);
    });

    it('writes a cost given to it into the hash, and the hash verifies at that cost (the tests register clients so)', async () => {
      const hash = await hashSecret('cheap-secret-0001', undefined, 16);
      expect(hash.split('$').slice(0, 4)).to.deep.equal(['scrypt', '16', '8', '1']);
      expect(await verifySecret('cheap-secret-0001', hash)).to.equal(true);
      expect(await verifySecret('cheap-secret-0002', hash)).to.equal(false);
    });

    it('refuses a cost that is not a power of two of at least 2', async () => {
      for (const cost of [0, 1, 3, 1000, 2.5]) {
        await hashSecret('s', undefined, cost).then(
          () => expect.fail(`cost ${cost} was accepted`),
          (error: unknown) => expect(error).to.be.instanceOf(RangeError),
        );
      }
    });

    it('never contains the secret', async () => {
      const secret = generateSecret();
      expect(await hashSecret(secret)).to.not.include(secret);
    });
  });

  describe('verifySecret', () => {
    it('accepts the secret the hash was made from', async () => {
      const hash = await hashSecret('s3cret-value-0001');
      expect(await verifySecret('s3cret-value-0001', hash)).to.equal(true);
    });

    it('rejects a different secret, even one differing in a single character', async () => {
      const hash = await hashSecret('s3cret-value-0001');
      expect(await verifySecret('s3cret-value-0002', hash)).to.equal(false);
      expect(await verifySecret('', hash)).to.equal(false);
    });

    it('rejects a hash whose key was altered in its last byte (same length)', async () => {
      const hash = await hashSecret('s3cret-value-0001');
      const parts = hash.split('$');
      const key = Buffer.from(parts[5] ?? '', 'base64url');
      key[key.length - 1] = (key[key.length - 1] ?? 0) ^ 1;
      parts[5] = key.toString('base64url');
      expect(await verifySecret('s3cret-value-0001', parts.join('$'))).to.equal(false);
    });

    it('checks against the parameters stored in the hash, not the current defaults', async () => {
      const hash = await hashSecret('s3cret-value-0001');
      const parts = hash.split('$');
      parts[1] = '1024';
      // Same salt and key, other cost: a different derivation, so no match, and no error.
      expect(await verifySecret('s3cret-value-0001', parts.join('$'))).to.equal(false);
    });

    const malformed: Record<string, string> = {
      'an empty string': '',
      'a plain string': 'not a hash',
      'another scheme': 'bcrypt$16384$8$1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U',
      'too few fields': 'scrypt$16384$8$1$c2FsdHNhbHRzYWx0c2FsdA',
      'too many fields': 'scrypt$16384$8$1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U$x',
      'a cost that is not a power of two': 'scrypt$1000$8$1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U',
      'a non-numeric parameter': 'scrypt$16384$eight$1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U',
      'a cost asking for gigabytes': 'scrypt$1048576$64$1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U',
      'a salt that is not base64url': 'scrypt$16384$8$1$c2Fsd+HNhbHRz/YWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U',
      'an empty key': 'scrypt$16384$8$1$c2FsdHNhbHRzYWx0c2FsdA$',
      'a key too short to be real': 'scrypt$16384$8$1$c2FsdHNhbHRzYWx0c2FsdA$a2V5',
    };
    for (const [name, hash] of Object.entries(malformed)) {
      it(`answers false, without throwing, for ${name}`, async () => {
        expect(await verifySecret('whatever-secret-1', hash)).to.equal(false);
      });
    }
  });

  describe('ScryptSecretHasher.fingerprint', () => {
    it('is the hash\'s secretFingerprint, computed once per hash however often it is asked (every authenticated request asks)', () => {
      const createHash = crypto.createHash;
      let hashes = 0;
      crypto.createHash = ((...args: Parameters<typeof createHash>) => {
        hashes += 1;
        return createHash(...args);
      }) as typeof createHash;
      syncBuiltinESMExports();
      try {
        const hasher = new ScryptSecretHasher({ concurrency: 1 });
        const [first, second] = ['scrypt$16$8$1$c2FsdA$a2V5', 'scrypt$16$8$1$c2FsdA$b3RoZXI'];
        for (let i = 0; i < 50; i += 1) {
          expect(hasher.fingerprint(first)).to.equal(secretFingerprint(first));
          expect(hasher.fingerprint(second)).to.equal(secretFingerprint(second));
        }
        // secretFingerprint's own 100 calls above, and one per hash for the hasher.
        expect(hashes).to.equal(100 + 2);
      } finally {
        crypto.createHash = createHash;
        syncBuiltinESMExports();
      }
    });
  });

  describe('generateSecret', () => {
    it('is 43 characters of base64url (RFC 3986 unreserved only), decoding to 32 bytes', () => {
      for (let i = 0; i < 50; i += 1) {
        const secret = generateSecret();
        expect(secret).to.have.length(43);
        expect(secret).to.match(/^[A-Za-z0-9_-]{43}$/);
        expect(Buffer.from(secret, 'base64url')).to.have.length(32);
      }
    });

    it('does not repeat itself', () => {
      const secrets = new Set(Array.from({ length: 200 }, () => generateSecret()));
      expect(secrets.size).to.equal(200);
    });
  });

  describe('secretFingerprint', () => {
    it('is 16 hex characters, the same for the same hash and different for another hash', async () => {
      const hash = await hashSecret('s3cret-value-0001');
      const other = await hashSecret('s3cret-value-0001');
      expect(secretFingerprint(hash)).to.match(/^[0-9a-f]{16}$/);
      expect(secretFingerprint(hash)).to.equal(secretFingerprint(hash));
      expect(secretFingerprint(other)).to.not.equal(secretFingerprint(hash));
    });
  });
});
