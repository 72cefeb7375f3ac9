import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/** Where the files are served from. */
export type StorageConfig =
  | { readonly kind: 'local'; readonly dataDir: string; readonly bundledSample: boolean }
  | { readonly kind: 'azure-connection-string'; readonly connectionString: string; readonly container: string }
  | { readonly kind: 'azure-managed-identity'; readonly accountUrl: string; readonly container: string };

export interface GatewayConfig {
  readonly port: number;
  readonly storage: StorageConfig;
  /** `undefined` only on the embedded default, which registers a demo client instead. */
  readonly clientsFile: string | undefined;
  /** How long a look at the registry file stands before it is stat'ed again. */
  readonly clientsFileRecheckSeconds: number;
  /** The HMAC key of bearer tokens: TOKEN_SIGNING_KEY, or 48 random bytes when it is unset. */
  readonly tokenSigningKey: Uint8Array;
  /** True when the key is random: tokens then die with the process and other instances refuse them. */
  readonly tokenSigningKeyIsEphemeral: boolean;
  readonly tokenTtlSeconds: number;
  readonly indexRefreshSeconds: number;
  /** How long `/list` and `/count` answers are reused per client before storage is asked again. */
  readonly listCacheSeconds: number;
  /** Memory for parsed catalogs, which of their files exist and small catalogs' serialized rows, in bytes (CATALOG_CACHE_MB); least recently used out first. */
  readonly catalogCacheBytes: number;
  /** The largest index read, in bytes (INDEX_MAX_MB); a bigger one is refused as malformed. */
  readonly indexMaxBytes: number;
  /** How long Azure Storage may take to start answering a call, the SDK's retries and their back-off included. */
  readonly storageTimeoutSeconds: number;
  readonly downloadRateLimit: number;
  /** Authenticated requests per client within the request window, whichever API (REQUEST_RATE_LIMIT). */
  readonly requestRateLimit: number;
  readonly requestRateWindowSeconds: number;
  readonly downloadRateWindowSeconds: number;
  /** Direct download links (`/link/<symbol>`, `?redirect=true`): storage serves the bytes. */
  readonly downloadLinks: boolean;
  readonly downloadLinkTtlSeconds: number;
  /** The subscriber portal at `/portal` (PORTAL=on, the default); no `/portal` route at all when off. */
  readonly portal: boolean;
  /** Wrong secrets per client id from one address per window. */
  readonly tokenFailureLimit: number;
  /** Wrong secrets per client id from all addresses per window, past which only addresses without failures may try. */
  readonly tokenFailureClientLimit: number;
  readonly tokenFailureWindowSeconds: number;
  /** Tokens issued per client per window. */
  readonly tokenIssueLimit: number;
  readonly tokenIssueWindowSeconds: number;
  /** Secret verifications (scrypt) running at once, each on a thread of its own. */
  readonly secretHashConcurrency: number;
  /** How long a download may make no progress (a reader that stopped, storage that stopped sending). */
  readonly downloadIdleTimeoutSeconds: number;
  /** How long a client may take to send a request's headers, and the whole request. */
  readonly headersTimeoutSeconds: number;
  readonly requestTimeoutSeconds: number;
  /** Connections open at once; more are refused by the server. */
  readonly maxConnections: number;
  readonly trustProxy: boolean | number | string;
  /**
   * The gateway's public origin (`https://host[:port]`, no trailing slash), the issuer of the
   * discovery documents; `undefined`: derived from each request's scheme and host.
   */
  readonly publicBaseUrl: string | undefined;
  readonly logLevel: string;
  /** Shared rate-limit counts for every instance; `undefined`: each instance counts in its memory. */
  readonly redis: RedisConfig | undefined;
  /** What a rate limit does when its store (Redis) fails: let the request through, or refuse it with 503. */
  readonly rateLimitOnStoreError: 'allow' | 'deny';
  /**
   * The folder, shared by every instance, of the journal that monthly quota counts in Redis are
   * rebuilt from when Redis loses them: QUOTA_JOURNAL_DIR, or `quota-journal/` beside CLIENTS_FILE;
   * `undefined` without either (the embedded default), or without Redis.
   */
  readonly quotaJournalDir: string | undefined;
  /** How long a readiness probe result is reused, so a health checker cannot overload storage. */
  readonly readyCacheSeconds: number;
  /** How long requests in flight may finish after SIGTERM or SIGINT. */
  readonly shutdownGraceSeconds: number;
  /** Where audit records are also appended (JSON lines), besides stdout. */
  readonly auditLogFile: string | undefined;
  /** The bearer token that `GET /metrics` requires; metrics are off when `undefined`. */
  readonly metricsToken: string | undefined;
  /** Azure Monitor (Application Insights) connection string; telemetry export is off when `undefined`. */
  readonly applicationInsightsConnectionString: string | undefined;
  /** The read-only S3-compatible API (S3_API=on), and the one bucket it shows (S3_BUCKET); `undefined` when off. */
  readonly s3: { readonly bucket: string } | undefined;
  /** Webhook delivery: the delay before each retry (WEBHOOK_RETRY_SECONDS), and whether http and private addresses may be called. */
  readonly webhooks: { readonly retrySeconds: readonly number[]; readonly allowPrivate: boolean };
  /** The change scanner and where its log, checksums, state and lease live. */
  readonly changes: ChangesConfig;
}

/**
 * Where the change log and its companions live: Table Storage (and the `dfg-system` container)
 * of the storage account on Azure, a folder beside CLIENTS_FILE locally, this process's memory for
 * the embedded default or when no table endpoint can be told from the connection string.
 */
