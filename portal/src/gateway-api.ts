import type { ListAnswer, ListedItem, WindowFields } from './catalog.js';
import type { S3Api } from './commands.js';
import type { FeedAnswer } from './whats-new.js';

/**
 * The portal's calls to its gateway (same origin). The token lives in this module's memory only:
 * never in storage, never in the URL; the secret is sent once to `/oauth/token` and forgotten.
 */

/** Why signing in failed, with the sentence the form shows. */
export class SignInFailed extends Error {
  constructor(
    readonly reason: 'wrong-credentials' | 'throttled' | 'inactive' | 'unavailable',
    message: string,
  ) {
    super(message);
    this.name = 'SignInFailed';
  }
}

/** A refusal of an API call, with the gateway's own message. */
export class ApiRefused extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'ApiRefused';
  }
}

export interface Token {
  readonly accessToken: string;
  readonly expiresAt: number;
}

/** `POST /oauth/token` with the client credentials (RFC 6749 section 4.4, `client_secret_post`). */
export async function signIn(clientId: string, secret: string): Promise<Token> {
  let response: Response;
  try {
    response = await fetch('/oauth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
      cache: 'no-store',
      // The gateway answers a wrong secret 401 with a Basic challenge (RFC 6749 section 5.2); without
      // credentials the browser shows no password prompt of its own for it (Fetch, HTTP-network-or-cache fetch).
      credentials: 'omit',
    });
  } catch {
    throw new SignInFailed('unavailable', 'The gateway could not be reached. Check your connection and try again.');
  }
  if (response.ok) {
    const body = (await response.json()) as { access_token: string; expires_in?: number };
    return { accessToken: body.access_token, expiresAt: Date.now() + (body.expires_in ?? 3600) * 1000 };
  }
  const body = (await response.json().catch(() => ({}))) as { error?: string; error_description?: string; message?: string };
  if (response.status === 429) {
    const wait = Number(response.headers.get('Retry-After'));
    const after = Number.isFinite(wait) && wait > 0 ? `in ${waitText(wait)}` : 'later';
    throw new SignInFailed('throttled', `Too many sign-in attempts. Try again ${after}.`);
  }
  if (response.status === 401 || body.error === 'invalid_client') {
    throw new SignInFailed('wrong-credentials', 'The client id or secret is wrong (or this client has been disabled).');
  }
  if (body.error === 'unauthorized_client') {
    throw new SignInFailed('inactive', 'This subscription is not active: it may not sign in. Contact your data vendor.');
  }
  throw new SignInFailed('unavailable', `Signing in failed: ${body.error_description ?? body.message ?? `the gateway answered ${response.status}`}.`);
}

function waitText(seconds: number): string {
  if (seconds < 90) return `${Math.ceil(seconds)} second${Math.ceil(seconds) === 1 ? '' : 's'}`;
  return `${Math.ceil(seconds / 60)} minutes`;
}

/** A download link the portal hands to the browser's download manager. */
export interface DownloadLink {
  readonly url: string;
  readonly expiresAt: string;
  readonly size: number;
  readonly etag: string;
}

export interface FileInfo extends WindowFields {
  readonly symbol: string;
  readonly size: number;
  readonly uploaded: string;
  readonly etag: string;
  readonly httpMetadata: Readonly<Record<string, string>>;
  readonly customMetadata: Readonly<Record<string, string>>;
}

/** The contract's largest `limit` of `/list`. */
export const listPageLimit = 10_000;

/**
 * How many times the portal lists your files from the start when a listing's cursor expires
 * (`410 cursor_expired`), as the client library's `listAll` does.
 */
export const listingAttempts = 3;

/** Where a listing stands, for the progress line. */
export interface ListingProgress {
  readonly loaded: number;
  /** `/list`'s count of the files there are. */
  readonly count: number;
  /** 1, then 2 and 3 when the listing started over. */
  readonly attempt: number;
}

/** Every listed file: what the table shows. */
export interface Listing {
  readonly files: ListedItem[];
  /** The last page (is it truncated without a cursor?). */
  readonly last: ListAnswer;
}

/** `410 cursor_expired`: the index changed, or a release window opened or closed, since the listing's first page. */
export function isCursorExpired(failure: unknown): boolean {
  return failure instanceof ApiRefused && failure.status === 410 && failure.code === 'cursor_expired';
}

/**
 * Calls with the session's token. A call that the gateway answers 401 (the token expired or was
 * revoked) waits for `reauthenticate` to bring a fresh token, then is sent again: the view that
 * made the call never learns of it.
 */
export class GatewayApi {
  #token: Token | undefined;
  readonly #reauthenticate: () => Promise<Token>;
  /** The one sign-in every call refused meanwhile waits for. */
  #renewal: Promise<Token> | undefined;

