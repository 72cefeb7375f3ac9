import { expect } from 'chai';
import { CONFIG_VARIABLES, ConfigError, loadConfig, PLATFORM_VARIABLES } from '../../src/app/config.js';

const sample = '/opt/gateway/sample-data';
const load = (env: Record<string, string>) => loadConfig(env, sample);

function expectConfigError(env: Record<string, string>, variable: string, message: RegExp): void {
  let failure: unknown;
  try {
    load(env);
  } catch (error) {
    failure = error;
  }
  expect(failure).to.be.instanceOf(ConfigError);
  expect((failure as ConfigError).variable).to.equal(variable);
  expect((failure as ConfigError).message).to.match(new RegExp(`^${variable}: `));
  expect((failure as ConfigError).message).to.match(message);
}

describe('loadConfig', function () {
  it('reads exactly the variables of CONFIG_VARIABLES (and Node\'s UV_THREADPOOL_SIZE for a default)', function () {
    const read = new Set<string>();
    const env = new Proxy({} as Record<string, string | undefined>, {
      get(_target, name) {
        if (typeof name === 'string') read.add(name);
        return undefined;
      },
    });
    loadConfig(env, sample);
    expect([...read].sort()).to.deep.equal([...CONFIG_VARIABLES, ...PLATFORM_VARIABLES].sort());
  });

  describe('CATALOG_CACHE_MB and INDEX_MAX_MB', function () {
    it('default to 256 MiB of catalogs and indexes of up to 128 MiB', function () {
      expect(load({})).to.include({ catalogCacheBytes: 256 * 1024 * 1024, indexMaxBytes: 128 * 1024 * 1024 });
    });

    it('are read in mebibytes', function () {
      expect(load({ CATALOG_CACHE_MB: '1024', INDEX_MAX_MB: '512' })).to.include({ catalogCacheBytes: 1024 * 1024 * 1024, indexMaxBytes: 512 * 1024 * 1024 });
    });

    for (const [variable, value] of [['CATALOG_CACHE_MB', '0'], ['CATALOG_CACHE_MB', '65537'], ['INDEX_MAX_MB', '0'], ['INDEX_MAX_MB', '2049'], ['INDEX_MAX_MB', '1.5']] as const) {
      it(`stops start-up for ${variable}=${value}, naming it`, function () {
        expectConfigError({ [variable]: value }, variable, /between|whole number/);
      });
    }
  });

  describe('QUOTA_JOURNAL_DIR', function () {
    const redisUrl = 'rediss://:key@cache.westeurope.redis.azure.net:10000';

    it('defaults to quota-journal/ beside CLIENTS_FILE when REDIS_URL is set', function () {
      expect(load({ REDIS_URL: redisUrl, CLIENTS_FILE: '/home/gateway/clients.json' }).quotaJournalDir).to.equal('/home/gateway/quota-journal');
    });

    it('is read as a path, relative to the working folder', function () {
      expect(load({ REDIS_URL: redisUrl, QUOTA_JOURNAL_DIR: 'journal' }).quotaJournalDir).to.equal(`${process.cwd()}/journal`);
    });

    it('is unused without REDIS_URL (the counts are in memory: nothing to rebuild)', function () {
      expect(load({ CLIENTS_FILE: '/home/gateway/clients.json', QUOTA_JOURNAL_DIR: '/home/journal' }).quotaJournalDir).to.equal(undefined);
    });

    it('is unset on the embedded default with Redis (no CLIENTS_FILE to stand beside)', function () {
      expect(load({ REDIS_URL: redisUrl }).quotaJournalDir).to.equal(undefined);
    });
  });

  describe('the change feed (CHANGES_*, AZURE_STORAGE_TABLE_URL)', function () {
    const account = { AZURE_STORAGE_CONTAINER: 'data', CLIENTS_FILE: '/home/data/clients.json' };

    it('scans every 60 s and keeps 30 days by default, within bounds', function () {
      expect(load({}).changes).to.include({ scanSeconds: 60, retentionDays: 30 });
      expect(load({ CHANGES_SCAN_SECONDS: '5', CHANGES_RETENTION_DAYS: '365' }).changes).to.include({ scanSeconds: 5, retentionDays: 365 });
      expect(() => load({ CHANGES_SCAN_SECONDS: '4' })).to.throw(ConfigError, /CHANGES_SCAN_SECONDS/);
      expect(() => load({ CHANGES_RETENTION_DAYS: '0' })).to.throw(ConfigError, /CHANGES_RETENTION_DAYS/);
    });

    it('keeps the log in changes/ beside CLIENTS_FILE on the local folder store, in memory on the embedded default', function () {
      expect(load({ DATA_DIR: '/srv/data', CLIENTS_FILE: '/home/gateway/clients.json' }).changes.store).to.deep.equal({ kind: 'folder', dir: '/home/gateway/changes' });
      expect(load({}).changes.store.kind).to.equal('memory');
    });

    it("uses the account's table endpoint with AZURE_STORAGE_ACCOUNT_URL, unless AZURE_STORAGE_TABLE_URL names another", function () {
      expect(load({ ...account, AZURE_STORAGE_ACCOUNT_URL: 'https://acct.blob.core.windows.net/' }).changes.store).to.deep.equal({
        kind: 'table-url',
        tableUrl: 'https://acct.table.core.windows.net',
      });
      expect(
        load({ ...account, AZURE_STORAGE_ACCOUNT_URL: 'https://acct.blob.core.windows.net', AZURE_STORAGE_TABLE_URL: 'https://other.table.core.windows.net/' }).changes.store,
      ).to.deep.equal({ kind: 'table-url', tableUrl: 'https://other.table.core.windows.net' });
      expect(() => load({ ...account, AZURE_STORAGE_ACCOUNT_URL: 'https://storage.example.net' })).to.throw(ConfigError, /AZURE_STORAGE_TABLE_URL: is required/);
    });

    it("uses the connection string's TableEndpoint, or its blob endpoint's host as .table.", function () {
      const named = 'AccountName=a;AccountKey=k;BlobEndpoint=http://127.0.0.1:1/a;TableEndpoint=http://127.0.0.1:2/a;';
      expect(load({ ...account, AZURE_STORAGE_CONNECTION_STRING: named }).changes.store).to.deep.equal({ kind: 'table-connection-string', connectionString: named });
      const sas = 'BlobEndpoint=https://acct.blob.core.windows.net;SharedAccessSignature=sv=2022-11-02&sig=x';
      expect(load({ ...account, AZURE_STORAGE_CONNECTION_STRING: sas }).changes.store).to.deep.equal({
        kind: 'table-connection-string',
        connectionString: `${sas};TableEndpoint=https://acct.table.core.windows.net;`,
      });
      expect(load({ ...account, AZURE_STORAGE_CONNECTION_STRING: 'AccountName=a;AccountKey=k;BlobEndpoint=http://127.0.0.1:1/a;' }).changes.store.kind).to.equal('memory');
      expect(() => load({ ...account, AZURE_STORAGE_CONNECTION_STRING: named, AZURE_STORAGE_TABLE_URL: 'https://x.table.core.windows.net' })).to.throw(
        ConfigError,
        /AZURE_STORAGE_TABLE_URL: applies only with AZURE_STORAGE_ACCOUNT_URL/,
      );
    });
  });

  describe('PORTAL', function () {
    it('is on by default, and off with PORTAL=off', function () {
      expect(load({}).portal).to.equal(true);
      expect(load({ PORTAL: 'on' }).portal).to.equal(true);
      expect(load({ PORTAL: 'off' }).portal).to.equal(false);
    });
    it('fails start-up naming PORTAL for any other value', function () {
      expectConfigError({ PORTAL: 'yes' }, 'PORTAL', /on, off/);
    });
  });

  describe('DOWNLOAD_LINKS', function () {
    const azure = { AZURE_STORAGE_CONTAINER: 'data', CLIENTS_FILE: '/etc/gateway/clients.json' };
    it('is off by default, with links lasting 300 seconds when on', function () {
      expect(load({}).downloadLinks).to.equal(false);
      expect(load({ DOWNLOAD_LINKS: 'on' })).to.include({ downloadLinks: true, downloadLinkTtlSeconds: 300 });
    });
    it('accepts an account key connection string, Azurite\'s shorthand and a managed identity', function () {
      for (const storage of [
        { AZURE_STORAGE_CONNECTION_STRING: 'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.windows.net' },
        { AZURE_STORAGE_CONNECTION_STRING: 'UseDevelopmentStorage=true' },
        { AZURE_STORAGE_ACCOUNT_URL: 'https://acct.blob.core.windows.net' },
      ]) {
        expect(load({ ...azure, ...storage, DOWNLOAD_LINKS: 'on' }).downloadLinks).to.equal(true);
      }
    });
    it('refuses a SAS connection string, which cannot sign links, and values other than on and off', function () {
      expectConfigError(
        { ...azure, AZURE_STORAGE_CONNECTION_STRING: 'BlobEndpoint=https://acct.blob.core.windows.net;SharedAccessSignature=sv=2022&sig=x', DOWNLOAD_LINKS: 'on' },
        'DOWNLOAD_LINKS',
        /AccountKey/,
      );
      expectConfigError({ DOWNLOAD_LINKS: 'yes' }, 'DOWNLOAD_LINKS', /on|off/);
      expectConfigError({ DOWNLOAD_LINK_TTL_SECONDS: '5' }, 'DOWNLOAD_LINK_TTL_SECONDS', /10/);
    });
  });

  describe('with no configuration at all', function () {
    it('serves the bundled sample data on port 3000 with the documented defaults', function () {
      const config = load({});
      expect(config.storage).to.deep.equal({ kind: 'local', dataDir: sample, bundledSample: true });
      expect(config).to.include({
        port: 3000,
        clientsFile: undefined,
        tokenSigningKeyIsEphemeral: true,
        tokenTtlSeconds: 3600,
        indexRefreshSeconds: 60,
        storageTimeoutSeconds: 30,
        downloadRateLimit: 120,
        downloadRateWindowSeconds: 60,
        tokenFailureLimit: 10,
        tokenFailureWindowSeconds: 900,
        trustProxy: false,
        logLevel: 'info',
      });
    });
  });

  it('serves a local folder given by DATA_DIR, resolved to an absolute path', function () {
    const config = load({ DATA_DIR: 'data', CLIENTS_FILE: 'clients.json' });
    expect(config.storage.kind).to.equal('local');
    expect(config.storage).to.include({ bundledSample: false, dataDir: `${process.cwd()}/data` });
    expect(config.clientsFile).to.equal(`${process.cwd()}/clients.json`);
  });

  it('serves Azure Blob Storage from a connection string and container', function () {
    const connectionString = 'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.windows.net';
    const config = load({ AZURE_STORAGE_CONNECTION_STRING: connectionString, AZURE_STORAGE_CONTAINER: 'data-files', CLIENTS_FILE: '/c.json' });
    expect(config.storage).to.deep.equal({ kind: 'azure-connection-string', connectionString, container: 'data-files' });
  });

  it('serves Azure Blob Storage with managed identity from an account URL', function () {
    const config = load({ AZURE_STORAGE_ACCOUNT_URL: 'https://acct.blob.core.windows.net', AZURE_STORAGE_CONTAINER: 'data', CLIENTS_FILE: '/c.json' });
    expect(config.storage).to.deep.equal({ kind: 'azure-managed-identity', accountUrl: 'https://acct.blob.core.windows.net', container: 'data' });
  });

  it('reads every tunable', function () {
    const config = load({
      PORT: '8080',
      TOKEN_SIGNING_KEY: 'k'.repeat(32),
      TOKEN_TTL_SECONDS: '60',
      INDEX_REFRESH_SECONDS: '5',
      STORAGE_TIMEOUT_SECONDS: '10',
      DOWNLOAD_RATE_LIMIT: '10',
      DOWNLOAD_RATE_WINDOW_SECONDS: '30',
      TOKEN_FAILURE_LIMIT: '3',
      TOKEN_FAILURE_WINDOW_SECONDS: '120',
      TRUST_PROXY: '1',
      LOG_LEVEL: 'warn',
    });
    expect(config).to.include({
      port: 8080,
      tokenSigningKeyIsEphemeral: false,
      tokenTtlSeconds: 60,
      indexRefreshSeconds: 5,
      storageTimeoutSeconds: 10,
      downloadRateLimit: 10,
      downloadRateWindowSeconds: 30,
      tokenFailureLimit: 3,
      tokenFailureWindowSeconds: 120,
      trustProxy: 1,
      logLevel: 'warn',
    });
  });

  it('reads the operations settings: Redis, the store-error policy, readiness, drain, audit, metrics, telemetry', function () {
    const config = load({
      REDIS_URL: 'rediss://:key@cache.westeurope.redis.azure.net:10000',
      REDIS_KEY_PREFIX: 'gw1:',
      RATE_LIMIT_ON_STORE_ERROR: 'deny',
      READY_CACHE_SECONDS: '2',
      SHUTDOWN_GRACE_SECONDS: '45',
      AUDIT_LOG_FILE: 'audit/downloads.jsonl',
      METRICS_TOKEN: 'metrics-token-0123456789',
      APPLICATIONINSIGHTS_CONNECTION_STRING: 'InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=https://westeurope-5.in.applicationinsights.azure.com/',
    });
    expect(config.redis).to.deep.equal({ url: 'rediss://:key@cache.westeurope.redis.azure.net:10000', keyPrefix: 'gw1:', connectTimeoutMs: 5000, commandTimeoutMs: 500 });
    expect(config).to.include({ rateLimitOnStoreError: 'deny', readyCacheSeconds: 2, shutdownGraceSeconds: 45, metricsToken: 'metrics-token-0123456789' });
    expect(config.auditLogFile).to.equal(`${process.cwd()}/audit/downloads.jsonl`);
    expect(config.applicationInsightsConnectionString).to.match(/^InstrumentationKey=/);
  });

  it('defaults to memory for the limits, allow on store errors, a 5 s readiness cache and a 30 s drain', function () {
    expect(load({})).to.include({ redis: undefined, rateLimitOnStoreError: 'allow', readyCacheSeconds: 5, shutdownGraceSeconds: 30, metricsToken: undefined });
  });

  it('makes a random 48-byte signing key, different at every start, when TOKEN_SIGNING_KEY is unset', function () {
    const [first, second] = [load({}), load({})];
    expect(first.tokenSigningKey.byteLength).to.equal(48);
    expect(Buffer.from(first.tokenSigningKey).equals(Buffer.from(second.tokenSigningKey))).to.equal(false);
  });

  it('uses TOKEN_SIGNING_KEY as UTF-8 bytes when set', function () {
    const config = load({ TOKEN_SIGNING_KEY: 'k'.repeat(32) });
    expect(Buffer.from(config.tokenSigningKey).toString('utf8')).to.equal('k'.repeat(32));
    expect(config.tokenSigningKeyIsEphemeral).to.equal(false);
  });

  describe('stops start-up with a message naming the variable', function () {
    const cases: Array<[string, Record<string, string>, string, RegExp]> = [
      ['a port that is not a number', { PORT: 'abc' }, 'PORT', /whole number/],
      ['a port out of range', { PORT: '70000' }, 'PORT', /between 0 and 65535/],
      ['a zero TTL', { TOKEN_TTL_SECONDS: '0' }, 'TOKEN_TTL_SECONDS', /between 1 and 86400/],
      ['a fractional rate limit', { DOWNLOAD_RATE_LIMIT: '1.5' }, 'DOWNLOAD_RATE_LIMIT', /whole number/],
      ['a zero rate window', { DOWNLOAD_RATE_WINDOW_SECONDS: '0' }, 'DOWNLOAD_RATE_WINDOW_SECONDS', /between 1/],
      ['a short signing key', { TOKEN_SIGNING_KEY: 'short' }, 'TOKEN_SIGNING_KEY', /at least 32 bytes/],
      ['an unknown log level', { LOG_LEVEL: 'loud' }, 'LOG_LEVEL', /one of/],
      ['own data without a client registry', { DATA_DIR: '/data' }, 'CLIENTS_FILE', /required/],
      ['Azure without a client registry', { AZURE_STORAGE_CONNECTION_STRING: 'UseDevelopmentStorage=true', AZURE_STORAGE_CONTAINER: 'abc' }, 'CLIENTS_FILE', /required/],
      ['Azure without a container', { AZURE_STORAGE_ACCOUNT_URL: 'https://a.blob.core.windows.net', CLIENTS_FILE: '/c' }, 'AZURE_STORAGE_CONTAINER', /required/],
      ['an invalid container name', { AZURE_STORAGE_CONNECTION_STRING: 'UseDevelopmentStorage=true', AZURE_STORAGE_CONTAINER: 'Bad_Name', CLIENTS_FILE: '/c' }, 'AZURE_STORAGE_CONTAINER', /not a valid container name/],
      ['a container without an account', { AZURE_STORAGE_CONTAINER: 'data' }, 'AZURE_STORAGE_CONTAINER', /needs AZURE_STORAGE_CONNECTION_STRING/],
      ['both Azure credentials', { AZURE_STORAGE_CONNECTION_STRING: 'UseDevelopmentStorage=true', AZURE_STORAGE_ACCOUNT_URL: 'https://a.blob.core.windows.net', AZURE_STORAGE_CONTAINER: 'data' }, 'AZURE_STORAGE_ACCOUNT_URL', /not both/],
      ['Azure and a local folder', { AZURE_STORAGE_CONNECTION_STRING: 'UseDevelopmentStorage=true', AZURE_STORAGE_CONTAINER: 'data', DATA_DIR: '/d' }, 'DATA_DIR', /cannot be combined/],
      ['an account URL that is not one', { AZURE_STORAGE_ACCOUNT_URL: 'acct', AZURE_STORAGE_CONTAINER: 'data', CLIENTS_FILE: '/c' }, 'AZURE_STORAGE_ACCOUNT_URL', /account URL/],
      ['a connection string that is not one', { AZURE_STORAGE_CONNECTION_STRING: 'hello', AZURE_STORAGE_CONTAINER: 'data', CLIENTS_FILE: '/c' }, 'AZURE_STORAGE_CONNECTION_STRING', /connection string/],
      ['a Redis URL that is not one', { REDIS_URL: 'localhost:6379' }, 'REDIS_URL', /redis:\/\/ or rediss:\/\//],
      ['a Redis URL of another scheme', { REDIS_URL: 'http://cache:6379' }, 'REDIS_URL', /must start with redis:\/\/ or rediss:\/\//],
      ['a Redis key prefix with a space', { REDIS_KEY_PREFIX: 'my prefix' }, 'REDIS_KEY_PREFIX', /1-64 characters/],
      ['an unknown store-error policy', { RATE_LIMIT_ON_STORE_ERROR: 'maybe' }, 'RATE_LIMIT_ON_STORE_ERROR', /one of allow, deny/],
      ['a short metrics token', { METRICS_TOKEN: 'short' }, 'METRICS_TOKEN', /16 to 512/],
      ['an Application Insights string without a key', { APPLICATIONINSIGHTS_CONNECTION_STRING: 'IngestionEndpoint=https://x/' }, 'APPLICATIONINSIGHTS_CONNECTION_STRING', /InstrumentationKey/],
      ['a public base URL with a path', { PUBLIC_BASE_URL: 'https://files.example.net/api' }, 'PUBLIC_BASE_URL', /origin/],
      ['a public base URL with a query', { PUBLIC_BASE_URL: 'https://files.example.net/?x=1' }, 'PUBLIC_BASE_URL', /origin/],
      ['a public base URL with credentials', { PUBLIC_BASE_URL: 'https://user:pw@files.example.net' }, 'PUBLIC_BASE_URL', /origin/],
      ['a public base URL of another scheme', { PUBLIC_BASE_URL: 'ftp://files.example.net' }, 'PUBLIC_BASE_URL', /origin/],
      ['headers allowed longer than the whole request', { HEADERS_TIMEOUT_SECONDS: '40', REQUEST_TIMEOUT_SECONDS: '30' }, 'HEADERS_TIMEOUT_SECONDS', /must not exceed REQUEST_TIMEOUT_SECONDS/],
      // App Service leaves a reference it could not resolve as its literal text.
      ['an unresolved Key Vault reference', { TOKEN_SIGNING_KEY: '@Microsoft.KeyVault(SecretUri=https://v.vault.azure.net/secrets/key/)' }, 'TOKEN_SIGNING_KEY', /unresolved Key Vault reference/],
    ];
    for (const [condition, env, variable, message] of cases) {
      it(`for ${condition}`, function () {
        expectConfigError(env, variable, message);
      });
    }

    // Any setting of the Azure template may be a Key Vault reference, and so may any other.
    for (const variable of CONFIG_VARIABLES) {
      it(`for an unresolved Key Vault reference in ${variable}`, function () {
        expectConfigError({ [variable]: '@Microsoft.KeyVault(VaultName=vault;SecretName=secret)' }, variable, /unresolved Key Vault reference/);
      });
    }
  });

  describe('PUBLIC_BASE_URL', function () {
    it('is unset by default: the discovery documents then name the origin of each request', function () {
      expect(load({}).publicBaseUrl).to.equal(undefined);
    });

    for (const [given, read] of [
      ['https://files.example.net', 'https://files.example.net'],
      ['https://files.example.net/', 'https://files.example.net'],
      ['https://dfg-prod.azurewebsites.net:443', 'https://dfg-prod.azurewebsites.net:443'],
      ['http://127.0.0.1:3000', 'http://127.0.0.1:3000'],
      ['https://[2001:db8::1]', 'https://[2001:db8::1]'],
    ]) {
      it(`reads ${given} as the origin ${read}, without a trailing slash`, function () {
        expect(load({ PUBLIC_BASE_URL: given ?? '' }).publicBaseUrl).to.equal(read);
      });
    }
  });
});