export type ChangeStoreConfig =
  | { readonly kind: 'table-connection-string'; readonly connectionString: string }
  | { readonly kind: 'table-url'; readonly tableUrl: string }
  | { readonly kind: 'folder'; readonly dir: string }
  | { readonly kind: 'memory'; readonly reason: string };

export interface ChangesConfig {
  readonly scanSeconds: number;
  /** CHANGES_SCANNER_MB, in bytes. */
  readonly scannerMaxBytes: number;
  readonly retentionDays: number;
  readonly store: ChangeStoreConfig;
}

export interface RedisConfig {
  /** `redis://` or `rediss://` (TLS), credentials included. */
  readonly url: string;
  readonly keyPrefix: string;
  readonly connectTimeoutMs: number;
  readonly commandTimeoutMs: number;
}

/** Node's own variables the gateway reads for a default (never set by the gateway's deployment). */
export const PLATFORM_VARIABLES = ['UV_THREADPOOL_SIZE'] as const;

/** A configuration mistake, naming the variable, that stops start-up. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/** One environment variable: how its text is read, its default and bounds, and what operators are told of it. */
export interface ConfigVariable<T> {
  /** The Meaning column of the configuration table in docs/operators.md. */
  readonly meaning: string;
  /** The Default column: the default as code, `—` when there is none, or words for a default that is not a constant. */
  readonly documentedDefault: string;
  /** The inclusive range of a whole number. */
  readonly bounds?: { readonly min: number; readonly max: number };
  /** Its value in `env`; throws `ConfigError` naming `name` when the text is no value it may have. */
  readonly read: (env: Env, name: string) => T;
}

/**
 * Every environment variable the gateway reads, in the order operators read about them: its whole
 * configuration surface. The configuration table of docs/operators.md is generated from it
 * (`npm run docs:config`, and a test fails when the two differ); the Azure deployment template may
 * set these and no others. Each value is checked here, alone; the rules that tie several variables
 * together follow in `loadConfig`.
 */