  constructor(token: Token, reauthenticate: () => Promise<Token>) {
    this.#token = token;
    this.#reauthenticate = reauthenticate;
  }

  /** Forgets the token (signing out). */
  forget(): void {
    this.#token = undefined;
  }

  async #authorized(path: string, signal?: AbortSignal): Promise<Response> {
    for (;;) {
      // A token known to be past its lifetime is not sent: ask for a new one first.
      if (this.#token === undefined || this.#token.expiresAt <= Date.now()) this.#token = await this.#renew();
      const sent = this.#token.accessToken;
      const response = await fetch(path, {
        headers: { Authorization: `Bearer ${sent}` },
        cache: 'no-store',
        credentials: 'omit',
        ...(signal !== undefined && { signal }),
      });
      if (response.status !== 401) return response;
      // Only the token this call sent is forgotten: another call may already have renewed it.
      if (this.#token?.accessToken === sent) this.#token = undefined;
    }
  }

  #renew(): Promise<Token> {
    this.#renewal ??= this.#reauthenticate().finally(() => {
      this.#renewal = undefined;
    });
    return this.#renewal;
  }

  async #json<T>(path: string, signal?: AbortSignal): Promise<T> {
    const response = await this.#authorized(path, signal);
    if (!response.ok) throw await refusalOf(response);
    return (await response.json()) as T;
  }

  /**
   * Every listed file, each with its storage path, page after page while the gateway sends
   * `nextCursor`. A listing whose cursor expires (the index changed, or a release window opened or
   * closed, since its first page) starts over, up to `listingAttempts` times in all; then the last
   * `410` is thrown.
   */
  async listing(onProgress: (progress: ListingProgress) => void): Promise<Listing> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.#list((loaded, count) => onProgress({ loaded, count, attempt }));
      } catch (failure) {
        if (!isCursorExpired(failure) || attempt >= listingAttempts) throw failure;
      }
    }
  }

  async #list(onPage: (loaded: number, count: number) => void): Promise<Listing> {
    const files: ListedItem[] = [];
    let page = await this.#json<ListAnswer>(`/list?limit=${listPageLimit}`);
    files.push(...page.files);
    onPage(files.length, page.count);
    // Bounded by the catalog: each page brings files, or the loop ends.
    while (page.nextCursor !== undefined && page.files.length > 0) {
      page = await this.#json<ListAnswer>(`/list?limit=${listPageLimit}&cursor=${encodeURIComponent(page.nextCursor)}`);
      files.push(...page.files);
      onPage(files.length, page.count);
    }
    return { files, last: page };
  }

  /**
   * One page of the change feed after `cursor` (from the oldest event kept without one), held up to
   * `waitSeconds` while there is nothing new.
   */
  changes(cursor: string | undefined, waitSeconds: number, signal: AbortSignal): Promise<FeedAnswer> {
    const query = new URLSearchParams({ limit: '1000', ...(cursor !== undefined && { cursor }), ...(waitSeconds > 0 && { wait: String(waitSeconds) }) });
    return this.#json(`/changes?${query.toString()}`, signal);
  }

  info(symbol: string): Promise<FileInfo> {
    return this.#json(`/info/${encodeURIComponent(symbol)}`);
  }

  downloadLink(symbol: string): Promise<DownloadLink> {
    return this.#json(`/portal/link/${encodeURIComponent(symbol)}`);
  }

  /** `GET /account`, or `undefined` when this gateway has no account service (any answer but JSON 200). */
  async account(): Promise<Record<string, unknown> | undefined> {
    const response = await this.#authorized('/account');
    if (!response.ok || !(response.headers.get('Content-Type') ?? '').startsWith('application/json')) return undefined;
    return (await response.json()) as Record<string, unknown>;
  }
}

async function refusalOf(response: Response): Promise<ApiRefused> {
  const body = (await response.json().catch(() => ({}))) as { code?: string; message?: string };
  let message = body.message ?? `The gateway answered ${response.status}.`;
  if (response.status === 429) {
    const wait = Number(response.headers.get('Retry-After'));
    message = `Too many downloads for now${Number.isFinite(wait) && wait > 0 ? `: try again in ${waitText(wait)}` : ''}.`;
  }
  return new ApiRefused(response.status, body.code, message);
}

/** `/portal/config.json`. */
export async function portalConfig(): Promise<{ readonly s3Api: S3Api | null }> {
  try {
    const response = await fetch('/portal/config.json', { cache: 'no-store', credentials: 'omit' });
    if (response.ok) return (await response.json()) as { s3Api: S3Api | null };
  } catch {
    // Without it, the portal offers no `aws s3 cp`.
  }
  return { s3Api: null };
}
