import { randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { InvalidToken } from '../../domain/errors.js';
import type { ClientRecord, ClientRegistry, Clock, IssuedToken, Principal, TokenStore } from '../../domain/ports.js';
import { secretFingerprint } from '../clients/secret-hash.js';

export interface JwtTokenStoreOptions {
  /** HMAC key shared by every gateway instance, at least 32 bytes. */
  readonly signingKey: Uint8Array;
  readonly ttlSeconds: number;
  readonly registry: ClientRegistry;
  readonly clock: Clock;
}

const issuer = 'data-file-gateway';
const audience = 'data-file-gateway';
/** RFC 9068 section 2.1: the media type of JWT access tokens. */
const tokenType = 'at+jwt';
const algorithm = 'HS256';

/**
 * Self-contained bearer tokens: HS256-signed JWTs that any instance holding the same key can verify.
 * Each token carries a fingerprint of its client's secret hash, and verification checks the registry,
 * so disabling a client, removing it or rotating its secret revokes its tokens at once.
 */
export class JwtTokenStore implements TokenStore {
  constructor(private readonly options: JwtTokenStoreOptions) {
    if (options.signingKey.byteLength < 32) throw new Error('The token signing key must be at least 32 bytes');
  }

  async issue(client: ClientRecord): Promise<IssuedToken> {
    const issuedAt = Math.floor(this.options.clock.now().getTime() / 1000);
    const accessToken = await new SignJWT({ sfp: secretFingerprint(client.secretHash) })
      .setProtectedHeader({ alg: algorithm, typ: tokenType })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject(client.clientId)
      .setJti(randomUUID())
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + this.options.ttlSeconds)
      .sign(this.options.signingKey);
    return { accessToken, expiresIn: this.options.ttlSeconds };
  }

  async verify(token: string): Promise<Principal> {
    let clientId: string;
    let fingerprint: unknown;
    try {
      const { payload } = await jwtVerify(token, this.options.signingKey, {
        algorithms: [algorithm],
        typ: tokenType,
        issuer,
        audience,
        requiredClaims: ['sub', 'exp', 'iat'],
        currentDate: this.options.clock.now(),
        clockTolerance: 0,
      });
      clientId = payload.sub ?? '';
      fingerprint = payload['sfp'];
    } catch (error) {
      throw new InvalidToken(describeJoseFailure(error), { cause: error });
    }
    const client = await this.options.registry.find(clientId);
    if (client === undefined || !client.enabled) throw new InvalidToken('The token was revoked');
    if (fingerprint !== secretFingerprint(client.secretHash)) throw new InvalidToken('The token was revoked');
    return { clientId: client.clientId, indexPath: client.indexPath };
  }
}

function describeJoseFailure(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'The token has expired';
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'The token signature is invalid';
  return 'The token is malformed or not issued by this gateway';
}
