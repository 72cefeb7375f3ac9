import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import { pino, type Logger } from 'pino';
import { InMemoryClientRegistry } from '../adapters/clients/in-memory-client-registry.js';
import { JsonClientRegistry } from '../adapters/clients/json-client-registry.js';
import { generateSecret, hashSecret } from '../adapters/clients/secret-hash.js';
import type { DirectLinkRequest } from '../application/downloads.js';
import { fromAccountUrl, fromConnectionString, type AzureBlobStore } from '../adapters/storage/azure-blob-store.js';
import { LocalFolderBlobStore } from '../adapters/storage/local-folder-blob-store.js';
import type { BlobStore, ClientRegistry } from '../domain/ports.js';
import { createAuditTrail } from '../adapters/audit/audit-trail.js';
import { createHttpServer } from '../adapters/http/http-server.js';
import { connectRedis, pingRedis } from '../adapters/redis/redis-client.js';
import { redisCountedVersions } from '../adapters/redis/redis-counted-versions.js';
import { RedisQuotaLedger } from '../adapters/redis/redis-quota-ledger.js';
import { redisStores } from '../adapters/redis/redis-rate-limit-stores.js';
import { GatewayMetrics } from '../adapters/metrics/gateway-metrics.js';
import { FileQuotaJournal } from '../adapters/quota/file-quota-journal.js';
import {
  azureChangeStoresFromAccountUrl,
  azureChangeStoresFromConnectionString,
  folderChangeStores,
  memoryChangeStores,
  type ChangeStores,
} from '../adapters/changes/change-stores.js';
import type { GatewayConfig } from './config.js';
import { createGateway, runLeaderDuties, systemClock, WEBHOOK_TICK_MS } from './create-app.js';
import { webhookRegistryFor } from './webhook-registry.js';
import { printDemoInstructions } from './demo-instructions.js';
import { drainOnSignals } from './graceful-shutdown.js';
import { logReadinessProblems, Readiness } from './readiness.js';
import type { Telemetry } from './telemetry.js';

const demoClientId = 'demo';
/** How long the shutdown waits for a scan in progress before leaving the lease to expire. */
const LEADER_STOP_TIMEOUT_MS = 5_000;

/** The store, and storage's own direct links when it can make them (Azure: SAS URLs). */
function storeFor(config: GatewayConfig): { store: BlobStore; storageLinks?: (link: DirectLinkRequest) => Promise<string> } {
  const azureOptions = { responseTimeoutMs: config.storageTimeoutSeconds * 1000 };
  const withSasLinks = (store: AzureBlobStore) => ({
    store,
    storageLinks: (link: DirectLinkRequest) => store.directLink(link),
  });
  switch (config.storage.kind) {
    case 'local':
      return { store: new LocalFolderBlobStore(config.storage.dataDir) };
    case 'azure-connection-string':
      return withSasLinks(fromConnectionString(config.storage.connectionString, config.storage.container, azureOptions));
    case 'azure-managed-identity':
      return withSasLinks(fromAccountUrl(config.storage.accountUrl, config.storage.container, azureOptions));
  }
}

/** Where the change feed keeps its log, checksums, scan state and lease (see `ChangeStoreConfig`). */
function changeStoresFor(config: GatewayConfig, logger: Logger): ChangeStores {
  const timeoutMs = config.storageTimeoutSeconds * 1000;
  const { store } = config.changes;
  switch (store.kind) {
    case 'folder':
      return folderChangeStores(store.dir, systemClock);
    case 'memory':
      if (config.storage.kind !== 'local') logger.warn(`change feed kept in this instance's memory only: ${store.reason}; name a TableEndpoint in AZURE_STORAGE_CONNECTION_STRING`);
      return memoryChangeStores();
    case 'table-connection-string':
      return azureChangeStoresFromConnectionString(
        config.storage.kind === 'azure-connection-string' ? config.storage.connectionString : store.connectionString,
        store.connectionString,
        systemClock,
        timeoutMs,
      );
    case 'table-url':
      if (config.storage.kind !== 'azure-managed-identity') throw new Error('a table URL needs the account URL');
      return azureChangeStoresFromAccountUrl(config.storage.accountUrl, store.tableUrl, systemClock, timeoutMs);
  }
}

async function registryFor(config: GatewayConfig, logger: Logger): Promise<{ registry: ClientRegistry; demoSecret?: string }> {
  if (config.clientsFile !== undefined) {
    const registry = new JsonClientRegistry(config.clientsFile, {
      recheckMs: config.clientsFileRecheckSeconds * 1000,
      onUnreadable: (error) => logger.error({ err: error }, 'client registry unreadable: serving the last good version until the file is fixed'),
    });
    return { registry };
  }
  const demoSecret = generateSecret();
  const registry = new InMemoryClientRegistry([
    { clientId: demoClientId, secretHash: await hashSecret(demoSecret), indexPath: `indexes/${demoClientId}.csv`, enabled: true },
  ]);
  return { registry, demoSecret };
}

/**
 * The quota journal beside Redis, when there is a folder for it. Each process writes files of its
 * own (host, process id and a random part), so no two processes ever append to the same file.
 */
function quotaJournalFor(config: GatewayConfig, logger: Logger): FileQuotaJournal | undefined {
  if (config.quotaJournalDir === undefined) return undefined;
  const host = hostname().replace(/[^A-Za-z0-9-]/g, '-').slice(0, 50) || 'host';
  return new FileQuotaJournal({
    dir: config.quotaJournalDir,
    writerName: `${host}-${process.pid}-${randomBytes(3).toString('hex')}`,
    onMaintenanceError: (error, action) => logger.warn({ err: error }, `quota journal: ${action} failed; the records are all kept, the folder is only bigger`),
  });
}

