import { Readable, Transform } from 'node:stream';
import createOpenApiClient, { type Client } from 'openapi-fetch';
import { accountShape, catalogShape, changeFeedShape, fileCountShape, fileInfoShape, fileListShape, tokenShape, type Shape } from './answer-shape.js';
import type {
  Account,
  CallOptions,
  Catalog,
  ChangeEvent,
  ChangesOptions,
  ChangeStream,
  ContentRange,
  DownloadOptions,
  DownloadResult,
  FileCount,
  FileInfo,
  FileList,
  ListedFile,
  ListSnapshot,
  ListOptions,
  S3Credentials,
} from './call-types.js';
import { GatewayClientError } from './errors.js';
import type { paths } from './generated/api-types.js';
import { createResilientFetch, type FetchFunction, type RetryEvent } from './resilient-fetch.js';
import { defaultRetryOptions, type RetryOptions } from './retry-policy.js';
import { syncCatalog, type SyncOptions, type SyncReport } from './sync/sync-catalog.js';
import { watchChanges, type WatchOptions } from './sync/watch-changes.js';
import { TokenCache } from './token-cache.js';

export interface ClientOptions {
  /** The gateway, e.g. `https://files.example.com` (no trailing path needed). */
  readonly baseUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Retry, deadline and idle-timeout settings; each defaults to `defaultRetryOptions`. */
  readonly retry?: Partial<RetryOptions>;
  /** Refresh the token this long before it expires (default 60 s, at most half its lifetime). */
  readonly refreshMarginSeconds?: number;
  /** Told before every retry wait: how 429/503/5xx/resets are being handled. */
  readonly onRetry?: (event: RetryEvent) => void;
  /** The transport (Node's global `fetch` by default); tests and proxies inject their own. */
  readonly fetch?: FetchFunction;
  /** The clock the token cache reads (milliseconds since the epoch). */
  readonly now?: () => number;
}

/** How many times `listAll` starts over when the index changes under it (`410 cursor_expired`). */
const listAllAttempts = 3;
/** The gateway's longest `wait` of `/changes`. */
const maxChangesWaitSeconds = 60;
/** Seconds a long poll leaves before the attempt timeout, so the gateway's empty answer arrives before it. */
const changesWaitMarginSeconds = 5;

export interface GatewayClient {
  catalog(options?: CallOptions): Promise<Catalog>;
  list(options?: ListOptions): Promise<FileList>;
  /**
   * Every listed file, following `nextCursor` page by page (no 10,000 cap); starts over when the
   * index changed during the listing (`cursor_expired`), up to 3 times.
   */
  listAll(options?: Omit<ListOptions, 'cursor'>): Promise<ListedFile[]>;
  /**
   * As `listAll`, and the last page's `changesCursor` (absent from a gateway without a change
   * feed): a position the whole listing is known to include, whichever instance answered each
   * page. Follow `changes()` from it to miss no change the listing does not show.
   */
  listSnapshot(options?: Omit<ListOptions, 'cursor'>): Promise<ListSnapshot>;
  count(options?: CallOptions): Promise<FileCount>;
  /** The caller's subscription term and monthly byte quota (bytes used this month, remaining, reset time). */
  account(options?: CallOptions): Promise<Account>;
  /**
   * The caller's change feed as an async iterator of events, following `nextCursor`: until caught
   * up, or (with `wait`) for as long as the loop runs. Its `cursor` resumes it later.
   */
  changes(options?: ChangesOptions): ChangeStream;
  info(symbol: string, options?: CallOptions): Promise<FileInfo>;
  download(symbol: string, options?: DownloadOptions): Promise<DownloadResult>;
  /**
   * Temporary credentials for the gateway's S3-compatible API (when it runs one), in the AWS
   * `credential_process` format; valid until the bearer token they come from expires.
   */
  s3Credentials(options?: CallOptions): Promise<S3Credentials>;
  /** Mirrors the caller's catalog into `options.dir` (see `SyncOptions`). */
  sync(options: SyncOptions): Promise<SyncReport>;
  /** Mirrors, then follows the change feed into `options.dir` until `options.signal` aborts (see `WatchOptions`). */
  watch(options: WatchOptions): Promise<void>;
  /** Also tell `listener` before every retry wait (a sync uses it to slow down on 429); returns the unsubscribe. */
  onRetry(listener: (event: RetryEvent) => void): () => void;
  /** The underlying openapi-fetch client, with tokens, retries and deadlines, for routes not wrapped here. */
  readonly api: Client<paths>;
  readonly retry: RetryOptions;
}