export const CONFIG_TABLE = Object.freeze({
  PORT: wholeNumber({
    fallback: 3000,
    min: 0,
    max: 65535,
    meaning: 'Port to listen on (`0`: any free port).',
  }),
  AZURE_STORAGE_CONNECTION_STRING: text({
    check: (value) => (/(AccountName|BlobEndpoint|SharedAccessSignature|UseDevelopmentStorage)=/i.test(value) ? undefined : 'does not look like an Azure Storage connection string'),
    meaning:
      "Serve from Azure Blob Storage with this connection string (account key or SAS; Azurite's works). Needs " +
      '`AZURE_STORAGE_CONTAINER`.',
  }),
  AZURE_STORAGE_ACCOUNT_URL: text({
    check: (value) => (/^https?:\/\/[^/\s]+\/?$/.test(value) ? undefined : 'must be the account URL, e.g. https://<account>.blob.core.windows.net'),
    meaning:
      'Serve from Azure Blob Storage at `https://<account>.blob.core.windows.net` with `DefaultAzureCredential` ' +
      '(managed identity on App Service). Needs `AZURE_STORAGE_CONTAINER`. Not together with the connection string.',
  }),
  AZURE_STORAGE_CONTAINER: text({
    check: (value) =>
      /^(?!.*--)[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/.test(value) ? undefined : `"${value}" is not a valid container name (3-63 lowercase letters, digits, single hyphens)`,
    meaning: 'The container holding the data files and the client indexes.',
  }),
  AZURE_STORAGE_TABLE_URL: text({
    documentedDefault: "the account's table endpoint",
    check: (value) => (/^https?:\/\/[^/\s]+(\/[^\s]*)?$/.test(value) ? undefined : 'must be the table endpoint, e.g. https://<account>.table.core.windows.net'),
    meaning:
      'With `AZURE_STORAGE_ACCOUNT_URL`: the Table Storage endpoint of the change log and checksums, when it is not the ' +
      "account's own (`https://<account>.table.core.windows.net`, derived from the blob endpoint). With a connection " +
      "string, its `TableEndpoint` (or the blob endpoint's `.blob.` host as `.table.`) is used instead.",
  }),
  DATA_DIR: text({
    documentedDefault: 'bundled `sample-data/`',
    meaning: 'Serve from this local folder instead (when no `AZURE_STORAGE_*` is set).',
  }),
  CLIENTS_FILE: filePath({
    meaning:
      'The client registry (JSON), shared by the server and the `clients` CLI. Required unless you run the embedded ' +
      'default (no `DATA_DIR`, no Azure), which registers the in-memory `demo` client instead.',
  }),
  CLIENTS_FILE_RECHECK_SECONDS: wholeNumber({
    fallback: 1,
    min: 0,
    max: 60,
    meaning:
      'The registry file is `stat`ed at most this often (0–60) to see whether it changed; a verified bearer token ' +
      'is then trusted from memory until it expires. Bounds how long a disabled client or a rotated secret keeps ' +
      'working with a token already issued.',
  }),
  TOKEN_SIGNING_KEY: text({
    documentedDefault: 'random, with a warning',
    check: (value) => (Buffer.byteLength(value, 'utf8') >= 32 ? undefined : 'must be at least 32 bytes long (e.g. `openssl rand -base64 48`)'),
    meaning:
      'HMAC key (at least 32 bytes) for the bearer tokens, and the key every secret of the S3 API is derived from ' +
      '(`S3_API`). Give every instance behind a load balancer the same key, e.g. `openssl rand -base64 48`.',
  }),
  TOKEN_TTL_SECONDS: wholeNumber({
    fallback: 3600,
    min: 1,
    max: 86400,
    meaning: 'Lifetime of a bearer token (1–86400).',
  }),
  INDEX_REFRESH_SECONDS: wholeNumber({
    fallback: 60,
    min: 0,
    max: 86400,
    meaning:
      'An index is used from memory this long; after that its version (ETag) is checked and it is re-read only if ' +
      'it changed. Bounds how long an index update takes to apply (a request for a row the kept index lacks checks the version at once).',
  }),
  CHANGES_SCAN_SECONDS: wholeNumber({
    fallback: 60,
    min: 5,
    max: 3600,
    meaning:
      'How often the one scanner of the fleet (the holder of the scanner lease) lists storage and logs what entered, ' +
      "changed in or left each client's view (5–3600). A dead holder is replaced within `max(2 x` this`, 60 s)`.",
  }),
  CHANGES_SCANNER_MB: wholeNumber({
    fallback: 64,
    min: 1,
    max: 65_536,
    meaning:
      'Memory, in MiB, that the change scanner may hold on the instance that scans: its listing of storage and the rows of every index some client names, with their lookups ' +
      '(counted as 240 bytes a blob and 300 a row, plus their characters). A scan that would hold more stops before it does, logs ' +
      '`change scanner: over CHANGES_SCANNER_MB` at error level and records no change until this is raised (with the memory it needs) or storage and the indexes shrink. 1–65536.',
  }),
  CHANGES_RETENTION_DAYS: wholeNumber({
    fallback: 30,
    min: 1,
    max: 365,
    meaning:
      'How long changes are kept in the change log (1–365 days); a feed cursor after which one of its client’s changes was pruned must start over from `/list` (a quiet client’s cursor stays valid).',
  }),
  LIST_CACHE_SECONDS: wholeNumber({
    fallback: 5,
    min: 0,
    max: 3600,
    meaning:
      "Which of a catalog's files exist (and their sizes, dates, ETags) is asked of storage at most once per this " +
      'many seconds per index version, and shared by concurrent requests: `/list` and `/count` polled by many ' +
      'clients cost storage one listing. 0–3600 (`0`: every request lists). Downloads and `/info` always ask ' +
      'storage.',
  }),
  CATALOG_CACHE_MB: wholeNumber({
    fallback: 256,
    min: 1,
    max: 65_536,
    meaning:
      'Memory, in MiB, for parsed catalogs, which of their files exist and the serialized rows of small catalogs, shared by all clients; past it the least ' +
      'recently used catalog is dropped and read again when next asked for (concurrent requests share one load). ' +
      '1–65536. Size it as in [Sizing an instance](#sizing-an-instance-for-n-clients-of-r-rows); watch ' +
      '`dfg_catalog_cache_evictions_total`.',
  }),
  INDEX_MAX_MB: wholeNumber({
    fallback: 128,
    min: 1,
    max: 2048,
    meaning:
      'The largest client index read, in MiB; a bigger one is refused (`500 index_malformed` for that client only, ' +
      'with the size in the log). Indexes are parsed as they stream in. 1–2048.',
  }),
  STORAGE_TIMEOUT_SECONDS: wholeNumber({
    fallback: 30,
    min: 1,
    max: 600,
    meaning:
      "How long a whole storage call may take, the Azure SDK's retries included (3 tries, backing off at most 0.5 s " +
      'then 1.5 s), before the gateway gives up with `503` and `Retry-After`: a storage that refuses connections or ' +
      'answers 5xx is reported after about 2 s, one that never answers is cut at this deadline.',
  }),
  DOWNLOAD_IDLE_TIMEOUT_SECONDS: wholeNumber({
    fallback: 60,
    min: 1,
    max: 3600,
    meaning:
      'A download that moves no byte this long is cut (the client sees an incomplete transfer): a subscriber that ' +
      'stopped reading, or storage that stopped sending. 1–3600.',
  }),
  DOWNLOAD_RATE_LIMIT: wholeNumber({
    fallback: 120,
    min: 1,
    max: 1_000_000,
    meaning:
      'Downloads per client per window, on every door (routes, signed and portal links, S3): every complete body is ' +
      'one download; the partial requests and HEADs of one file version (ETag) within the window count once together; a `304` never counts.',
  }),
  DOWNLOAD_RATE_WINDOW_SECONDS: wholeNumber({
    fallback: 60,
    min: 1,
    max: 86400,
    meaning: 'The download rate-limit window.',
  }),
  REQUEST_RATE_LIMIT: wholeNumber({
    fallback: 600,
    min: 1,
    max: 1_000_000,
    meaning:
      'Authenticated requests per client per window, whichever API (bearer-token routes, signed links, signed S3 requests): ' +
      'bounds what one client costs storage (`/info`, `HEAD`, `HeadObject`, ranges of a counted version each cost a call). ' +
      'Past it: `429 rate_limited` with `Retry-After` (S3: `503 SlowDown`).',
  }),
  REQUEST_RATE_WINDOW_SECONDS: wholeNumber({
    fallback: (env) => {
      const download = env['DOWNLOAD_RATE_WINDOW_SECONDS']?.trim();
      return download !== undefined && /^\d+$/.test(download) ? Number(download) : 60;
    },
    documentedDefault: '`DOWNLOAD_RATE_WINDOW_SECONDS`',
    min: 1,
    max: 86400,
    meaning: 'The request budget\'s window.',
  }),
  DOWNLOAD_LINKS: onOff({
    fallback: 'off',
    meaning:
      '`on`: `GET /link/<symbol>` and `?redirect=true` hand out direct, expiring links, so storage moves the bytes ' +
      '(see [Direct links](api.md#direct-links)). On Azure it needs an account key or a managed identity (not a SAS ' +
      'connection string).',
  }),
  DOWNLOAD_LINK_TTL_SECONDS: wholeNumber({
    fallback: 300,
    min: 10,
    max: 86400,
    meaning: 'How long a direct link works (10–86400).',
  }),
  PORTAL: onOff({
    fallback: 'on',
    meaning:
      'The subscriber portal at `/portal` (`on`/`off`); `off` removes every `/portal` route (they answer `404 route_not_found` ' +
      'like any unknown path). See [The subscriber portal](#the-subscriber-portal).',
  }),
  TOKEN_FAILURE_LIMIT: wholeNumber({
    fallback: 10,
    min: 1,
    max: 1_000_000,
    meaning:
      'Wrong secrets per client id **from one address** per window (every id the registry does not know counts as ' +
      'one id); then that address gets `429` for that id (even with the right secret) until the window passes. See ' +
      '[Token endpoint limits](#token-endpoint-limits).',
  }),
  TOKEN_FAILURE_CLIENT_LIMIT: wholeNumber({
    fallback: 100,
    min: 1,
    max: 1_000_000,
    meaning:
      'Wrong secrets per client id from all addresses per window; past it, only addresses that have not failed for ' +
      'that id may still try. Also the ceiling of one address over all client ids: past it, that address gets `429` ' +
      'for every id until the window passes.',
  }),
  TOKEN_FAILURE_WINDOW_SECONDS: wholeNumber({
    fallback: 900,
    min: 1,
    max: 86400,
    meaning: 'The wrong-secret window.',
  }),
  TOKEN_ISSUE_LIMIT: wholeNumber({
    fallback: 120,
    min: 1,
    max: 1_000_000,
    meaning:
      'Tokens issued per client per window (checked before the secret is verified); enough for a client that asks a ' +
      'new token for every download. Every id the registry does not know shares one budget per address.',
  }),
  TOKEN_ISSUE_WINDOW_SECONDS: wholeNumber({
    fallback: 60,
    min: 1,
    max: 86400,
    meaning: 'The issued-token window.',
  }),
  SECRET_HASH_CONCURRENCY: wholeNumber({
    fallback: defaultSecretHashConcurrency,
    min: 1,
    max: 64,
    documentedDefault: 'cores − 1, at most `UV_THREADPOOL_SIZE` − 2 (1 on 2 cores, 2 with the default pool)',
    meaning:
      'Secret verifications (scrypt, ~50 ms of a core each) running at once, each on a thread of its own that keeps ' +
      "scrypt's 16 MiB of memory once used (not Node's thread pool, which file-system calls need); the rest wait in " +
      'a fair, bounded queue (64 places per verification running at once, a quarter of them per address; see [Token ' +
      'endpoint limits](#token-endpoint-limits)).',
  }),
  HEADERS_TIMEOUT_SECONDS: wholeNumber({
    fallback: 20,
    min: 1,
    max: 600,
    meaning:
      'A client must send its request headers within this time (`408` otherwise). At most ' +
      '`REQUEST_TIMEOUT_SECONDS`.',
  }),
  REQUEST_TIMEOUT_SECONDS: wholeNumber({
    fallback: 30,
    min: 1,
    max: 3600,
    meaning:
      'A client must send its whole request, body included, within this time (`408`). Downloads (the response) are ' +
      'not limited by it.',
  }),
  MAX_CONNECTIONS: wholeNumber({
    fallback: 2000,
    min: 1,
    max: 1_000_000,
    meaning: 'Open connections at once; the server drops any beyond.',
  }),
  TRUST_PROXY: variable<boolean | number | string>({
    documentedDefault: '`false`',
    fallback: () => false,
    // Express's `trust proxy`: a flag, a hop count, or the addresses and subnets to trust.
    parse: (text) => (text === 'false' ? false : text === 'true' ? true : /^\d+$/.test(text) ? Number(text) : text),
    meaning:
      'Express `trust proxy` (`true`, a hop count, or addresses/subnets), so throttling sees subscriber addresses ' +
      "behind App Service's front ends (`TRUST_PROXY=1`). A forwarded `203.0.113.1:5000` or `[2001:db8::1]:5000` " +
      "counts without its port; a forwarded value that is no IP address counts as the connection's own address (the " +
      "proxy's).",
  }),
  PUBLIC_BASE_URL: variable<string | undefined>({
    documentedDefault: 'from each request',
    fallback: () => undefined,
    parse: parsePublicBaseUrl,
    meaning:
      "The gateway's public origin, `https://host[:port]` (no path, query or credentials; a trailing `/` is " +
      'dropped): the issuer and endpoints of the discovery documents (`/.well-known/...`) and the origin of the ' +
      'links the gateway signs itself (`DOWNLOAD_LINKS` on the local folder store). Unset: the scheme and host of ' +
      'each request, as `TRUST_PROXY` lets Express read them (`X-Forwarded-Proto`/`-Host` only from a trusted ' +
      'proxy). Set it in production; the Azure template sets `https://<app>.azurewebsites.net`.',
  }),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    fallback: 'info',
    meaning:
      '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. Logs are JSON lines (pino) on stdout; ' +
      "`Authorization` headers, bodies and query values (but `limit`, `modifiedSince`, `redirect` and `wait`; a link's " +
      '`token` never) are never logged.',
  }),
  REDIS_URL: text({
    check: redisUrlProblem,
    meaning:
      '`redis://[:password@]host[:port]` or `rediss://` (TLS), e.g. Azure Managed Redis `rediss://:<access key>@<name>.<region>.redis.azure.net:10000`. ' +
      'When set, the download limit (with the file versions counted within the download window), the issued-token ' +
      'budget and the wrong-secret throttle are counted in Redis, so every instance enforces one limit per client. ' +
      'Unset: each instance counts in its own memory.',
  }),
  REDIS_KEY_PREFIX: text({
    fallback: 'dfg:',
    check: (value) => (/^[A-Za-z0-9:_.-]{1,64}$/.test(value) ? undefined : 'must be 1-64 characters of A-Z a-z 0-9 : _ . -'),
    meaning:
      'Prefix of every key the gateway writes in Redis (1–64 of `A-Z a-z 0-9 : _ . -`), so several gateways can ' +
      'share one Redis.',
  }),
  REDIS_CONNECT_TIMEOUT_MS: wholeNumber({
    fallback: 5000,
    min: 100,
    max: 60_000,
    meaning: 'How long one connection attempt to Redis may take.',
  }),
  REDIS_COMMAND_TIMEOUT_MS: wholeNumber({
    fallback: 500,
    min: 10,
    max: 60_000,
    meaning: 'How long a Redis command may take before it counts as a Redis failure.',
  }),
  RATE_LIMIT_ON_STORE_ERROR: oneOf(['allow', 'deny'], {
    fallback: 'allow',
    meaning:
      'While Redis fails: `allow` lets requests through unlimited, `deny` refuses them with `503 limits_unavailable` ' +
      'and `Retry-After: 5`. See [Several instances and Redis](#several-instances-and-redis).',
  }),
  QUOTA_JOURNAL_DIR: variable({
    documentedDefault: '`quota-journal/` beside `CLIENTS_FILE`',
    fallback: () => undefined,
    parse: (value) => resolve(value),
    meaning:
      'With `REDIS_URL`: the folder, shared by every instance (on App Service, under `/home`), of the journal the monthly ' +
      'quota counts are rebuilt from when Redis loses them; see [When Redis loses the quota counts](#when-redis-loses-the-quota-counts). ' +
      'Created when first written (and again if removed). Without `REDIS_URL`, or without this and `CLIENTS_FILE` (the embedded default), there is no journal.',
  }),
  READY_CACHE_SECONDS: wholeNumber({
    fallback: 5,
    min: 0,
    max: 300,
    meaning: "How long a readiness probe's result (storage, registry, Redis) is reused by `GET /ready`. 0–300.",
  }),
  SHUTDOWN_GRACE_SECONDS: wholeNumber({
    fallback: 30,
    min: 0,
    max: 3600,
    meaning:
      'After SIGTERM or SIGINT, how long requests in flight (downloads included) may finish before the remaining ' +
      'connections are closed. 0–3600.',
  }),
  AUDIT_LOG_FILE: filePath({
    meaning: 'Also append every audit record (JSON lines, mode 0600) to this file.',
  }),
  METRICS_TOKEN: text({
    check: (value) => (/^[\x21-\x7E]{16,512}$/.test(value) ? undefined : 'must be 16 to 512 printable ASCII characters without spaces (e.g. `openssl rand -hex 32`)'),
    meaning:
      'Turns on `GET /metrics` (Prometheus), answered only to `Authorization: Bearer <METRICS_TOKEN>`; 16–512 ' +
      'printable characters, e.g. `openssl rand -hex 32`.',
  }),
  APPLICATIONINSIGHTS_CONNECTION_STRING: text({
    check: (value) =>
      /(^|;)\s*InstrumentationKey=[0-9a-fA-F-]{36}\s*(;|$)/.test(value) ? undefined : 'must hold an InstrumentationKey=<GUID> (copy it from the Application Insights resource)',
    meaning: 'Also send traces and metrics to Azure Monitor (Application Insights) through `@azure/monitor-opentelemetry`.',
  }),
  S3_API: onOff({
    fallback: 'off',
    meaning:
      "`on` serves the read-only S3-compatible API on the gateway's own origin (path-style, signed with AWS " +
      'Signature Version 4) and `POST /oauth/s3-credentials`; see [The S3-compatible API](#the-s3-compatible-api). ' +
      'Set `TOKEN_SIGNING_KEY` with it: every S3 secret is derived from that key.',
  }),
  S3_BUCKET: text({
    fallback: 'data',
    // S3's bucket naming rules, so that every client accepts the name in a path-style URL.
    check: (value) =>
      /^(?!.*\.\.)(?!\d+\.\d+\.\d+\.\d+$)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(value)
        ? undefined
        : `"${value}" is not a valid S3 bucket name (3-63 lowercase letters, digits, dots, hyphens)`,
    meaning:
      "The name of its one virtual bucket, whose keys are the storage paths; S3's bucket naming rules (3–63 " +
      'lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit, no `..`, not an ' +
      'IPv4 address).',
  }),
  WEBHOOK_RETRY_SECONDS: variable<readonly number[]>({
    documentedDefault: '`5,300,1800,7200,18000,36000`',
    fallback: () => DEFAULT_WEBHOOK_RETRY_SECONDS,
    parse: parseRetrySchedule,
    meaning:
      'The delay, in seconds, before each retry of a webhook delivery that failed (no `2xx`), in order: 1 to 20 delays ' +
      "of 1–86400 s, comma-separated. A receiver's `Retry-After` replaces the next delay, up to the longest one. Once " +
      'every delay was tried the endpoint is disabled (an audit record says so). The default retries for about 17 hours. ' +
      'Deliveries are started every 5 s, so a retry comes within 5 s after its delay (1,2,3 behaves as 5,5,5).',
  }),
  WEBHOOK_ALLOW_PRIVATE: onOff({
    fallback: 'off',
    meaning:
      '`on` lets webhook endpoints be `http` and private, loopback or link-local addresses (tests, a private network). ' +
      '`off`: only `https` to public addresses, checked at registration and again on the address each delivery connects to.',
  }),
} satisfies Readonly<Record<string, ConfigVariable<unknown>>>);

