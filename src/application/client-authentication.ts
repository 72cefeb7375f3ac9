import { InvalidClient, InvalidToken, SubscriptionInactive } from '../domain/errors.js';
import type { ClientRecord, ClientRegistry, Clock, Principal, SecretHasher, TokenClaims, TokenStore, VerifiedToken } from '../domain/ports.js';
import { capToTerm, describeInactiveTerm, termStatus } from '../domain/subscription.js';

/** A bearer token just issued, and how long it lives. */
export interface IssuedToken {
  readonly accessToken: string;
  /** Lifetime in whole seconds (RFC 6749 section 5.1 `expires_in`). */
  readonly expiresIn: number;
}

export interface ClientAuthenticationOptions {
  readonly registry: ClientRegistry;
  readonly secrets: SecretHasher;
  readonly tokens: TokenStore;
  /** The lifetime of every token issued; its one source is the validated configuration. */
  readonly tokenLifetimeSeconds: number;
  readonly clock: Clock;
}

/**
 * How many verified tokens are remembered. A token's signature and lifetime never change, so a
 * token seen before is not verified again until it expires; whether its client is still active is
 * checked on every request.
 */
const VERIFIED_TOKENS_KEPT = 10_000;

/**
 * Who may get a token and whose token still counts: the one owner of client authentication.
 *
 * - A client authenticates with its id and secret; an unknown id costs one secret verification
 *   against a decoy hash, so response times do not reveal which ids exist.
 * - Only enabled clients are active: a disabled client gets no token, and its tokens stop working.
 * - A token is bound to the fingerprint of the client's secret hash when it was issued, so rotating
 *   the secret (or removing and re-adding the client) revokes every token issued before.
 * - Outside its subscription term a client gets no token (told when the term starts or ended, once
 *   its secret is verified), a token never lives past the term's end, and a token presented after
 *   the term (or after the operator moved its end) is refused.
 */
export class ClientAuthentication {
  readonly #verified = new Map<string, VerifiedToken>();

  constructor(private readonly options: ClientAuthenticationOptions) {}

  /** How long every token issued lives. */
  get tokenLifetimeSeconds(): number {
    return this.options.tokenLifetimeSeconds;
  }

  /**
   * The client, when the secret is its own and it is active. Throws `InvalidClient` otherwise, and
   * `SubscriptionInactive` when the secret is right but `now` is outside the client's term.
   */
  async authenticate(clientId: string, secret: string): Promise<ClientRecord> {
    const client = await this.options.registry.find(clientId);
    const hash = client?.secretHash ?? (await this.options.secrets.decoyHash());
    const matches = await this.options.secrets.verify(secret, hash);
    // One message for every reason (RFC 6749 section 5.2), so that ids cannot be probed.
    if (client === undefined || !matches || !isActive(client)) {
      throw new InvalidClient('Client authentication failed: unknown client, wrong secret or disabled client');
    }
    // Only a caller that proved the secret learns about the term.
    const status = termStatus(client, this.options.clock.now());
    if (status.kind !== 'active') throw new SubscriptionInactive(describeInactiveTerm(status));
    return client;
  }

  /** A new bearer token for an authenticated client; it expires at the end of the term if that comes first. */
  async issueToken(client: ClientRecord): Promise<IssuedToken> {
    const now = this.options.clock.now().getTime();
    const wanted = new Date(now + this.options.tokenLifetimeSeconds * 1000);
    // Whole seconds, rounded down: a token never outlives the term.
    const lifetimeSeconds = Math.max(1, Math.floor((capToTerm(wanted, client).getTime() - now) / 1000));
    const accessToken = await this.options.tokens.issue(
      { clientId: client.clientId, secretFingerprint: this.options.secrets.fingerprint(client.secretHash) },
      lifetimeSeconds,
    );
    return { accessToken, expiresIn: lifetimeSeconds };
  }

  /**
   * The caller behind a presented bearer token. Throws `InvalidToken` when the token is malformed,
   * forged or expired, or when its client is no longer active or has another secret since.
   */
  async verifyToken(token: string): Promise<Principal> {
    return (await this.verifyTokenClaims(token)).principal;
  }

