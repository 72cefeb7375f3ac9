import { expect } from 'chai';
import { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { ClientAuthentication } from '../../src/application/client-authentication.js';
import { InvalidClient, InvalidToken, SubscriptionInactive } from '../../src/domain/errors.js';
import type { ClientRecord, Clock, SecretHasher, TokenClaims, TokenStore, VerifiedToken } from '../../src/domain/ports.js';
import { rejectionOf } from '../support/rejection.js';

/** A transparent hasher that records what it was asked to verify: `hash:<secret>`. */
class RecordingHasher implements SecretHasher {
  readonly verified: Array<{ secret: string; hash: string }> = [];
  async verify(secret: string, hash: string): Promise<boolean> {
    this.verified.push({ secret, hash });
    return hash === `hash:${secret}`;
  }
  async decoyHash(): Promise<string> {
    return 'hash:<decoy>';
  }
  fingerprint(hash: string): string {
    return `fp(${hash})`;
  }
}

/** Tokens as readable JSON, expiring `lifetimeSeconds` after the clock's now; `verify` refuses what it did not issue. */
class PlainTokens implements TokenStore {
  readonly lifetimes: number[] = [];
  verifications = 0;
  constructor(private readonly clock: Clock) {}
  async issue(claims: TokenClaims, lifetimeSeconds: number): Promise<string> {
    this.lifetimes.push(lifetimeSeconds);
    return `token:${JSON.stringify({ ...claims, expiresAt: this.clock.now().getTime() + lifetimeSeconds * 1000 })}`;
  }
  async verify(token: string): Promise<VerifiedToken> {
    this.verifications += 1;
    if (!token.startsWith('token:')) throw new InvalidToken('The token is malformed or not issued by this gateway');
    const { expiresAt, ...claims } = JSON.parse(token.slice('token:'.length)) as TokenClaims & { expiresAt: number };
    if (expiresAt <= this.clock.now().getTime()) throw new InvalidToken('The token has expired');
    return { ...claims, expiresAt: new Date(expiresAt) };
  }
}

const buildClient = (overrides: Partial<ClientRecord> = {}): ClientRecord => ({
  clientId: 'acme',
  secretHash: 'hash:right',
  indexPath: 'indexes/acme.csv',
  enabled: true,
  ...overrides,
});

describe('ClientAuthentication (src/domain/client-authentication.ts)', function () {
  let registry: InMemoryClientRegistry;
  let hasher: RecordingHasher;
  let tokens: PlainTokens;
  let auth: ClientAuthentication;
  let now: number;
  const clock: Clock = { now: () => new Date(now) };

  beforeEach(function () {
    now = Date.UTC(2026, 0, 1);
    registry = new InMemoryClientRegistry([buildClient(), buildClient({ clientId: 'off', enabled: false })]);
    hasher = new RecordingHasher();
    tokens = new PlainTokens(clock);
    auth = new ClientAuthentication({ registry, secrets: hasher, tokens, tokenLifetimeSeconds: 600, clock });
  });

  describe('authenticate', function () {
    it('returns the client for its own secret', async function () {
      expect((await auth.authenticate('acme', 'right')).clientId).to.equal('acme');
    });

    it('refuses a wrong secret, a disabled client and an unknown id with the same InvalidClient message', async function () {
      const failures = await Promise.all([
        rejectionOf(auth.authenticate('acme', 'wrong')),
        rejectionOf(auth.authenticate('off', 'right')),
        rejectionOf(auth.authenticate('nobody', 'right')),
      ]);
      for (const failure of failures) expect(failure).to.be.instanceOf(InvalidClient);
      expect(new Set(failures.map((failure) => (failure as Error).message)).size).to.equal(1);
    });

    it('verifies an unknown id against the decoy hash, so it costs one verification like any other', async function () {
      await rejectionOf(auth.authenticate('nobody', 'guess'));
      expect(hasher.verified).to.deep.equal([{ secret: 'guess', hash: 'hash:<decoy>' }]);
    });
  });

  describe('the subscription term (to the second)', function () {
    const validFrom = new Date('2026-01-01T09:00:00.000Z');
    const validUntil = new Date('2026-01-31T00:00:00.000Z');
    beforeEach(function () {
      registry.add(buildClient({ validFrom, validUntil, monthlyBytes: 1024 }));
    });

    it('refuses a token one millisecond before the term starts, saying when it starts, and grants one at the start', async function () {
      now = validFrom.getTime() - 1;
      const refused = await rejectionOf(auth.authenticate('acme', 'right'));
      expect(refused).to.be.instanceOf(SubscriptionInactive);
      expect((refused as Error).message).to.equal('The subscription is not active yet: it starts at 2026-01-01T09:00:00.000Z');
      now = validFrom.getTime();
      expect((await auth.authenticate('acme', 'right')).clientId).to.equal('acme');
    });

    it('refuses a token at the end of the term, saying when it ended', async function () {
      now = validUntil.getTime() - 1;
      await auth.authenticate('acme', 'right');
      now = validUntil.getTime();
      const refused = await rejectionOf(auth.authenticate('acme', 'right'));
      expect((refused as Error).message).to.equal('The subscription is not active: it ended at 2026-01-31T00:00:00.000Z');
    });

    it('tells only a caller with the right secret about the term', async function () {
      now = validUntil.getTime();
      expect(await rejectionOf(auth.authenticate('acme', 'wrong'))).to.be.instanceOf(InvalidClient);
    });

    it('issues a token that expires at the end of the term when that comes before its lifetime', async function () {
      now = validUntil.getTime() - 90_500;
      const issued = await auth.issueToken((await registry.find('acme')) as ClientRecord);
      expect(issued.expiresIn).to.equal(90);
    });

    it('refuses a live token once the term has ended, with a message saying when', async function () {
      now = validUntil.getTime() - 300_000;
      const issued = await auth.issueToken(buildClient());
      expect(await auth.verifyToken(issued.accessToken)).to.deep.equal({
        clientId: 'acme',
        indexPath: 'indexes/acme.csv',
        validFrom,
        validUntil,
        monthlyBytes: 1024,
      });
      now = validUntil.getTime();
      const refused = await rejectionOf(auth.verifyToken(issued.accessToken));
      expect(refused).to.be.instanceOf(InvalidToken);
      expect((refused as Error).message).to.equal('The subscription is not active: it ended at 2026-01-31T00:00:00.000Z');
    });

    it('refuses a live token once the operator moves the end of the term before now', async function () {
      now = Date.UTC(2026, 0, 10);
      const issued = await auth.issueToken(buildClient());
      registry.add(buildClient({ validUntil: new Date(Date.UTC(2026, 0, 9)) }));
      expect(await rejectionOf(auth.verifyToken(issued.accessToken))).to.be.instanceOf(InvalidToken);
    });
  });

  describe('issueToken and verifyToken', function () {
    it('issues a token for the configured lifetime, bound to the secret hash, that verifies to the principal', async function () {
      const issued = await auth.issueToken(buildClient());
      expect(issued.expiresIn).to.equal(600);
      expect(tokens.lifetimes).to.deep.equal([600]);
      expect(await auth.verifyToken(issued.accessToken)).to.deep.equal({ clientId: 'acme', indexPath: 'indexes/acme.csv' });
    });

    it('revokes the token once the secret is rotated', async function () {
      const issued = await auth.issueToken(buildClient());
      registry.add(buildClient({ secretHash: 'hash:rotated' }));
      expect(await rejectionOf(auth.verifyToken(issued.accessToken))).to.be.instanceOf(InvalidToken);
    });

    it('revokes the token once the client is disabled or removed', async function () {
      const issued = await auth.issueToken(buildClient());
      registry.add(buildClient({ enabled: false }));
      expect(await rejectionOf(auth.verifyToken(issued.accessToken))).to.be.instanceOf(InvalidToken);
      const other = new ClientAuthentication({ registry: new InMemoryClientRegistry(), secrets: hasher, tokens, tokenLifetimeSeconds: 600, clock });
      expect(await rejectionOf(other.verifyToken(issued.accessToken))).to.be.instanceOf(InvalidToken);
    });

    it('verifies a token\'s signature once, until it expires, and still checks its client every time', async function () {
      const issued = await auth.issueToken(buildClient());
      for (let i = 0; i < 5; i += 1) await auth.verifyToken(issued.accessToken);
      expect(tokens.verifications).to.equal(1);
      registry.add(buildClient({ enabled: false }));
      expect(await rejectionOf(auth.verifyToken(issued.accessToken))).to.be.instanceOf(InvalidToken);
    });

    it('refuses a remembered token once it has expired, saying so', async function () {
      const issued = await auth.issueToken(buildClient());
      await auth.verifyToken(issued.accessToken);
      now += 600_000;
      expect(((await rejectionOf(auth.verifyToken(issued.accessToken))) as Error).message).to.match(/expired/);
    });

    it('passes on the token store\'s own refusal of a token it did not issue', async function () {
      expect(((await rejectionOf(auth.verifyToken('forged'))) as Error).message).to.match(/not issued by this gateway/);
    });
  });
});
