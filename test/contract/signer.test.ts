import { expect } from 'chai';
import { createHmac, hkdfSync } from 'node:crypto';
import { SignJWT } from 'jose';
import { JoseSigner, purposeKey } from '../../src/adapters/signing/jose-signer.js';
import { describeSignerContract, HandClock } from './signer-contract.js';

describeSignerContract('JoseSigner', (rootKey, clock) => new JoseSigner({ rootKey, clock }));

describe('JoseSigner', function () {
  const rootKeyText = 'test-signing-key-of-at-least-32-bytes!!';
  const rootKey = new TextEncoder().encode(rootKeyText);
  const start = new Date('2026-03-01T12:00:00.000Z');
  const iat = Math.floor(start.getTime() / 1000);
  const accessClaims = { iss: 'data-file-gateway', aud: 'data-file-gateway', sub: 'acme', iat, exp: iat + 60, sfp: 'fingerprint' };
  const signer = (): JoseSigner => new JoseSigner({ rootKey, clock: new HandClock(start) });

  describe('the S3 secret access keys (handed to subscribers: never to change)', function () {
    it('are HMAC-SHA-256 of "dfg-s3-secret-access-key\\0<id>" under TOKEN_SIGNING_KEY itself, base64url (a fixed vector)', function () {
      const id = 'DFGKAAAAAAAAAAAAAAAA';
      // Computed with the gateway's deriveSecretAccessKey before the signer existed.
      expect(signer().s3SecretAccessKey(id)).to.equal('10ryJ_H1GWEVAdDbftf2sfgZSrSWMZmK7A375Q9ggEg');
      expect(signer().s3SecretAccessKey(id)).to.equal(createHmac('sha256', rootKey).update(`dfg-s3-secret-access-key\0${id}`, 'utf8').digest('base64url'));
    });
  });

  describe('the webhook secrets (kept by subscribers: never to change)', function () {
    it('are HKDF-SHA-256 of TOKEN_SIGNING_KEY, the endpoint id as salt, info "data-file-gateway signer v1 webhook-secret", 32 bytes', function () {
      const id = 'wh_aaaaaaaaaaaaaaaaaaaaaaaaaa';
      const expected = Buffer.from(hkdfSync('sha256', rootKey, Buffer.from(id), 'data-file-gateway signer v1 webhook-secret', 32));
      expect(signer().webhookSecret(id)).to.equal(`whsec_${expected.toString('base64')}`);
    });
  });

  describe('the keys of the purposes', function () {
    it('are HKDF-SHA-256 of TOKEN_SIGNING_KEY, empty salt, info "data-file-gateway signer v1 <purpose>", 32 bytes', function () {
      const expected = Buffer.from(hkdfSync('sha256', rootKey, new Uint8Array(0), 'data-file-gateway signer v1 access-token', 32));
      expect(Buffer.from(purposeKey(rootKey, 'access-token')).equals(expected)).to.equal(true);
    });

    it('differ from each other and from TOKEN_SIGNING_KEY', function () {
      const keys = (['access-token', 'download-link', 's3-session-token', 'list-cursor', 's3-continuation-token', 'changes-cursor'] as const).map((purpose) =>
        Buffer.from(purposeKey(rootKey, purpose)).toString('hex'),
      );
      expect(new Set([...keys, Buffer.from(rootKey).toString('hex')]).size).to.equal(keys.length + 1);
    });

    it('accept an HS256 access token made by hand under the access tokens\' key (the baseline for the refusals below)', async function () {
      const token = await new SignJWT(accessClaims).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' }).sign(purposeKey(rootKey, 'access-token'));
      expect((await signer().verifyToken('access-token', token, ['sfp'])).valid).to.equal(true);
    });

    it('refuse a token signed with TOKEN_SIGNING_KEY itself', async function () {
      const token = await new SignJWT(accessClaims).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' }).sign(rootKey);
      expect(await signer().verifyToken('access-token', token, ['sfp'])).to.include({ valid: false, reason: 'bad-signature' });
    });
  });

  describe('the keys of the tokens', function () {
    it('are imported into WebCrypto once per purpose, however many tokens are signed and verified', async function () {
      const subtle = globalThis.crypto.subtle;
      const importKey = subtle.importKey;
      let imports = 0;
      subtle.importKey = ((...args: Parameters<typeof importKey>) => {
        imports += 1;
        return importKey.apply(subtle, args);
      }) as typeof importKey;
      try {
        const one = signer();
        const content = { subject: 'acme', claims: { sfp: 'fingerprint' }, expiresAt: new Date(start.getTime() + 60_000) };
        const token = await one.signToken('access-token', content);
        for (let i = 0; i < 20; i += 1) expect((await one.verifyToken('access-token', token, ['sfp'])).valid).to.equal(true);
        const link = await one.signToken('download-link', content);
        for (let i = 0; i < 20; i += 1) expect((await one.verifyToken('download-link', link, ['sfp'])).valid).to.equal(true);
        expect(imports).to.equal(2);
      } finally {
        subtle.importKey = importKey;
      }
    });
  });

  describe('the algorithm (RFC 8725 section 3.1: pinned)', function () {
    it('refuses an HS512 token under the right key', async function () {
      const token = await new SignJWT(accessClaims).setProtectedHeader({ alg: 'HS512', typ: 'at+jwt' }).sign(purposeKey(rootKey, 'access-token'));
      expect((await signer().verifyToken('access-token', token, ['sfp'])).valid).to.equal(false);
    });

    it('refuses an "RS256" header over an HMAC-SHA256 signature under the right key (algorithm confusion)', async function () {
      const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
      const input = `${encode({ alg: 'RS256', typ: 'at+jwt' })}.${encode(accessClaims)}`;
      const signature = createHmac('sha256', purposeKey(rootKey, 'access-token')).update(input).digest('base64url');
      expect((await signer().verifyToken('access-token', `${input}.${signature}`, ['sfp'])).valid).to.equal(false);
    });
  });

  it('refuses a TOKEN_SIGNING_KEY shorter than 32 bytes', function () {
    expect(() => new JoseSigner({ rootKey: new Uint8Array(31), clock: new HandClock(start) })).to.throw(/at least 32 bytes/);
  });
});
