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
  /** Memory for parsed catalogs and which of their files exist, in bytes (CATALOG_CACHE_MB); least recently used out first. */
  readonly catalogCacheBytes: number;
  /** The largest index read, in bytes (INDEX_MAX_MB); a bigger one is refused as malformed. */
  readonly indexMaxBytes: number;
  /** How long Azure Storage may take to start answering a call, the SDK's retries and their back-off included. */
  readonly storageTimeoutSeconds: number;
  readonly downloadRateLimit: number;
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
}

export interface RedisConfig {
  /** `redis://` or `rediss://` (TLS), credentials included. */
  readonly url: string;
  readonly keyPrefix: string;
  readonly connectTimeoutMs: number;
  readonly commandTimeoutMs: number;
}

/**
 * Every environment variable the gateway reads: its whole configuration surface (the configuration
 * table of docs/operators.md lists exactly these; the Azure deployment template may set these and
 * no others). A test checks that `loadConfig` reads exactly these.
 */
export const CONFIG_VARIABLES = [
  'PORT',
  'AZURE_STORAGE_CONNECTION_STRING',
  'AZURE_STORAGE_ACCOUNT_URL',
  'AZURE_STORAGE_CONTAINER',
  'DATA_DIR',
  'CLIENTS_FILE',
  'CLIENTS_FILE_RECHECK_SECONDS',
  'TOKEN_SIGNING_KEY',
  'TOKEN_TTL_SECONDS',
  'INDEX_REFRESH_SECONDS',
  'LIST_CACHE_SECONDS',
  'CATALOG_CACHE_MB',
  'INDEX_MAX_MB',
  'STORAGE_TIMEOUT_SECONDS',
  'DOWNLOAD_IDLE_TIMEOUT_SECONDS',
  'DOWNLOAD_RATE_LIMIT',
  'DOWNLOAD_RATE_WINDOW_SECONDS',
  'DOWNLOAD_LINKS',
  'DOWNLOAD_LINK_TTL_SECONDS',
  'PORTAL',
  'TOKEN_FAILURE_LIMIT',
  'TOKEN_FAILURE_CLIENT_LIMIT',
  'TOKEN_FAILURE_WINDOW_SECONDS',
  'TOKEN_ISSUE_LIMIT',
  'TOKEN_ISSUE_WINDOW_SECONDS',
  'SECRET_HASH_CONCURRENCY',
  'HEADERS_TIMEOUT_SECONDS',
  'REQUEST_TIMEOUT_SECONDS',
  'MAX_CONNECTIONS',
  'TRUST_PROXY',
  'PUBLIC_BASE_URL',
  'LOG_LEVEL',
  'REDIS_URL',
  'REDIS_KEY_PREFIX',
  'REDIS_CONNECT_TIMEOUT_MS',
  'REDIS_COMMAND_TIMEOUT_MS',
  'RATE_LIMIT_ON_STORE_ERROR',
  'QUOTA_JOURNAL_DIR',
  'READY_CACHE_SECONDS',
  'SHUTDOWN_GRACE_SECONDS',
  'AUDIT_LOG_FILE',
  'METRICS_TOKEN',
  'APPLICATIONINSIGHTS_CONNECTION_STRING',
  'S3_API',
  'S3_BUCKET',
] as const;

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

