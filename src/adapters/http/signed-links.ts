import { createHmac } from 'node:crypto';
import { posix } from 'node:path';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../../domain/ports.js';
import { RequestRefused } from './error-responses.js';

/** What a gateway-signed download link grants: one client, one file, one version, until it expires. */
export interface SignedLinkClaims {
  readonly clientId: string;
  /** The catalog symbol the link was made for (named in the audit record of its downloads). */
  readonly symbol: string;
  /** The storage path of the file. */
  readonly path: string;
  /** The version the link is for: a download of any other version is refused with 412. */
  readonly etag: string;
  readonly expiresAt: Date;
}

const algorithm = 'HS256';
/** Not an access token: a link is never accepted as a bearer token, nor a bearer token as a link. */
const linkType = 'dl+jwt';
const audience = 'data-file-gateway/download-links';
const keyLabel = 'data-file-gateway download links v1';

/**
 * The expiring URLs the gateway itself serves when storage cannot (the local folder store): HS256
 * JWTs under a key derived from TOKEN_SIGNING_KEY, so every instance of a fleet accepts the links of
 * the others, and a link's key is never the access tokens' key.
 */
export class SignedLinks {
  readonly #key: Uint8Array;
  readonly #clock: Clock;

  constructor(tokenSigningKey: Uint8Array, clock: Clock) {
    this.#key = new Uint8Array(createHmac('sha256', tokenSigningKey).update(keyLabel).digest());
    this.#clock = clock;
  }

  sign(claims: SignedLinkClaims): Promise<string> {
    return new SignJWT({ symbol: claims.symbol, path: claims.path, etag: claims.etag })
      .setProtectedHeader({ alg: algorithm, typ: linkType })
      .setAudience(audience)
      .setSubject(claims.clientId)
      .setIssuedAt(Math.floor(this.#clock.now().getTime() / 1000))
      .setExpirationTime(Math.floor(claims.expiresAt.getTime() / 1000))
      .sign(this.#key);
  }

  /** The link itself: `<base>/download/signed/<file name>?token=<signature>`, served by any instance. */
  async urlFor(claims: SignedLinkClaims, baseUrl: string): Promise<string> {
    return `${baseUrl}/download/signed/${encodeURIComponent(posix.basename(claims.path))}?token=${await this.sign(claims)}`;
  }

  /** The claims of a link this gateway signed and that has not expired; throws the `invalid_link` refusal. */
  async verify(token: string): Promise<SignedLinkClaims> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.#key, {
        algorithms: [algorithm],
        typ: linkType,
        audience,
        requiredClaims: ['sub', 'exp', 'symbol', 'path', 'etag'],
        currentDate: this.#clock.now(),
        clockTolerance: 0,
      }));
    } catch (error) {
      const message = error instanceof joseErrors.JWTExpired ? 'The download link has expired: ask for a new one' : 'The download link is not valid';
      throw new RequestRefused('invalid_link', message, { cause: error });
    }
    const { sub, symbol, path, etag, exp } = payload;
    if (typeof sub !== 'string' || typeof symbol !== 'string' || typeof path !== 'string' || typeof etag !== 'string' || typeof exp !== 'number') {
      throw new RequestRefused('invalid_link', 'The download link is not valid');
    }
    return { clientId: sub, symbol, path, etag, expiresAt: new Date(exp * 1000) };
  }
}