const DEFAULT_WEBHOOK_RETRY_SECONDS: readonly number[] = Object.freeze([5, 300, 1800, 7200, 18000, 36000]);

/** `5,300,1800`: 1 to 20 whole numbers of seconds, each 1–86400. */
function parseRetrySchedule(text: string, name: string): readonly number[] {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length > 20) throw new ConfigError(name, `must list at most 20 delays, got ${parts.length}`);
  return Object.freeze(
    parts.map((part) => {
      if (!/^\d{1,5}$/.test(part) || Number(part) < 1 || Number(part) > 86400) {
        throw new ConfigError(name, `must be comma-separated whole numbers of seconds from 1 to 86400, got "${part}"`);
      }
      return Number(part);
    }),
  );
}

export type ConfigVariableName = keyof typeof CONFIG_TABLE;

/** The names of `CONFIG_TABLE`, in its order. A test checks that `loadConfig` reads exactly these. */
export const CONFIG_VARIABLES = Object.keys(CONFIG_TABLE) as readonly ConfigVariableName[];

type ConfigValues = { readonly [Name in ConfigVariableName]: ReturnType<(typeof CONFIG_TABLE)[Name]['read']> };

const mebibyte = 1024 * 1024;

/** Reads and checks every setting once, at start-up. Throws `ConfigError` naming the first bad variable. */
export function loadConfig(env: Env, bundledSampleDataDir: string): GatewayConfig {
  const values = Object.fromEntries(CONFIG_VARIABLES.map((name) => [name, CONFIG_TABLE[name].read(env, name)])) as ConfigValues;
  const storage = storageConfig(values, bundledSampleDataDir);
  if (values.CLIENTS_FILE === undefined && !(storage.kind === 'local' && storage.bundledSample)) {
    throw new ConfigError('CLIENTS_FILE', 'is required when serving your own data (DATA_DIR or AZURE_STORAGE_*); create it with `npm run clients -- add <client_id>`');
  }
  if (values.DOWNLOAD_LINKS && storage.kind === 'azure-connection-string' && !/(^|;)\s*(AccountKey|UseDevelopmentStorage)=/i.test(storage.connectionString)) {
    throw new ConfigError(
      'DOWNLOAD_LINKS',
      'is on, but AZURE_STORAGE_CONNECTION_STRING has no AccountKey to sign SAS links with: use an account key connection string, or AZURE_STORAGE_ACCOUNT_URL with a managed identity',
    );
  }
  // Node requires the headers' deadline to be within the whole request's.
  if (values.HEADERS_TIMEOUT_SECONDS > values.REQUEST_TIMEOUT_SECONDS) {
    throw new ConfigError('HEADERS_TIMEOUT_SECONDS', `must not exceed REQUEST_TIMEOUT_SECONDS (${values.REQUEST_TIMEOUT_SECONDS})`);
  }

  return {
    port: values.PORT,
    storage,
    clientsFile: values.CLIENTS_FILE,
    clientsFileRecheckSeconds: values.CLIENTS_FILE_RECHECK_SECONDS,
    tokenSigningKey: values.TOKEN_SIGNING_KEY === undefined ? new Uint8Array(randomBytes(48)) : new TextEncoder().encode(values.TOKEN_SIGNING_KEY),
    tokenSigningKeyIsEphemeral: values.TOKEN_SIGNING_KEY === undefined,
    tokenTtlSeconds: values.TOKEN_TTL_SECONDS,
    indexRefreshSeconds: values.INDEX_REFRESH_SECONDS,
    listCacheSeconds: values.LIST_CACHE_SECONDS,
    catalogCacheBytes: values.CATALOG_CACHE_MB * mebibyte,
    indexMaxBytes: values.INDEX_MAX_MB * mebibyte,
    storageTimeoutSeconds: values.STORAGE_TIMEOUT_SECONDS,
    downloadRateLimit: values.DOWNLOAD_RATE_LIMIT,
    downloadRateWindowSeconds: values.DOWNLOAD_RATE_WINDOW_SECONDS,
    requestRateLimit: values.REQUEST_RATE_LIMIT,
    requestRateWindowSeconds: values.REQUEST_RATE_WINDOW_SECONDS,
    downloadLinks: values.DOWNLOAD_LINKS,
    downloadLinkTtlSeconds: values.DOWNLOAD_LINK_TTL_SECONDS,
    portal: values.PORTAL,
    tokenFailureLimit: values.TOKEN_FAILURE_LIMIT,
    tokenFailureClientLimit: values.TOKEN_FAILURE_CLIENT_LIMIT,
    tokenFailureWindowSeconds: values.TOKEN_FAILURE_WINDOW_SECONDS,
    tokenIssueLimit: values.TOKEN_ISSUE_LIMIT,
    tokenIssueWindowSeconds: values.TOKEN_ISSUE_WINDOW_SECONDS,
    secretHashConcurrency: values.SECRET_HASH_CONCURRENCY,
    downloadIdleTimeoutSeconds: values.DOWNLOAD_IDLE_TIMEOUT_SECONDS,
    headersTimeoutSeconds: values.HEADERS_TIMEOUT_SECONDS,
    requestTimeoutSeconds: values.REQUEST_TIMEOUT_SECONDS,
    maxConnections: values.MAX_CONNECTIONS,
    trustProxy: values.TRUST_PROXY,
    publicBaseUrl: values.PUBLIC_BASE_URL,
    logLevel: values.LOG_LEVEL,
    redis:
      values.REDIS_URL === undefined
        ? undefined
        : { url: values.REDIS_URL, keyPrefix: values.REDIS_KEY_PREFIX, connectTimeoutMs: values.REDIS_CONNECT_TIMEOUT_MS, commandTimeoutMs: values.REDIS_COMMAND_TIMEOUT_MS },
    rateLimitOnStoreError: values.RATE_LIMIT_ON_STORE_ERROR,
    // The journal is only for counts Redis can lose; its default lives beside the registry, on the same shared disk.
    quotaJournalDir:
      values.REDIS_URL === undefined
        ? undefined
        : (values.QUOTA_JOURNAL_DIR ?? (values.CLIENTS_FILE === undefined ? undefined : join(dirname(values.CLIENTS_FILE), 'quota-journal'))),
    readyCacheSeconds: values.READY_CACHE_SECONDS,
    shutdownGraceSeconds: values.SHUTDOWN_GRACE_SECONDS,
    auditLogFile: values.AUDIT_LOG_FILE,
    metricsToken: values.METRICS_TOKEN,
    applicationInsightsConnectionString: values.APPLICATIONINSIGHTS_CONNECTION_STRING,
    s3: values.S3_API ? { bucket: values.S3_BUCKET } : undefined,
    webhooks: { retrySeconds: values.WEBHOOK_RETRY_SECONDS, allowPrivate: values.WEBHOOK_ALLOW_PRIVATE },
    changes: {
      scanSeconds: values.CHANGES_SCAN_SECONDS,
      scannerMaxBytes: values.CHANGES_SCANNER_MB * 1024 * 1024,
      retentionDays: values.CHANGES_RETENTION_DAYS,
      store: changeStoreConfig(storage, values.CLIENTS_FILE, values.AZURE_STORAGE_TABLE_URL),
    },
  };
}

