import { posix } from 'node:path';
import type { Signer } from '../../domain/ports.js';
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

/**
 * The expiring URLs the gateway itself serves when storage cannot (the local folder store): JWTs of
 * the signer's `download-link` purpose, so every instance of a fleet accepts the links of the
 * others, and a link is never accepted as an access token, nor an access token as a link.
 */
export class SignedLinks {
  readonly #signer: Signer;

  constructor(signer: Signer) {
    this.#signer = signer;
  }

  sign(claims: SignedLinkClaims): Promise<string> {
    return this.#signer.signToken('download-link', {
      subject: claims.clientId,
      claims: { symbol: claims.symbol, path: claims.path, etag: claims.etag },
      expiresAt: claims.expiresAt,
    });
  }

  /** The link itself: `<base>/download/signed/<file name>?token=<signature>`, served by any instance. */
  async urlFor(claims: SignedLinkClaims, baseUrl: string): Promise<string> {
    return `${baseUrl}/download/signed/${encodeURIComponent(posix.basename(claims.path))}?token=${await this.sign(claims)}`;
  }

  /** The claims of a link this gateway signed and that has not expired; throws the `invalid_link` refusal. */
  async verify(token: string): Promise<SignedLinkClaims> {
    const check = await this.#signer.verifyToken('download-link', token, ['symbol', 'path', 'etag']);
    if (!check.valid) {
      const message = check.reason === 'expired' ? 'The download link has expired: ask for a new one' : 'The download link is not valid';
      throw new RequestRefused('invalid_link', message, { cause: check.cause });
    }
    const { subject, claims, expiresAt } = check.token;
    return { clientId: subject, symbol: claims.symbol, path: claims.path, etag: claims.etag, expiresAt };
  }
}
