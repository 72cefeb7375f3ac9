import { randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { InvalidToken } from '../../domain/errors.js';
import type { Clock, TokenClaims, TokenStore, VerifiedToken } from '../../domain/ports.js';

export interface JwtTokenStoreOptions {
  /** HMAC key shared by every gateway instance, at least 32 bytes. */
  readonly signingKey: Uint8Array;
  readonly clock: Clock;
}

const issuer = 'data-file-gateway';
const audience = 'data-file-gateway';
/** RFC 9068 section 2.1: the media type of JWT access tokens. */
const tokenType = 'at+jwt';
const algorithm = 'HS256';
/** The claim carrying the fingerprint of the client's secret hash. */
const fingerprintClaim = 'sfp';

/**
 * Self-contained bearer tokens: HS256-signed JWTs that any instance holding the same key can verify.
 * This adapter only signs and checks signatures, lifetimes and the claims' shape; whether the
 * token's client is still active is `ClientAuthentication`'s decision.
 */
export class JwtTokenStore implements TokenStore {
  constructor(private readonly options: JwtTokenStoreOptions) {
    if (options.signingKey.byteLength < 32) throw new Error('The token signing key must be at least 32 bytes');
  }

  async issue(claims: TokenClaims, lifetimeSeconds: number): Promise<string> {
    const issuedAt = Math.floor(this.options.clock.now().getTime() / 1000);
    return new SignJWT({ [fingerprintClaim]: claims.secretFingerprint })
      .setProtectedHeader({ alg: algorithm, typ: tokenType })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject(claims.clientId)
      .setJti(randomUUID())
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + lifetimeSeconds)
      .sign(this.options.signingKey);
  }

  async verify(token: string): Promise<VerifiedToken> {
    try {
      const { payload } = await jwtVerify(token, this.options.signingKey, {
        algorithms: [algorithm],
        typ: tokenType,
        issuer,
        audience,
        requiredClaims: ['sub', 'exp', 'iat', fingerprintClaim],
        currentDate: this.options.clock.now(),
        clockTolerance: 0,
      });
      const fingerprint = payload[fingerprintClaim];
      if (typeof payload.sub !== 'string' || typeof fingerprint !== 'string' || typeof payload.exp !== 'number') {
        throw new InvalidToken('The token is malformed or not issued by this gateway');
      }
      return { clientId: payload.sub, secretFingerprint: fingerprint, expiresAt: new Date(payload.exp * 1000) };
    } catch (error) {
      if (error instanceof InvalidToken) throw error;
      throw new InvalidToken(describeJoseFailure(error), { cause: error });
    }
  }
}

function describeJoseFailure(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'The token has expired';
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'The token signature is invalid';
  return 'The token is malformed or not issued by this gateway';
}