function changeStoreConfig(storage: StorageConfig, clientsFile: string | undefined, tableUrl: string | undefined): ChangeStoreConfig {
  if (tableUrl !== undefined && storage.kind !== 'azure-managed-identity') {
    throw new ConfigError('AZURE_STORAGE_TABLE_URL', 'applies only with AZURE_STORAGE_ACCOUNT_URL (a connection string names its own TableEndpoint)');
  }
  switch (storage.kind) {
    case 'local':
      return clientsFile === undefined
        ? { kind: 'memory', reason: 'the embedded default keeps its change log in memory' }
        : { kind: 'folder', dir: join(dirname(clientsFile), 'changes') };
    case 'azure-managed-identity': {
      const derived = storage.accountUrl.replace(/^(https?:\/\/[^/.]+)\.blob\./, '$1.table.').replace(/\/+$/, '');
      if (tableUrl === undefined && derived === storage.accountUrl.replace(/\/+$/, '')) {
        throw new ConfigError('AZURE_STORAGE_TABLE_URL', `is required: the table endpoint cannot be told from ${storage.accountUrl}`);
      }
      return { kind: 'table-url', tableUrl: (tableUrl ?? derived).replace(/\/+$/, '') };
    }
    case 'azure-connection-string':
      return tableConnection(storage.connectionString);
  }
}

