import { expect } from 'chai';
import { JoseSigner } from '../../src/adapters/signing/jose-signer.js';
import { JwtTokenStore } from '../../src/adapters/tokens/jwt-token-store.js';
import { InvalidToken } from '../../src/domain/errors.js';
import type { Signer } from '../../src/domain/ports.js';
import { HandClock } from '../contract/signer-contract.js';

const rootKey = new TextEncoder().encode('jwt-token-store-test-key-of-32-bytes-at-least');

/** The real signer, counting the signature checks it makes. */
function countingSigner(clock: HandClock): { signer: Signer; readonly checks: () => number } {
  const signer = new JoseSigner({ rootKey, clock });
  let checks = 0;
  const verifyToken = signer.verifyToken.bind(signer);
  signer.verifyToken = (...args: Parameters<Signer['verifyToken']>) => {
    checks += 1;
    return verifyToken(...args);
  };
  return { signer, checks: () => checks };
}

describe('JwtTokenStore (bearer tokens)', function () {
  it("checks a token's signature once, then trusts it from memory until it expires", async function () {
    const clock = new HandClock(new Date(Math.floor(Date.now() / 1000) * 1000));
    const { signer, checks } = countingSigner(clock);
    const tokens = new JwtTokenStore({ signer, clock });
    const token = await tokens.issue({ clientId: 'acme', secretFingerprint: 'f1' }, 60);
    for (let i = 0; i < 10; i += 1) expect((await tokens.verify(token)).clientId).to.equal('acme');
    expect(checks(), 'ten requests, one check').to.equal(1);
    clock.advance(60_000);
    const refused = await tokens.verify(token).catch((error: unknown) => error);
    expect(refused).to.be.instanceOf(InvalidToken);
    expect((refused as Error).message).to.equal('The token has expired');
  });

  it('keeps nothing of a token that fails its check: each forged token is checked, and refused, every time', async function () {
    const clock = new HandClock(new Date(Math.floor(Date.now() / 1000) * 1000));
    const { signer, checks } = countingSigner(clock);
    const tokens = new JwtTokenStore({ signer, clock });
    const token = await tokens.issue({ clientId: 'acme', secretFingerprint: 'f1' }, 60);
    const forged = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    for (let i = 0; i < 3; i += 1) expect(await tokens.verify(forged).catch((error: unknown) => error)).to.be.instanceOf(InvalidToken);
    expect(checks()).to.equal(3);
  });

  it('keeps at most verifiedBytes of tokens: the least recently used is checked again', async function () {
    const clock = new HandClock(new Date(Math.floor(Date.now() / 1000) * 1000));
    const { signer, checks } = countingSigner(clock);
    const issued = await Promise.all(Array.from({ length: 3 }, (_, i) => new JwtTokenStore({ signer, clock }).issue({ clientId: `c${i}`, secretFingerprint: 'f' }, 60)));
    const room = 256 + 2 * (issued[0]?.length ?? 0);
    // Room for two tokens.
    const tokens = new JwtTokenStore({ signer, clock, verifiedBytes: 2 * room + 10 });
    for (const token of issued) await tokens.verify(token);
    expect(checks()).to.equal(3);
    await tokens.verify(issued[2] as string);
    await tokens.verify(issued[1] as string);
    expect(checks(), 'the two kept').to.equal(3);
    await tokens.verify(issued[0] as string);
    expect(checks(), 'the first, pushed out, checked again').to.equal(4);
  });
});
