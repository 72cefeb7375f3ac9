import { randomBytes } from 'node:crypto';
import type { ClientAuthentication } from '../../application/client-authentication.js';
import { InvalidToken, SubscriptionInactive } from '../../domain/errors.js';
import type { Principal, Signer, VerifiedToken } from '../../domain/ports.js';
import { S3Refusal } from './s3-errors.js';

/**
 * The S3 API's credentials. Nothing secret is stored anywhere: the signer derives every secret
 * access key from TOKEN_SIGNING_KEY (shared by every instance) and the access key id, so any
 * instance can check a signature with no shared store, and a copy of the registry file gives no
 * one a usable key.
 *
 * - Operator-issued keys (`DFGK...`): their ids live with their client in the registry; a key
 *   counts while its id is listed there and its client is enabled.
 * - Temporary credentials (`DFGT...`): the session token is a JWT of the signer's
 *   `s3-session-token` purpose (never accepted as a bearer token or a link) that names the client, the access key id and the fingerprint of the client's secret, and expires
 *   with the bearer token they were made from; rotating the client's secret or disabling the
 *   client ends them, as it ends that bearer token.
 */

/** Operator-issued access key ids start with this. */
export const OPERATOR_KEY_PREFIX = 'DFGK';
/** Temporary access key ids start with this. */
export const TEMPORARY_KEY_PREFIX = 'DFGT';

const ACCESS_KEY_CLAIM = 'akid';
const FINGERPRINT_CLAIM = 'sfp';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** A new access key id: the prefix and 16 random base-32 characters (80 bits), 20 characters like AWS's. */
export function newAccessKeyId(prefix: typeof OPERATOR_KEY_PREFIX | typeof TEMPORARY_KEY_PREFIX): string {
  const bytes = randomBytes(16);
  return prefix + Array.from(bytes, (byte) => BASE32[byte & 31]).join('');
}

/** The AWS `credential_process` output (version 1). */
export interface TemporaryCredentials {
  readonly Version: 1;
  readonly AccessKeyId: string;
  readonly SecretAccessKey: string;
  readonly SessionToken: string;
  /** ISO 8601. */
  readonly Expiration: string;
}

/**
 * Who signed a request, and the secret to check the signature with; or, for a client outside its
 * subscription term, the refusal to answer once the signature proves the caller holds the secret
 * (only such a caller learns when the term ended, as at the token endpoint).
 */
export type ResolvedCredentials =
  | { readonly principal: Principal; readonly secretAccessKey: string; readonly outsideTerm?: undefined }
  | { readonly outsideTerm: InvalidToken; readonly secretAccessKey: string };

export class S3Credentials {
  constructor(
    private readonly options: { readonly signer: Signer; readonly auth: ClientAuthentication },
  ) {}

  /** Temporary credentials for a caller proven by a bearer token, valid until the token expires. */
  async issueTemporary(principal: Principal, token: VerifiedToken): Promise<TemporaryCredentials> {
    const accessKeyId = newAccessKeyId(TEMPORARY_KEY_PREFIX);
    const expiresAt = Math.floor(token.expiresAt.getTime() / 1000);
    const sessionToken = await this.options.signer.signToken('s3-session-token', {
      subject: principal.clientId,
      claims: { [ACCESS_KEY_CLAIM]: accessKeyId, [FINGERPRINT_CLAIM]: token.secretFingerprint },
      expiresAt: new Date(expiresAt * 1000),
    });
    return {
      Version: 1,
      AccessKeyId: accessKeyId,
      SecretAccessKey: this.options.signer.s3SecretAccessKey(accessKeyId),
      SessionToken: sessionToken,
      Expiration: new Date(expiresAt * 1000).toISOString(),
    };
  }

  /**
   * The caller behind an access key id (and session token, for temporary credentials). Throws
   * `InvalidAccessKeyId` for a key no active client holds, `ExpiredToken` or `InvalidToken` for a
   * session token that has expired or is not the gateway's. A client outside its term (an operator
   * key's or temporary credentials') resolves to `outsideTerm`: the domain's `InvalidToken` caused by
   * `SubscriptionInactive`, which the S3 errors render as `AccessDenied` saying when the term ended.
   */
  async resolve(accessKeyId: string, sessionToken: string | undefined): Promise<ResolvedCredentials> {
    const secretAccessKey = this.options.signer.s3SecretAccessKey(accessKeyId);
    try {
      if (sessionToken !== undefined) {
        return { principal: await this.#sessionPrincipal(accessKeyId, sessionToken), secretAccessKey };
      }
      const principal = accessKeyId.startsWith(OPERATOR_KEY_PREFIX) ? await this.options.auth.principalForAccessKey(accessKeyId) : undefined;
      if (principal === undefined) {
        throw new S3Refusal('InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
      }
      return { principal, secretAccessKey };
    } catch (error) {
      if (error instanceof InvalidToken && error.cause instanceof SubscriptionInactive) return { outsideTerm: error, secretAccessKey };
      throw error;
    }
  }

  async #sessionPrincipal(accessKeyId: string, sessionToken: string): Promise<Principal> {
    const check = await this.options.signer.verifyToken('s3-session-token', sessionToken, [ACCESS_KEY_CLAIM, FINGERPRINT_CLAIM]);
    if (!check.valid) {
      if (check.reason === 'expired') throw new S3Refusal('ExpiredToken', 'The provided token has expired.');
      throw new S3Refusal('InvalidToken', 'The provided token is malformed or otherwise invalid.', { cause: check.cause });
    }
    const { subject, claims } = check.token;
    if (claims[ACCESS_KEY_CLAIM] !== accessKeyId) {
      throw new S3Refusal('InvalidToken', 'The provided token is malformed or otherwise invalid.');
    }
    try {
      return await this.options.auth.principalFor({ clientId: subject, secretFingerprint: claims[FINGERPRINT_CLAIM] });
    } catch (error) {
      // Outside the term: not a revocation; `resolve` answers it once the signature is checked.
      if (error instanceof InvalidToken && error.cause instanceof SubscriptionInactive) throw error;
      if (error instanceof InvalidToken) throw new S3Refusal('InvalidToken', 'The provided token has been revoked.', { cause: error });
      throw error;
    }
  }
}