/** The connection string with its table endpoint: named, derived from a `*.blob.*` endpoint, or the SDK's for an account name. */
function tableConnection(connectionString: string): ChangeStoreConfig {
  if (/(^|;)\s*(TableEndpoint=|UseDevelopmentStorage=true)/i.test(connectionString)) return { kind: 'table-connection-string', connectionString };
  const blobEndpoint = /(?:^|;)\s*BlobEndpoint=([^;]+)/i.exec(connectionString)?.[1];
  if (blobEndpoint === undefined) {
    return /(^|;)\s*AccountName=/i.test(connectionString)
      ? { kind: 'table-connection-string', connectionString }
      : { kind: 'memory', reason: 'the connection string names no account or table endpoint' };
  }
  const tableEndpoint = blobEndpoint.replace(/^(https?:\/\/[^/.]+)\.blob\./, '$1.table.');
  if (tableEndpoint === blobEndpoint) return { kind: 'memory', reason: 'the connection string names no TableEndpoint (and its blob endpoint is no *.blob.* host)' };
  return { kind: 'table-connection-string', connectionString: `${connectionString.replace(/;?\s*$/, ';')}TableEndpoint=${tableEndpoint};` };
}

type StorageVariable = 'AZURE_STORAGE_CONNECTION_STRING' | 'AZURE_STORAGE_ACCOUNT_URL' | 'AZURE_STORAGE_CONTAINER' | 'DATA_DIR';

