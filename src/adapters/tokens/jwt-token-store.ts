import { InvalidToken } from '../../domain/errors.js';
import type { Clock, Signer, TokenCheck, TokenClaims, TokenStore, VerifiedToken } from '../../domain/ports.js';

export interface JwtTokenStoreOptions {
  /** Signs and checks the tokens, under the access tokens' own key. */
  readonly signer: Signer;
  readonly clock: Clock;
}

/** The claim carrying the fingerprint of the client's secret hash. */
const fingerprintClaim = 'sfp';

/**
 * Self-contained bearer tokens: JWTs of the signer's `access-token` purpose, which any instance
 * holding the same TOKEN_SIGNING_KEY can verify. This adapter only turns claims into tokens and the
 * signer's verdicts into `InvalidToken`; whether the token's client is still active is
 * `ClientAuthentication`'s decision.
 */
export class JwtTokenStore implements TokenStore {
  constructor(private readonly options: JwtTokenStoreOptions) {}

  async issue(claims: TokenClaims, lifetimeSeconds: number): Promise<string> {
    const issuedAt = Math.floor(this.options.clock.now().getTime() / 1000);
    return this.options.signer.signToken('access-token', {
      subject: claims.clientId,
      claims: { [fingerprintClaim]: claims.secretFingerprint },
      expiresAt: new Date((issuedAt + lifetimeSeconds) * 1000),
    });
  }

  async verify(token: string): Promise<VerifiedToken> {
    const check = await this.options.signer.verifyToken('access-token', token, [fingerprintClaim]);
    if (!check.valid) throw new InvalidToken(describeFailure(check.reason), { cause: check.cause });
    return { clientId: check.token.subject, secretFingerprint: check.token.claims[fingerprintClaim], expiresAt: check.token.expiresAt };
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