/**
 * A client of the gateway: one cached token (refreshed before expiry, and once more on a 401), every
 * call retried by `RetryOptions`, every answer typed by the types generated from `openapi.yaml`.
 */
export function createClient(options: ClientOptions): GatewayClient {
  const retry: RetryOptions = { ...defaultRetryOptions, ...options.retry };
  const now = options.now ?? Date.now;
  const transport = options.fetch ?? ((request: Request) => fetch(request));
  const retryListeners = new Set<(event: RetryEvent) => void>();
  if (options.onRetry !== undefined) retryListeners.add(options.onRetry);
  const resilient = createResilientFetch({
    fetch: transport,
    retry,
    now,
    onRetry: (event) => {
      for (const listener of retryListeners) listener(event);
    },
  });
  const baseUrl = options.baseUrl.replace(/\/+$/, '');

  const tokenApi = createOpenApiClient<paths>({ baseUrl, fetch: resilient });
  const tokens = new TokenCache({
    now,
    refreshMarginSeconds: options.refreshMarginSeconds ?? 60,
    issue: async () => {
      // RFC 6749 section 2.3.1: HTTP Basic over the form-encoded id and secret (the method openapi.yaml prefers).
      const basic = Buffer.from(`${formEncode(options.clientId)}:${formEncode(options.clientSecret)}`).toString('base64');
      const data = await answerOf('token request', tokenShape, () =>
        tokenApi.POST('/oauth/token', {
          body: { grant_type: 'client_credentials' },
          bodySerializer: (body) => new URLSearchParams(body as Record<string, string>).toString(),
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${basic}` },
        }),
      (response) => (response.status === 400 || response.status === 401 ? 'auth_failed' : 'http_error'));
      return { accessToken: data.access_token, expiresInSeconds: data.expires_in };
    },
  });

  const authorized: FetchFunction = async (request) => {
    const send = async (token: string): Promise<Response> => {
      const headers = new Headers(request.headers);
      headers.set('Authorization', `Bearer ${token}`);
      return resilient(new Request(request.clone(), { headers }));
    };
    const token = await tokens.token();
    const response = await send(token);
    if (response.status !== 401) return response;
    // Expired early, revoked or rotated: one fresh token, one more try (RFC 6750 section 3.1).
    await response.body?.cancel().catch(() => undefined);
    tokens.invalidate(token);
    return send(await tokens.token());
  };
  const api = createOpenApiClient<paths>({ baseUrl, fetch: authorized });

  const client: GatewayClient = {
    api,
    retry,
    onRetry(listener) {
      const own = (event: RetryEvent): void => listener(event);
      retryListeners.add(own);
      return () => retryListeners.delete(own);
    },
    catalog: (call = {}) => answerOf('catalog', catalogShape, () => api.GET('/catalog', withSignal(call))),
    list(call = {}) {
      const modifiedSince = call.modifiedSince instanceof Date ? call.modifiedSince.toISOString() : call.modifiedSince;
      const query = {
        ...(call.limit !== undefined && { limit: call.limit }),
        ...(modifiedSince !== undefined && call.cursor === undefined && { modifiedSince }),
        ...(call.cursor !== undefined && { cursor: call.cursor }),
      };
      return answerOf('list', fileListShape, () => api.GET('/list', { ...withSignal(call), params: { query } }));
    },
    async listAll(call = {}) {
      return (await client.listSnapshot(call)).files;
    },
    async listSnapshot(call = {}) {
      for (let attempt = 1; ; attempt += 1) {
        const files: ListedFile[] = [];
        try {
          let cursor: string | undefined;
          let changesCursor: string | undefined;
          do {
            const page = await client.list({ ...call, limit: call.limit ?? 10_000, cursor });
            files.push(...page.files);
            cursor = page.nextCursor;
            // Each page's covers it and the pages before it: the last one's covers the listing.
            changesCursor = page.changesCursor;
          } while (cursor !== undefined);
          return { files, ...(changesCursor !== undefined && { changesCursor }) };
        } catch (error) {
          if (!(error instanceof GatewayClientError && error.serverCode === 'cursor_expired') || attempt >= listAllAttempts) throw error;
        }
      }
    },
    count: (call = {}) => answerOf('count', fileCountShape, () => api.GET('/count', withSignal(call))),
    account: (call = {}) => answerOf('account', accountShape, () => api.GET('/account', withSignal(call))),
    changes(call = {}) {
      const waitSeconds = Math.max(0, Math.min(call.wait ?? 0, maxChangesWaitSeconds, Math.floor(retry.attemptTimeoutMs / 1000) - changesWaitMarginSeconds));
      let cursor = call.cursor;
      async function* follow(): AsyncGenerator<ChangeEvent> {
        for (;;) {
          const query = {
            ...(cursor !== undefined && { cursor }),
            ...(call.limit !== undefined && { limit: call.limit }),
            ...(waitSeconds > 0 && { wait: Math.floor(waitSeconds) }),
          };
          const page = await answerOf('changes', changeFeedShape, () => api.GET('/changes', { ...withSignal(call), params: { query } }));
          for (const event of page.events) yield event;
          // Only once every event of the page was taken: a loop that breaks early sees them again (at least once).
          cursor = page.nextCursor;
          if (waitSeconds === 0 && !page.hasMore) return;
          if (call.signal?.aborted === true) return;
        }
      }
      return {
        get cursor() {
          return cursor;
        },
        [Symbol.asyncIterator]: () => follow(),
      };
    },
    info: (symbol, call = {}) => answerOf(`info ${symbol}`, fileInfoShape, () => api.GET('/info/{symbol}', { ...withSignal(call), params: { path: { symbol } } })),
    async download(symbol, call = {}) {
      const header = {
        ...(call.range !== undefined && { Range: `bytes=${call.range.start}-${call.range.end ?? ''}` }),
        ...(call.ifRange !== undefined && { 'If-Range': call.ifRange }),
        ...(call.ifNoneMatch !== undefined && { 'If-None-Match': call.ifNoneMatch }),
      };
      const { data, error, response } = await api.GET('/download/{symbol}', {
        ...withSignal(call),
        params: { path: { symbol }, header },
        parseAs: 'stream',
      });
      if (response.status !== 200 && response.status !== 206 && response.status !== 304) {
        throw errorOf(response, error, 'http_error', `download ${symbol}`);
      }
      return downloadResultOf(response, data ?? null, retry.idleTimeoutMs, call.signal);
    },
    async s3Credentials(call = {}) {
      const { data, error, response } = await api.POST('/oauth/s3-credentials', withSignal(call));
      if (data === undefined) throw errorOf(response, error, 'http_error', 's3 credentials');
      return data;
    },
    sync: (syncOptions) => syncCatalog(client, syncOptions),
    watch: (watchOptions) => watchChanges(client, watchOptions),
  };
  return client;
}

const formEncode = (value: string): string => encodeURIComponent(value);

const withSignal = (call: CallOptions): { signal?: AbortSignal } => (call.signal === undefined ? {} : { signal: call.signal });

/**
 * The JSON answer of `request`, checked against `shape`; an error status becomes `errorOf`'s error,
 * an answer that is not JSON, empty or of the wrong shape a `protocol_error` saying so.
 */
async function answerOf<T>(
  what: string,
  shape: Shape,
  request: () => Promise<{ data?: T; error?: unknown; response: Response }>,
  codeOf: (response: Response) => 'http_error' | 'auth_failed' = () => 'http_error',
): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await request();
  } catch (error) {
    if (error instanceof SyntaxError) throw new GatewayClientError('protocol_error', `${what}: malformed answer from the gateway: not JSON (${error.message})`, { cause: error });
    throw error;
  }
  const { data, error, response } = result;
  if (!response.ok) throw errorOf(response, error, codeOf(response), what);
  const problem = data === undefined ? 'the answer is empty' : shape(data, '');
  if (problem !== undefined) throw new GatewayClientError('protocol_error', `${what}: malformed answer from the gateway: ${problem}`, { status: response.status });
  return data as T;
}

function errorOf(response: Response, body: unknown, code: 'http_error' | 'auth_failed', what: string): GatewayClientError {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const serverCode = typeof fields['code'] === 'string' ? fields['code'] : typeof fields['error'] === 'string' ? fields['error'] : undefined;
  const detail = typeof fields['message'] === 'string' ? fields['message'] : typeof fields['error_description'] === 'string' ? fields['error_description'] : response.statusText;
  // An API call still refused after a fresh token means the credentials themselves no longer work.
  const effective = response.status === 401 ? 'auth_failed' : code;
  return new GatewayClientError(effective, `${what}: ${response.status}${serverCode === undefined ? '' : ` ${serverCode}`}: ${detail}`, {
    status: response.status,
    ...(serverCode !== undefined && { serverCode }),
  });
}

const CONTENT_RANGE = /^bytes (\d{1,15})-(\d{1,15})\/(\d{1,15})$/;

export function parseContentRange(value: string | null): ContentRange | undefined {
  const match = value === null ? null : CONTENT_RANGE.exec(value.trim());
  if (match === null) return undefined;
  return { start: Number(match[1]), end: Number(match[2]), size: Number(match[3]) };
}

function downloadResultOf(response: Response, stream: ReadableStream<Uint8Array> | null, idleTimeoutMs: number, signal: AbortSignal | undefined): DownloadResult {
  const status = response.status as 200 | 206 | 304;
  const lengthHeader = response.headers.get('content-length');
  const contentLength = lengthHeader === null || !/^\d{1,15}$/.test(lengthHeader) ? undefined : Number(lengthHeader);
  const contentRange = status === 206 ? parseContentRange(response.headers.get('content-range')) : undefined;
  const size = status === 200 ? contentLength : contentRange?.size;
  const body = stream === null || status === 304 ? Readable.from([]) : withIdleTimeout(Readable.fromWeb(stream as import('node:stream/web').ReadableStream<Uint8Array>), idleTimeoutMs);
  if (signal !== undefined) stopOnAbort(body, signal);
  return {
    status,
    etag: response.headers.get('etag') ?? undefined,
    lastModified: response.headers.get('last-modified') ?? undefined,
    size,
    contentLength,
    contentRange,
    headers: response.headers,
    body,
  };
}

/**
 * Destroys `body` (and so cancels the connection under it) when `signal` aborts. The signal given
 * to fetch is not enough: Node's fetch follows it from each `new Request(..., { signal })` through a
 * weak reference, so once the garbage collector has taken the intermediate request, an abort no
 * longer reaches a body that is still arriving (a download went on for gigabytes after Ctrl-C).
 * This listener sits on the caller's own signal and holds the body strongly until it closes.
 */
function stopOnAbort(body: Readable, signal: AbortSignal): void {
  const abort = (): void => {
    body.destroy(new GatewayClientError('aborted', 'download aborted', { cause: signal.reason }));
  };
  if (signal.aborted) {
    abort();
    return;
  }
  signal.addEventListener('abort', abort, { once: true });
  body.once('close', () => signal.removeEventListener('abort', abort));
}

/**
 * `body` passed through a transform that fails with `idle_timeout` (and so cancels the transfer)
 * when no byte arrives for `idleTimeoutMs`: a stalled connection must not hang a sync forever.
 */
function withIdleTimeout(body: Readable, idleTimeoutMs: number): Readable {
  let timer: NodeJS.Timeout | undefined;
  const watched = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      arm();
      callback(null, chunk);
    },
    flush(callback) {
      clearTimeout(timer);
      callback();
    },
  });
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => watched.destroy(new GatewayClientError('idle_timeout', `no byte received for ${idleTimeoutMs} ms`)), idleTimeoutMs);
  };
  arm();
  // The connection can break before the caller starts reading (it may open a file first): the
  // error must then wait in the stream's errored state for pipeline() or for-await to report,
  // not crash the process as an 'error' event nobody listens to yet.
  watched.on('error', () => undefined);
  watched.once('close', () => {
    clearTimeout(timer);
    body.destroy();
  });
  body.on('error', (error) => watched.destroy(error));
  body.pipe(watched);
  return watched;
}