function storageConfig(values: Pick<ConfigValues, StorageVariable>, bundledSampleDataDir: string): StorageConfig {
  const { AZURE_STORAGE_CONNECTION_STRING: connectionString, AZURE_STORAGE_ACCOUNT_URL: accountUrl, AZURE_STORAGE_CONTAINER: container, DATA_DIR: dataDir } = values;
  if (connectionString !== undefined && accountUrl !== undefined) {
    throw new ConfigError('AZURE_STORAGE_ACCOUNT_URL', 'set either it or AZURE_STORAGE_CONNECTION_STRING, not both');
  }
  if (connectionString === undefined && accountUrl === undefined) {
    if (container !== undefined) {
      throw new ConfigError('AZURE_STORAGE_CONTAINER', 'needs AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_ACCOUNT_URL');
    }
    if (dataDir === undefined) return { kind: 'local', dataDir: bundledSampleDataDir, bundledSample: true };
    return { kind: 'local', dataDir: isAbsolute(dataDir) ? dataDir : resolve(dataDir), bundledSample: false };
  }
  if (dataDir !== undefined) throw new ConfigError('DATA_DIR', 'cannot be combined with AZURE_STORAGE_* settings');
  if (container === undefined) throw new ConfigError('AZURE_STORAGE_CONTAINER', 'is required with Azure Blob storage');
  if (accountUrl !== undefined) return { kind: 'azure-managed-identity', accountUrl, container };
  return { kind: 'azure-connection-string', connectionString: connectionString ?? '', container };
}

// ---------------------------------------------------------------------------------------------
// The kinds of variable the table is made of

