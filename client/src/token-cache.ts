/** A bearer token and when the gateway said it expires. */
export interface IssuedToken {
  readonly accessToken: string;
  readonly expiresInSeconds: number;
}

export interface TokenCacheOptions {
  /** Asks the token endpoint for a new token. */
  readonly issue: () => Promise<IssuedToken>;
  readonly now: () => number;
  /** Refresh this long before expiry (the gateway asks for about 60 s). */
  readonly refreshMarginSeconds: number;
}

/**
 * One token shared by every call. It is replaced `refreshMarginSeconds` before it expires, but
 * never earlier than half its lifetime: with a very short-lived token a fixed 60 s margin would ask
 * for a new token on every call and spend the gateway's issued-token budget. Concurrent callers
 * that find it stale wait for one and the same refresh (single flight).
 */
export class TokenCache {
  private current: { readonly token: string; readonly refreshAtMs: number } | undefined;
  private refreshing: Promise<string> | undefined;

  constructor(private readonly options: TokenCacheOptions) {}

  async token(): Promise<string> {
    const current = this.current;
    if (current !== undefined && this.options.now() < current.refreshAtMs) return current.token;
    this.refreshing ??= this.refresh().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /**
   * Forgets `token` after the gateway refused it (expired, revoked, rotated secret), unless another
   * caller already replaced it, so that a burst of 401s still causes one refresh.
   */
  invalidate(token: string): void {
    if (this.current?.token === token) this.current = undefined;
  }

  private async refresh(): Promise<string> {
    const issuedAt = this.options.now();
    const { accessToken, expiresInSeconds } = await this.options.issue();
    const marginMs = Math.min(this.options.refreshMarginSeconds, expiresInSeconds / 2) * 1000;
    this.current = { token: accessToken, refreshAtMs: issuedAt + expiresInSeconds * 1000 - marginMs };
    return accessToken;
  }
}