/**
 * Runs the gateway with a validated configuration: the adapters it names, the app, the HTTP server,
 * and the drain on SIGTERM and SIGINT. Storage or Redis being unreachable does not stop it: the
 * instance starts, `/ready` says what is missing, and it connects when they come up.
 */
export async function runServer(config: GatewayConfig, telemetry: Telemetry | undefined): Promise<void> {
  // One stdout stream for logs and audit records, so their lines never interleave.
  const stdout = pino.destination(1);
  const logger = pino(
    { level: config.logLevel, timestamp: pino.stdTimeFunctions.isoTime, redact: ['req.headers.authorization', 'req.headers.cookie'] },
    stdout,
  );
  if (config.tokenSigningKeyIsEphemeral) {
    logger.warn('TOKEN_SIGNING_KEY is not set: using a random key, so tokens (and gateway-signed download links) die with this process and other instances reject them');
  }
  const audit = createAuditTrail(stdout, config.auditLogFile);
  const redis =
    config.redis === undefined
      ? undefined
      : connectRedis({
          url: config.redis.url,
          connectTimeoutMs: config.redis.connectTimeoutMs,
          commandTimeoutMs: config.redis.commandTimeoutMs,
          logger,
        });
  const redisProblem = redis === undefined ? undefined : () => pingRedis(redis);
  const metrics = new GatewayMetrics();
  const quotaJournal = redis === undefined ? undefined : quotaJournalFor(config, logger);
  const { registry, demoSecret } = await registryFor(config, logger);
  const { store, storageLinks } = storeFor(config);
  const readiness = new Readiness({
    store,
    registry,
    ...(redisProblem !== undefined && { redisProblem }),
    cacheMs: config.readyCacheSeconds * 1000,
    clock: systemClock,
    onProblem: logReadinessProblems(logger),
  });
  const { app, settled, releaseWaits, leaderDuties, webhookDelivery } = await createGateway(config, {
    store,
    registry,
    webhookRegistry: webhookRegistryFor(config),
    logger,
    changeStores: changeStoresFor(config, logger),
    audit,
    readiness,
    metrics,
    ...(storageLinks !== undefined && { storageLinks }),
    ...(redis !== undefined &&
      config.redis !== undefined && {
        rateLimitStores: redisStores(redis, config.redis.keyPrefix),
        countedVersions: redisCountedVersions(redis, config.redis.keyPrefix, logger),
        quotaLedger: new RedisQuotaLedger(
          redis,
          config.redis.keyPrefix,
          quotaJournal && {
            journal: quotaJournal,
            onJournalError: config.rateLimitOnStoreError,
            onJournalFailure: (error, entry, kept) =>
              logger.error(
                { err: error, clientId: entry.clientId, period: entry.period, delta: entry.delta },
                kept ? 'quota journal unwritable: the change is counted in Redis only' : 'quota journal unwritable: the reservation is taken back and refused',
              ),
            onRebuilt: ({ period, clients }) => {
              logger.warn({ period, clients }, `quota ledger reset detected: rebuilt ${clients} clients of ${period} from the journal`);
              metrics.quotaLedgerRebuilt(clients);
            },
          },
        ),
      }),
  });

  const server: Server = createHttpServer(app, {
    logger,
    headersTimeoutMs: config.headersTimeoutSeconds * 1000,
    requestTimeoutMs: config.requestTimeoutSeconds * 1000,
    maxConnections: config.maxConnections,
  }).listen(config.port);
  server.once('listening', () => {
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : config.port;
    logger.info({ port, storage: config.storage.kind, redis: redis !== undefined, telemetry: telemetry !== undefined }, 'data file gateway listening');
    if (demoSecret !== undefined) printDemoInstructions(process.stdout, { port, clientId: demoClientId, clientSecret: demoSecret });
  });
  server.once('error', (error) => {
    logger.fatal({ err: error }, 'could not listen');
    stdout.flushSync();
    process.exit(1);
  });
  // Every instance tries the scanner lease; its holder scans, prunes and runs the duties after each scan.
  const duties = runLeaderDuties(leaderDuties, logger);
  // Between scans too, the holder delivers every few seconds: the retries keep WEBHOOK_RETRY_SECONDS's delays.
  const deliveries = setInterval(() => {
    if (leaderDuties.leading) void webhookDelivery.tick().catch((error: unknown) => logger.error({ err: error }, 'webhook delivery: tick failed'));
  }, WEBHOOK_TICK_MS);
  deliveries.unref();
  drainOnSignals({
    server,
    readiness,
    graceMs: config.shutdownGraceSeconds * 1000,
    logger,
    onDrain: releaseWaits,
    cleanUp: async () => {
      // Downloads the drain cut give their unsent bytes back and write their audit records first.
      await settled();
      clearInterval(deliveries);
      // Webhook lanes end their attempt under way (each at most 10 s) before the lease goes to another instance.
      await Promise.race([webhookDelivery.idle(), new Promise((resolve) => setTimeout(resolve, LEADER_STOP_TIMEOUT_MS).unref())]);
      // The scan in progress finishes (or is left to the lease's expiry) and the lease is released at once.
      await duties.stop(LEADER_STOP_TIMEOUT_MS);
      await audit.close();
      await quotaJournal?.close();
      redis?.disconnect();
      await telemetry?.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'telemetry could not be flushed'));
      stdout.flushSync();
    },
    exit: (code) => process.exit(code),
  });
}