const mebibyte = 1024 * 1024;

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Reads and checks every setting once, at start-up. Throws `ConfigError` naming the first bad variable. */
export function loadConfig(env: Env, bundledSampleDataDir: string): GatewayConfig {
  const storage = storageConfig(env, bundledSampleDataDir);
  const clientsFile = nonEmpty(env, 'CLIENTS_FILE');
  if (clientsFile === undefined && !(storage.kind === 'local' && storage.bundledSample)) {
    throw new ConfigError('CLIENTS_FILE', 'is required when serving your own data (DATA_DIR or AZURE_STORAGE_*); create it with `npm run clients -- add <client_id>`');
  }
  const tokenSigningKey = nonEmpty(env, 'TOKEN_SIGNING_KEY');
  if (tokenSigningKey !== undefined && Buffer.byteLength(tokenSigningKey, 'utf8') < 32) {
    throw new ConfigError('TOKEN_SIGNING_KEY', 'must be at least 32 bytes long (e.g. `openssl rand -base64 48`)');
  }
  const downloadLinks = oneOf(env, 'DOWNLOAD_LINKS', ['on', 'off'] as const, 'off') === 'on';
  if (downloadLinks && storage.kind === 'azure-connection-string' && !/(^|;)\s*(AccountKey|UseDevelopmentStorage)=/i.test(storage.connectionString)) {
    throw new ConfigError(
      'DOWNLOAD_LINKS',
      'is on, but AZURE_STORAGE_CONNECTION_STRING has no AccountKey to sign SAS links with: use an account key connection string, or AZURE_STORAGE_ACCOUNT_URL with a managed identity',
    );
  }
  const logLevel = nonEmpty(env, 'LOG_LEVEL') ?? 'info';
  if (!logLevels.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${logLevels.join(', ')}`);

  const redis = redisConfig(env);
  const resolvedClientsFile = clientsFile === undefined ? undefined : resolve(clientsFile);

  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    storage,
    clientsFile: resolvedClientsFile,
    clientsFileRecheckSeconds: integer(env, 'CLIENTS_FILE_RECHECK_SECONDS', 1, 0, 60),
    tokenSigningKey: tokenSigningKey === undefined ? new Uint8Array(randomBytes(48)) : new TextEncoder().encode(tokenSigningKey),
    tokenSigningKeyIsEphemeral: tokenSigningKey === undefined,
    tokenTtlSeconds: integer(env, 'TOKEN_TTL_SECONDS', 3600, 1, 86400),
    indexRefreshSeconds: integer(env, 'INDEX_REFRESH_SECONDS', 60, 0, 86400),
    listCacheSeconds: integer(env, 'LIST_CACHE_SECONDS', 5, 0, 3600),
    catalogCacheBytes: integer(env, 'CATALOG_CACHE_MB', 256, 1, 65_536) * mebibyte,
    indexMaxBytes: integer(env, 'INDEX_MAX_MB', 128, 1, 2048) * mebibyte,
    storageTimeoutSeconds: integer(env, 'STORAGE_TIMEOUT_SECONDS', 30, 1, 600),
    downloadRateLimit: integer(env, 'DOWNLOAD_RATE_LIMIT', 120, 1, 1_000_000),
    downloadRateWindowSeconds: integer(env, 'DOWNLOAD_RATE_WINDOW_SECONDS', 60, 1, 86400),
    downloadLinks,
    downloadLinkTtlSeconds: integer(env, 'DOWNLOAD_LINK_TTL_SECONDS', 300, 10, 86400),
    portal: oneOf(env, 'PORTAL', ['on', 'off'] as const, 'on') === 'on',
    tokenFailureLimit: integer(env, 'TOKEN_FAILURE_LIMIT', 10, 1, 1_000_000),
    tokenFailureClientLimit: integer(env, 'TOKEN_FAILURE_CLIENT_LIMIT', 100, 1, 1_000_000),
    tokenFailureWindowSeconds: integer(env, 'TOKEN_FAILURE_WINDOW_SECONDS', 900, 1, 86400),
    tokenIssueLimit: integer(env, 'TOKEN_ISSUE_LIMIT', 120, 1, 1_000_000),
    tokenIssueWindowSeconds: integer(env, 'TOKEN_ISSUE_WINDOW_SECONDS', 60, 1, 86400),
    secretHashConcurrency: integer(env, 'SECRET_HASH_CONCURRENCY', defaultSecretHashConcurrency(env), 1, 64),
    downloadIdleTimeoutSeconds: integer(env, 'DOWNLOAD_IDLE_TIMEOUT_SECONDS', 60, 1, 3600),
    ...requestTimeouts(env),
    maxConnections: integer(env, 'MAX_CONNECTIONS', 2000, 1, 1_000_000),
    trustProxy: trustProxy(env),
    publicBaseUrl: publicBaseUrl(env),
    logLevel,
    redis,
    rateLimitOnStoreError: oneOf(env, 'RATE_LIMIT_ON_STORE_ERROR', ['allow', 'deny'] as const, 'allow'),
    quotaJournalDir: quotaJournalDir(env, redis, resolvedClientsFile),
    readyCacheSeconds: integer(env, 'READY_CACHE_SECONDS', 5, 0, 300),
    shutdownGraceSeconds: integer(env, 'SHUTDOWN_GRACE_SECONDS', 30, 0, 3600),
    auditLogFile: optionalPath(env, 'AUDIT_LOG_FILE'),
    metricsToken: metricsToken(env),
    applicationInsightsConnectionString: applicationInsights(env),
    s3: s3Config(env),
  };
}

function s3Config(env: Env): GatewayConfig['s3'] {
  const on = oneOf(env, 'S3_API', ['on', 'off'] as const, 'off') === 'on';
  const bucket = nonEmpty(env, 'S3_BUCKET') ?? 'data';
  // S3's bucket naming rules, so that every client accepts the name in a path-style URL.
  if (!/^(?!.*\.\.)(?!\d+\.\d+\.\d+\.\d+$)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new ConfigError('S3_BUCKET', `"${bucket}" is not a valid S3 bucket name (3-63 lowercase letters, digits, dots, hyphens)`);
  }
  return on ? { bucket } : undefined;
}

function redisConfig(env: Env): RedisConfig | undefined {
  const url = nonEmpty(env, 'REDIS_URL');
  const keyPrefix = nonEmpty(env, 'REDIS_KEY_PREFIX') ?? 'dfg:';
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(keyPrefix)) {
    throw new ConfigError('REDIS_KEY_PREFIX', 'must be 1-64 characters of A-Z a-z 0-9 : _ . -');
  }
  const connectTimeoutMs = integer(env, 'REDIS_CONNECT_TIMEOUT_MS', 5000, 100, 60_000);
  const commandTimeoutMs = integer(env, 'REDIS_COMMAND_TIMEOUT_MS', 500, 10, 60_000);
  if (url === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('REDIS_URL', 'is not a URL: use redis://[:password@]host[:port] or rediss:// for TLS (Azure Managed Redis: rediss://:<key>@<name>.<region>.redis.azure.net:10000)');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new ConfigError('REDIS_URL', `must start with redis:// or rediss://, got ${parsed.protocol}//`);
  }
  if (parsed.hostname === '') throw new ConfigError('REDIS_URL', 'has no host');
  return { url, keyPrefix, connectTimeoutMs, commandTimeoutMs };
}