  /** As `verifyToken`, with the token's claims and expiry (to derive credentials that live no longer). */
  async verifyTokenClaims(token: string): Promise<{ readonly principal: Principal; readonly claims: VerifiedToken }> {
    const claims = await this.#verifiedClaims(token);
    return { principal: await this.principalFor(claims), claims };
  }

  /**
   * The caller behind claims whose signature and lifetime an adapter has checked (a token's, or
   * credentials derived from one): throws `InvalidToken` when the client is no longer active or has
   * another secret since the claims were made.
   */
  async principalFor(claims: TokenClaims): Promise<Principal> {
    const client = await this.options.registry.find(claims.clientId);
    if (client === undefined || !isActive(client)) throw new InvalidToken('The token was revoked');
    if (claims.secretFingerprint !== this.options.secrets.fingerprint(client.secretHash)) {
      throw new InvalidToken('The token was revoked');
    }
    const status = termStatus(client, this.options.clock.now());
    if (status.kind !== 'active') {
      const message = describeInactiveTerm(status);
      throw new InvalidToken(message, { cause: new SubscriptionInactive(message) });
    }
    return principalOf(client);
  }

  /**
   * The client a gateway-signed download link was made for, as it stands now: such a link stops
   * working once its client is disabled, removed or outside its term (its expiry was capped at the
   * term's end when it was made; this also covers an end the operator moved earlier since).
   */
  async linkHolder(clientId: string): Promise<{ readonly principal: Principal } | { readonly refused: string }> {
    const client = await this.options.registry.find(clientId);
    if (client === undefined || !isActive(client)) {
      return { refused: 'The download link was revoked: its client is disabled or no longer registered' };
    }
    const status = termStatus(client, this.options.clock.now());
    if (status.kind !== 'active') return { refused: `The download link is no longer valid. ${describeInactiveTerm(status)}` };
    return { principal: principalOf(client) };
  }

  /**
   * The caller holding an operator-issued access key: `undefined` when no active client holds it
   * (never issued, revoked, or its client disabled or removed). Throws `InvalidToken` (caused by
   * `SubscriptionInactive`) when its client is outside its subscription term.
   */
  async principalForAccessKey(accessKeyId: string): Promise<Principal | undefined> {
    const client = await this.options.registry.findByAccessKey(accessKeyId);
    if (client === undefined || !isActive(client) || client.accessKeyIds?.includes(accessKeyId) !== true) return undefined;
    const status = termStatus(client, this.options.clock.now());
    if (status.kind !== 'active') {
      const message = describeInactiveTerm(status);
      throw new InvalidToken(message, { cause: new SubscriptionInactive(message) });
    }
    return principalOf(client);
  }

  /** The token's claims: remembered from an earlier verification until it expires. */
  async #verifiedClaims(token: string): Promise<VerifiedToken> {
    const now = this.options.clock.now().getTime();
    const known = this.#verified.get(token);
    if (known !== undefined && known.expiresAt.getTime() > now) return known;
    // Verified again (and fails) once expired, so that the answer says it has expired.
    this.#verified.delete(token);
    const claims = await this.options.tokens.verify(token);
    if (this.#verified.size >= VERIFIED_TOKENS_KEPT) {
      // Maps keep insertion order: the first key is the oldest.
      const oldest = this.#verified.keys().next();
      if (oldest.done !== true) this.#verified.delete(oldest.value);
    }
    this.#verified.set(token, claims);
    return claims;
  }
}

/** Who a registered client is to the rest of the domain: its index, term and quota. */
export function principalOf(client: ClientRecord): Principal {
  return {
    clientId: client.clientId,
    indexPath: client.indexPath,
    ...(client.validFrom !== undefined && { validFrom: client.validFrom }),
    ...(client.validUntil !== undefined && { validUntil: client.validUntil }),
    ...(client.monthlyBytes !== undefined && { monthlyBytes: client.monthlyBytes }),
  };
}

/** Whether a registered client may obtain and use tokens. */
export function isActive(client: ClientRecord): boolean {
  return client.enabled;
}