/**
 * A variable read by `parse` from its trimmed text, `fallback` when it is unset or blank. App
 * Service leaves a Key Vault reference it could not resolve as the literal `@Microsoft.KeyVault(...)`
 * text: that is a deployment fault, never a value, whatever the variable.
 */
function variable<T>(spec: {
  readonly meaning: string;
  readonly documentedDefault: string;
  readonly bounds?: { readonly min: number; readonly max: number };
  readonly fallback: (env: Env) => T;
  readonly parse: (text: string, name: string) => T;
}): ConfigVariable<T> {
  return {
    meaning: spec.meaning,
    documentedDefault: spec.documentedDefault,
    ...(spec.bounds !== undefined && { bounds: spec.bounds }),
    read(env, name) {
      const text = env[name]?.trim();
      if (text === undefined || text === '') return spec.fallback(env);
      if (text.startsWith('@Microsoft.KeyVault(')) {
        throw new ConfigError(name, 'is an unresolved Key Vault reference: grant the app\'s identity access to the secret, or check the reference');
      }
      return spec.parse(text, name);
    },
  };
}

function asCode(value: string | number): string {
  return `\`${value}\``;
}

/** A whole number from `min` to `max`; a computed default is described in words for the docs. */
function wholeNumber(
  spec: { readonly min: number; readonly max: number; readonly meaning: string } & (
    | { readonly fallback: number }
    | { readonly fallback: (env: Env) => number; readonly documentedDefault: string }
  ),
): ConfigVariable<number> {
  const { min, max, fallback } = spec;
  return variable({
    meaning: spec.meaning,
    documentedDefault: 'documentedDefault' in spec ? spec.documentedDefault : asCode(spec.fallback),
    bounds: { min, max },
    fallback: typeof fallback === 'number' ? () => fallback : fallback,
    parse(text, name) {
      if (!/^\d+$/.test(text)) throw new ConfigError(name, `must be a whole number, got "${text}"`);
      const value = Number(text);
      if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
      return value;
    },
  });
}

function oneOf<const T extends string>(values: readonly T[], spec: { readonly fallback: T; readonly meaning: string }): ConfigVariable<T> {
  return variable({
    meaning: spec.meaning,
    documentedDefault: asCode(spec.fallback),
    fallback: () => spec.fallback,
    parse(text, name) {
      if (!(values as readonly string[]).includes(text)) throw new ConfigError(name, `must be one of ${values.join(', ')}, got "${text}"`);
      return text as T;
    },
  });
}

/** `on` or `off`, read as a flag. */
function onOff(spec: { readonly fallback: 'on' | 'off'; readonly meaning: string }): ConfigVariable<boolean> {
  const choice = oneOf(['on', 'off'] as const, spec);
  return { ...choice, read: (env, name) => choice.read(env, name) === 'on' };
}

interface TextSpec {
  readonly meaning: string;
  readonly documentedDefault?: string;
  /** What is wrong with the value (the message of its `ConfigError`), or `undefined` when nothing is. */
  readonly check?: (value: string) => string | undefined;
}

/** Text, as given (trimmed); `undefined` when unset and there is no `fallback`. */
function text(spec: TextSpec & { readonly fallback: string }): ConfigVariable<string>;
function text(spec: TextSpec): ConfigVariable<string | undefined>;
function text(spec: TextSpec & { readonly fallback?: string }): ConfigVariable<string | undefined> {
  return variable({
    meaning: spec.meaning,
    documentedDefault: spec.documentedDefault ?? (spec.fallback === undefined ? '—' : asCode(spec.fallback)),
    fallback: () => spec.fallback,
    parse(value, name) {
      const problem = spec.check?.(value);
      if (problem !== undefined) throw new ConfigError(name, problem);
      return value;
    },
  });
}

/** A file's path, made absolute against the working directory; `undefined` when unset. */
function filePath(spec: { readonly meaning: string }): ConfigVariable<string | undefined> {
  return variable({ meaning: spec.meaning, documentedDefault: '—', fallback: () => undefined, parse: (value) => resolve(value) });
}

// ---------------------------------------------------------------------------------------------
// Defaults and checks too long for a line of the table

/**
 * scrypt keeps a core busy for ~50 ms per verification, on a thread of its own that keeps scrypt's
 * 16 MiB once used (ScryptThreads). Leave a core for the event loop: one verification at a time on
 * 2 cores, two from 3 cores up. The cap of UV_THREADPOOL_SIZE - 2 dates from when scrypt ran on
 * Node's pool; it is kept so that the default, and the memory it takes, stay as they were.
 */
function defaultSecretHashConcurrency(env: Env): number {
  const poolSize = Number(env['UV_THREADPOOL_SIZE'] ?? '') || 4;
  return Math.max(1, Math.min(availableParallelism() - 1, poolSize - 2));
}

/**
 * RFC 8414 section 2: an issuer is a URL with no query or fragment; an origin alone keeps the
 * metadata at `/.well-known/oauth-authorization-server` (section 3) and every route at its path.
 */
function parsePublicBaseUrl(text: string, name: string): string {
  const shape = /^(https?):\/\/([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?\/?$/;
  if (!shape.test(text)) {
    // The value is not repeated: a URL with credentials in it must not reach the logs.
    throw new ConfigError(name, "must be the gateway's origin, e.g. https://files.example.net (no path, query or credentials)");
  }
  return text.replace(/\/$/, '');
}

function redisUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL: use redis://[:password@]host[:port] or rediss:// for TLS (Azure Managed Redis: rediss://:<key>@<name>.<region>.redis.azure.net:10000)';
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') return `must start with redis:// or rediss://, got ${parsed.protocol}//`;
  if (parsed.hostname === '') return 'has no host';
  return undefined;
}
