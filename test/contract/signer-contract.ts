import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import type { Clock, MacPurpose, Signer, TokenPurpose } from '../../src/domain/ports.js';

/** A clock the test moves by hand. */
export class HandClock implements Clock {
  constructor(private current: Date) {}

  now(): Date {
    return this.current;
  }

  advance(byMs: number): void {
    this.current = new Date(this.current.getTime() + byMs);
  }
}

/** A signer over `rootKey` (TOKEN_SIGNING_KEY) reading `clock`. */
export type SignerFactory = (rootKey: Uint8Array, clock: Clock) => Signer;

const tokenPurposes: readonly TokenPurpose[] = ['access-token', 'download-link', 's3-session-token'];
const macPurposes: readonly MacPurpose[] = ['list-cursor', 's3-continuation-token', 'changes-cursor'];
const rootKey = new TextEncoder().encode('signer-contract-key-of-at-least-32-bytes');
const start = new Date('2026-03-01T12:00:00.000Z');

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

/**
 * What every `Signer` must do: tokens and MACs of one purpose refused by every other, expiry on the
 * injected clock, tampering refused, and neutral verdicts rather than exceptions.
 */
export function describeSignerContract(name: string, makeSigner: SignerFactory): void {
  describe(`the Signer contract: ${name}`, function () {
    let clock: HandClock;
    let signer: Signer;

    beforeEach(function () {
      clock = new HandClock(start);
      signer = makeSigner(rootKey, clock);
    });

    const content = { subject: 'acme', claims: { sfp: 'fingerprint', extra: 'x' }, expiresAt: new Date(start.getTime() + 3_600_000) };

    describe('signToken and verifyToken', function () {
      for (const purpose of tokenPurposes) {
        it(`gives back the subject, claims, issue and expiry of a token it signed for ${purpose}`, async function () {
          const check = await signer.verifyToken(purpose, await signer.signToken(purpose, content), ['sfp', 'extra']);
          expect(check).to.deep.equal({ valid: true, token: { ...content, issuedAt: start } });
        });

        for (const other of tokenPurposes.filter((candidate) => candidate !== purpose)) {
          it(`refuses a token signed for ${purpose} when verified for ${other} (bad-signature)`, async function () {
            const check = await signer.verifyToken(other, await signer.signToken(purpose, content), ['sfp']);
            expect(check).to.include({ valid: false, reason: 'bad-signature' });
          });
        }
      }

      it('accepts a token one second before its expiry and refuses it as expired from that second on, on the injected clock', async function () {
        const token = await signer.signToken('access-token', content);
        clock.advance(3_599_000);
        expect((await signer.verifyToken('access-token', token, [])).valid).to.equal(true);
        clock.advance(1_000);
        expect(await signer.verifyToken('access-token', token, [])).to.include({ valid: false, reason: 'expired' });
      });

      it('refuses a token whose payload was changed with its signature kept (bad-signature)', async function () {
        const [header, payload, signature] = (await signer.signToken('download-link', content)).split('.') as [string, string, string];
        const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
        const tampered = `${header}.${base64url({ ...claims, sub: 'other' })}.${signature}`;
        expect(await signer.verifyToken('download-link', tampered, [])).to.include({ valid: false, reason: 'bad-signature' });
      });

      it('refuses a token whose signature was changed (bad-signature)', async function () {
        const [header, payload, signature] = (await signer.signToken('access-token', content)).split('.') as [string, string, string];
        const flipped = `${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
        expect(await signer.verifyToken('access-token', `${header}.${payload}.${flipped}`, [])).to.include({ valid: false, reason: 'bad-signature' });
      });

      it('refuses an unsecured token (alg "none") as malformed', async function () {
        const iat = Math.floor(start.getTime() / 1000);
        const unsigned = `${base64url({ alg: 'none', typ: 'at+jwt' })}.${base64url({ sub: 'acme', iat, exp: iat + 60, sfp: 'f' })}.`;
        expect(await signer.verifyToken('access-token', unsigned, ['sfp'])).to.include({ valid: false, reason: 'malformed' });
      });

      it('refuses what is not a JWT as malformed, without throwing', async function () {
        for (const garbage of ['', 'garbage', 'abc.def.ghi', 'a.b.c.d.e']) {
          expect(await signer.verifyToken('access-token', garbage, []), garbage).to.include({ valid: false, reason: 'malformed' });
        }
      });

      it('refuses a token that lacks a claim the caller requires (malformed)', async function () {
        const token = await signer.signToken('download-link', content);
        expect(await signer.verifyToken('download-link', token, ['etag'])).to.include({ valid: false, reason: 'malformed' });
      });

      it('refuses a token signed under another TOKEN_SIGNING_KEY (bad-signature)', async function () {
        const foreign = makeSigner(new TextEncoder().encode('another-signing-key-of-at-least-32-bytes'), clock);
        expect(await signer.verifyToken('access-token', await foreign.signToken('access-token', content), [])).to.include({
          valid: false,
          reason: 'bad-signature',
        });
      });

      it('will not let a purpose\'s claims overwrite a registered claim', async function () {
        let failure: unknown;
        try {
          await signer.signToken('access-token', { ...content, claims: { sub: 'someone-else' } });
        } catch (error) {
          failure = error;
        }
        expect(failure).to.be.instanceOf(Error);
      });
    });

    describe('mac and verifyMac', function () {
      for (const purpose of macPurposes) {
        it(`verifies a MAC made for ${purpose} over the same fields, and no other fields`, function () {
          const mac = signer.mac(purpose, ['acme', 'payload']);
          expect(mac).to.match(/^[A-Za-z0-9_-]{43}$/);
          expect(signer.verifyMac(purpose, ['acme', 'payload'], mac)).to.equal(true);
          expect(signer.verifyMac(purpose, ['other', 'payload'], mac)).to.equal(false);
          expect(signer.verifyMac(purpose, ['acme', 'payloaD'], mac)).to.equal(false);
        });

        for (const other of macPurposes.filter((candidate) => candidate !== purpose)) {
          it(`refuses a MAC made for ${purpose} when verified for ${other}`, function () {
            expect(signer.verifyMac(other, ['acme', 'payload'], signer.mac(purpose, ['acme', 'payload']))).to.equal(false);
          });
        }
      }

      it('binds the fields unambiguously: moving bytes from one field to the next changes the MAC', function () {
        const mac = signer.mac('list-cursor', ['ab', 'c']);
        expect(signer.verifyMac('list-cursor', ['a', 'bc'], mac)).to.equal(false);
        expect(signer.verifyMac('list-cursor', ['abc'], mac)).to.equal(false);
        expect(signer.verifyMac('list-cursor', ['a\0b', 'c'], signer.mac('list-cursor', ['a', 'b\0c']))).to.equal(false);
      });

      it('refuses an empty, shortened, lengthened or re-spelt MAC', function () {
        const mac = signer.mac('s3-continuation-token', ['acme', 'payload']);
        for (const altered of ['', mac.slice(0, -1), `${mac}A`, `${mac}=`, `${mac.slice(0, 10)}+${mac.slice(11)}`]) {
          expect(signer.verifyMac('s3-continuation-token', ['acme', 'payload'], altered), altered).to.equal(false);
        }
      });

      it('refuses a MAC made under another TOKEN_SIGNING_KEY', function () {
        const foreign = makeSigner(new TextEncoder().encode('another-signing-key-of-at-least-32-bytes'), clock);
        expect(signer.verifyMac('list-cursor', ['acme', 'payload'], foreign.mac('list-cursor', ['acme', 'payload']))).to.equal(false);
      });
    });

    describe('s3SecretAccessKey', function () {
      it('is the same for the same access key id on every instance, and differs between ids', function () {
        const again = makeSigner(rootKey, new HandClock(new Date(0)));
        expect(again.s3SecretAccessKey('DFGKAAAAAAAAAAAAAAAA')).to.equal(signer.s3SecretAccessKey('DFGKAAAAAAAAAAAAAAAA'));
        expect(signer.s3SecretAccessKey('DFGKAAAAAAAAAAAAAAAB')).to.not.equal(signer.s3SecretAccessKey('DFGKAAAAAAAAAAAAAAAA'));
      });
    });

    describe('webhookSecret and webhookSignature', function () {
      const id = 'wh_aaaaaaaaaaaaaaaaaaaaaaaaaa';
      const other = 'wh_aaaaaaaaaaaaaaaaaaaaaaaaab';

      it('gives whsec_ and the base64 of at least 24 bytes, the same on every instance, different per endpoint and per TOKEN_SIGNING_KEY', function () {
        const secret = signer.webhookSecret(id);
        expect(secret).to.match(/^whsec_[A-Za-z0-9+/]+=*$/);
        expect(Buffer.from(secret.slice('whsec_'.length), 'base64').length).to.be.at.least(24);
        expect(makeSigner(rootKey, new HandClock(new Date(0))).webhookSecret(id)).to.equal(secret);
        expect(signer.webhookSecret(other)).to.not.equal(secret);
        expect(makeSigner(new TextEncoder().encode('another-key-of-at-least-thirty-two-bytes'), clock).webhookSecret(id)).to.not.equal(secret);
      });

      it('signs under the secret it shows: HMAC-SHA-256 of the content keyed by the decoded secret, base64', function () {
        const key = Buffer.from(signer.webhookSecret(id).slice('whsec_'.length), 'base64');
        const content = 'chg_000000000001.1772366400.{"type":"file.released"}';
        expect(signer.webhookSignature(id, content)).to.equal(createHmac('sha256', key).update(content, 'utf8').digest('base64'));
        expect(signer.webhookSignature(other, content)).to.not.equal(signer.webhookSignature(id, content));
      });
    });
  });
}