/** The journal is only for counts Redis can lose; its default lives beside the registry, on the same shared disk. */
function quotaJournalDir(env: Env, redis: RedisConfig | undefined, clientsFile: string | undefined): string | undefined {
  const configured = optionalPath(env, 'QUOTA_JOURNAL_DIR');
  if (redis === undefined) return undefined;
  return configured ?? (clientsFile === undefined ? undefined : join(dirname(clientsFile), 'quota-journal'));
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  if (!(values as readonly string[]).includes(raw)) throw new ConfigError(name, `must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

function optionalPath(env: Env, name: string): string | undefined {
  const raw = nonEmpty(env, name);
  return raw === undefined ? undefined : resolve(raw);
}

function metricsToken(env: Env): string | undefined {
  const token = nonEmpty(env, 'METRICS_TOKEN');
  if (token !== undefined && !/^[\x21-\x7E]{16,512}$/.test(token)) {
    throw new ConfigError('METRICS_TOKEN', 'must be 16 to 512 printable ASCII characters without spaces (e.g. `openssl rand -hex 32`)');
  }
  return token;
}

function applicationInsights(env: Env): string | undefined {
  const connectionString = nonEmpty(env, 'APPLICATIONINSIGHTS_CONNECTION_STRING');
  if (connectionString !== undefined && !/(^|;)\s*InstrumentationKey=[0-9a-fA-F-]{36}\s*(;|$)/.test(connectionString)) {
    throw new ConfigError('APPLICATIONINSIGHTS_CONNECTION_STRING', 'must hold an InstrumentationKey=<GUID> (copy it from the Application Insights resource)');
  }
  return connectionString;
}

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

function requestTimeouts(env: Env): { headersTimeoutSeconds: number; requestTimeoutSeconds: number } {
  const headersTimeoutSeconds = integer(env, 'HEADERS_TIMEOUT_SECONDS', 20, 1, 600);
  const requestTimeoutSeconds = integer(env, 'REQUEST_TIMEOUT_SECONDS', 30, 1, 3600);
  // Node requires the headers' deadline to be within the whole request's.
  if (headersTimeoutSeconds > requestTimeoutSeconds) {
    throw new ConfigError('HEADERS_TIMEOUT_SECONDS', `must not exceed REQUEST_TIMEOUT_SECONDS (${requestTimeoutSeconds})`);
  }
  return { headersTimeoutSeconds, requestTimeoutSeconds };
}

function storageConfig(env: Env, bundledSampleDataDir: string): StorageConfig {
  const connectionString = nonEmpty(env, 'AZURE_STORAGE_CONNECTION_STRING');
  const accountUrl = nonEmpty(env, 'AZURE_STORAGE_ACCOUNT_URL');
  const container = nonEmpty(env, 'AZURE_STORAGE_CONTAINER');
  const dataDir = nonEmpty(env, 'DATA_DIR');

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
  if (!/^(?!.*--)[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/.test(container)) {
    throw new ConfigError('AZURE_STORAGE_CONTAINER', `"${container}" is not a valid container name (3-63 lowercase letters, digits, single hyphens)`);
  }
  if (accountUrl !== undefined) {
    if (!/^https?:\/\/[^/\s]+\/?$/.test(accountUrl)) {
      throw new ConfigError('AZURE_STORAGE_ACCOUNT_URL', 'must be the account URL, e.g. https://<account>.blob.core.windows.net');
    }
    return { kind: 'azure-managed-identity', accountUrl, container };
  }
  if (connectionString !== undefined && !/(AccountName|BlobEndpoint|SharedAccessSignature|UseDevelopmentStorage)=/i.test(connectionString)) {
    throw new ConfigError('AZURE_STORAGE_CONNECTION_STRING', 'does not look like an Azure Storage connection string');
  }
  return { kind: 'azure-connection-string', connectionString: connectionString ?? '', container };
}

/**
 * The variable's value, trimmed; `undefined` when unset or blank. App Service leaves a Key Vault
 * reference it could not resolve as the literal `@Microsoft.KeyVault(...)` text: that is a
 * deployment fault, never a value.
 */
function nonEmpty(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  if (value === undefined || value === '') return undefined;
  if (value.startsWith('@Microsoft.KeyVault(')) {
    throw new ConfigError(name, 'is an unresolved Key Vault reference: grant the app\'s identity access to the secret, or check the reference');
  }
  return value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

/**
 * RFC 8414 section 2: an issuer is a URL with no query or fragment; an origin alone keeps the
 * metadata at `/.well-known/oauth-authorization-server` (section 3) and every route at its path.
 */
function publicBaseUrl(env: Env): string | undefined {
  const raw = nonEmpty(env, 'PUBLIC_BASE_URL');
  if (raw === undefined) return undefined;
  const shape = /^(https?):\/\/([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?\/?$/;
  if (!shape.test(raw)) {
    // The value is not repeated: a URL with credentials in it must not reach the logs.
    throw new ConfigError('PUBLIC_BASE_URL', "must be the gateway's origin, e.g. https://files.example.net (no path, query or credentials)");
  }
  return raw.replace(/\/$/, '');
}

function trustProxy(env: Env): boolean | number | string {
  const raw = nonEmpty(env, 'TRUST_PROXY');
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw;
}
