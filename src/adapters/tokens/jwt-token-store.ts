import { LRUCache } from 'lru-cache';
import { InvalidToken } from '../../domain/errors.js';
import type { Clock, Signer, TokenCheck, TokenClaims, TokenStore, VerifiedToken } from '../../domain/ports.js';

export interface JwtTokenStoreOptions {
  /** Signs and checks the tokens, under the access tokens' own key. */
  readonly signer: Signer;
  readonly clock: Clock;
  /** Bytes of verified tokens kept, so a token is checked once, not on every request (4 MiB when absent). */
  readonly verifiedBytes?: number;
}

/** What a kept verified token costs besides its characters: the entry, the claims object and its strings. */
const verifiedEntryBytes = 256;

/** The claim carrying the fingerprint of the client's secret hash. */
const fingerprintClaim = 'sfp';

/**
 * Self-contained bearer tokens: JWTs of the signer's `access-token` purpose, which any instance
 * holding the same TOKEN_SIGNING_KEY can verify. This adapter only turns claims into tokens and the
 * signer's verdicts into `InvalidToken`; whether the token's client is still active is
 * `ClientAuthentication`'s decision (on every request, from the registry).
 *
 * A token whose signature was verified is kept (a bounded LRU of `verifiedBytes`, only tokens this
 * gateway signed, so nothing a client makes up takes a place) and trusted until it expires: its
 * expiry is checked on every use, its signature once. The HMAC check through WebCrypto cost some
 * 42 µs of CPU a request; a lookup costs well under one.
 */
export class JwtTokenStore implements TokenStore {
  readonly #verified: LRUCache<string, VerifiedToken>;

  constructor(private readonly options: JwtTokenStoreOptions) {
    this.#verified = new LRUCache<string, VerifiedToken>({
      maxSize: options.verifiedBytes ?? 4 * 1024 * 1024,
      sizeCalculation: (_verified, token) => verifiedEntryBytes + 2 * token.length,
    });
  }

  async issue(claims: TokenClaims, lifetimeSeconds: number): Promise<string> {
    const issuedAt = Math.floor(this.options.clock.now().getTime() / 1000);
    return this.options.signer.signToken('access-token', {
      subject: claims.clientId,
      claims: { [fingerprintClaim]: claims.secretFingerprint },
      expiresAt: new Date((issuedAt + lifetimeSeconds) * 1000),
    });
  }

  async verify(token: string): Promise<VerifiedToken> {
    const kept = this.#verified.get(token);
    if (kept !== undefined) {
      if (kept.expiresAt.getTime() > this.options.clock.now().getTime()) return kept;
      this.#verified.delete(token);
    }
    const check = await this.options.signer.verifyToken('access-token', token, [fingerprintClaim]);
    if (!check.valid) throw new InvalidToken(describeFailure(check.reason), { cause: check.cause });
    const verified = { clientId: check.token.subject, secretFingerprint: check.token.claims[fingerprintClaim], expiresAt: check.token.expiresAt };
    this.#verified.set(token, verified);
    return verified;
  }
}

function describeFailure(reason: Extract<TokenCheck, { valid: false }>['reason']): string {
  switch (reason) {
    case 'expired':
      return 'The token has expired';
    case 'bad-signature':
      return 'The token signature is invalid';
    case 'malformed':
      return 'The token is malformed or not issued by this gateway';
  }
}
