import { readFile } from 'node:fs/promises';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { auditEvents, noAudit, type AuditTrail } from '../adapters/audit/audit-trail.js';
import { ScryptSecretHasher } from '../adapters/clients/secret-hash.js';
import type { DirectLinks } from '../adapters/http/download-handler.js';
import { createHttpApp, type HttpAppDependencies } from '../adapters/http/http-app.js';
import { builtPortalFiles, portalLinkTtlMs, type PortalSettings } from '../adapters/http/portal.js';
import { SignedLinks } from '../adapters/http/signed-links.js';
import { ListCursors } from '../adapters/http/list-cursors.js';
import { ChangeCursors } from '../adapters/http/change-cursors.js';
import { loadOpenApi } from '../adapters/http/openapi-contract.js';
import { memoryCountedVersions } from '../adapters/limits/memory-counted-versions.js';
import { createDownloadLimit, createRequestLimit } from '../adapters/limits/window-limits.js';
import { boundedMemoryStores } from '../adapters/limits/memory-rate-limit-store.js';
import { resilientStores } from '../adapters/limits/resilient-stores.js';
import { VerificationQueue, verificationQueueBounds } from '../adapters/http/verification-queue.js';
import { MemoryQuotaLedger } from '../adapters/quota/memory-quota-ledger.js';
import { GatewayMetrics } from '../adapters/metrics/gateway-metrics.js';
import { InstrumentedBlobStore } from '../adapters/metrics/instrumented-blob-store.js';
import { LruBoundedMemory } from '../adapters/index/lru-bounded-memory.js';
import { BlobIndexSource } from '../adapters/index/blob-index-source.js';
import { createS3Api } from '../adapters/s3/s3-api.js';
import { S3Credentials } from '../adapters/s3/s3-credentials.js';
import { JoseSigner } from '../adapters/signing/jose-signer.js';
import { JwtTokenStore } from '../adapters/tokens/jwt-token-store.js';
import { memoryChangeStores, type ChangeStores } from '../adapters/changes/change-stores.js';
import { NodeContentHasher } from '../adapters/changes/node-content-hasher.js';
import { ChangeScanner } from '../application/change-scanner.js';
import { LeaderDuties } from '../application/leader-duties.js';
import { CatalogCache } from '../domain/catalog-cache.js';
import { ClientAuthentication } from '../application/client-authentication.js';
import { Entitlement } from '../domain/entitlement.js';
import { ChangeScannerOverBudget } from '../domain/errors.js';
import { Downloads, type DirectLinkRequest, type LinkMakers } from '../application/downloads.js';
import { ChangeFeed, type Schedule } from '../application/change-feed.js';
import { EventBus } from '../application/events.js';
import { FileAccess } from '../application/file-access.js';
import { Metering } from '../application/metering.js';
import { MonthlyQuota } from '../domain/monthly-quota.js';
import type {
  BlobStore,
  ChangeLog,
  ChecksumStore,
  ClientRegistry,
  Clock,
  CountedVersionsFactory,
  QuotaLedger,
  RateLimitStores,
  SecretHasher,
  Signer,
  WebhookRegistry,
  WebhookSender,
  WebhookTargets,
} from '../domain/ports.js';
import { MemoryWebhookRegistry } from '../adapters/webhooks/memory-webhook-registry.js';
import { NodeWebhookSender } from '../adapters/webhooks/node-webhook-sender.js';
import { WebhookTargetPolicy } from '../adapters/webhooks/webhook-targets.js';
import { WebhookDelivery } from '../application/webhook-delivery.js';
import { Webhooks } from '../application/webhooks.js';
import { ROWS_PER_SLICE } from '../domain/slices.js';
import type { GatewayConfig } from './config.js';
import { builtPortalDir, openApiDefinitionPath } from './package-root.js';
import { logReadinessProblems, Readiness } from './readiness.js';

/** The adapters the app runs on; every setting comes from the validated `GatewayConfig`. */
export interface AppAdapters {
  readonly store: BlobStore;
  readonly registry: ClientRegistry;
  readonly logger: Logger;
  /** The system clock unless a test fixes the time. */
  readonly clock?: Clock;
  /** How client secrets are verified; scrypt (SECRET_HASH_CONCURRENCY at once) when absent. */
  readonly secrets?: SecretHasher;
  /** Where rate-limit counts live; this process's memory when absent. */
  readonly rateLimitStores?: RateLimitStores;
  /**
   * Where the file versions counted within the download window live (one download per client and
   * file version); this process's memory when absent.
   */
  readonly countedVersions?: CountedVersionsFactory;
  /** Where monthly quota counts live (Redis for a fleet); this process's memory when absent. */
  readonly quotaLedger?: QuotaLedger;
  /** Where audit records go; nowhere when absent (tests that do not look at them). */
  readonly audit?: AuditTrail;
  /** The instance's metrics; a fresh set when absent. */
  readonly metrics?: GatewayMetrics;
  /** What Redis answers to, when the limits live there (for readiness). */
  readonly redisProblem?: () => Promise<string | undefined>;
  /** Readiness of the instance; built over the store and registry when absent. */
  readonly readiness?: Readiness;
  /**
   * Makes storage's own direct link to a file (Azure: a SAS URL), when DOWNLOAD_LINKS=on; the
   * gateway signs and serves its own links when absent (the local folder store).
   */
  readonly storageLinks?: (link: DirectLinkRequest) => Promise<string>;
  /** Where webhook endpoints and their delivery state live (Azure Table, a file beside CLIENTS_FILE); this process's memory when absent. */
  readonly webhookRegistry?: WebhookRegistry;
  /** How webhooks are sent; node:http(s) with the address guard (WEBHOOK_ALLOW_PRIVATE) when absent. */
  readonly webhookSender?: WebhookSender;
  /** Which webhook URLs may be registered; https to public addresses (unless WEBHOOK_ALLOW_PRIVATE=on) when absent. */
  readonly webhookTargets?: WebhookTargets;
  /** How often the feed's one watcher reads the log's head while requests wait; every second when absent. */
  readonly changesPollMs?: number;
  /** How long a check of an index or of storage waits for the change log's position; 2 s when absent. */
  readonly changesPositionWaitMs?: number;
  /**
   * Where the change feed keeps its log (which the feed reads and webhooks deliver from), the
   * SHA-256 of file versions, the scan state and the scanner lease, always together (CHANGES_*:
   * Table Storage on Azure, a folder locally); this process's memory when absent.
   */
  readonly changeStores?: ChangeStores;
}

/** How often the long polls' one watcher reads the change log's head: events reach waiting clients within it. */
const changesPollMs = 1000;
/** How long a check of an index or of storage waits for the change log's position before going on without a new one. */
const changesPositionWaitMs = 2000;
/** Long polls one instance holds at once, and one client of them: more are answered at once, empty. */
const changesWaitBounds = { maxWaiters: 10_000, maxWaitersPerClient: 16 };

/** The system's timers for the feed's waits, unref'd: a pending wait never keeps the process alive. */
const systemSchedule: Schedule = (ms, run) => {
  const timer = setTimeout(run, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

export const systemClock: Clock = { now: () => new Date() };

/** The wired gateway: the Express app, and what the drain waits for before the audit is closed. */
export interface Gateway {
  readonly app: Express;
  /** Resolves once every download answered so far has settled (its refund done, its audit record written). */
  readonly settled: () => Promise<void>;
  /**
   * Delivers the change log to the webhook endpoints: `tick()` is one round. The instance that holds
   * the scanner's lease calls it after each scan (its leader duties), so one instance delivers.
   */
  readonly webhookDelivery: WebhookDelivery;
  /** Ends every long poll of the feed now, and makes later ones answer at once: the instance is draining. */
  readonly releaseWaits: () => void;
  /** The fleet's ordered log of every client's changes (what `GET /changes` and webhooks read). */
  readonly changeLog: ChangeLog;
  /** The SHA-256 of file versions, as the scanner computed them (`sha256` of `/info`, `/list`, S3). */
  readonly checksums: ChecksumStore;
  /**
   * What the holder of the scanner lease does: `tick()` renews the lease and scans when due (the
   * server calls it on a timer, see `runLeaderDuties`); `afterScan(duty)` adds a duty the holder runs after each scan.
   */
  readonly leaderDuties: LeaderDuties;
}

/**
 * Wires the gateway by hand: domain services over the given adapters, behind the Express app.
 * Returns the app without listening, so tests can start it on port 0.
 */
export async function createApp(config: GatewayConfig, adapters: AppAdapters): Promise<Express> {
  return (await createGateway(config, adapters)).app;
}

export async function createGateway(config: GatewayConfig, adapters: AppAdapters): Promise<Gateway> {
  const { registry, logger } = adapters;
  const clock = adapters.clock ?? systemClock;
  const metrics = adapters.metrics ?? new GatewayMetrics();
  const store = new InstrumentedBlobStore(adapters.store, metrics);
  const readiness =
    adapters.readiness ??
    new Readiness({
      store,
      registry,
      ...(adapters.redisProblem !== undefined && { redisProblem: adapters.redisProblem }),
      cacheMs: config.readyCacheSeconds * 1000,
      clock,
      onProblem: logReadinessProblems(logger),
    });
  const changeStores = adapters.changeStores ?? memoryChangeStores();
  const { checksums, log: changeLog } = changeStores;
  const changes = new ChangeFeed({
    log: changeLog,
    checksums,
    schedule: systemSchedule,
    pollMs: adapters.changesPollMs ?? changesPollMs,
    ...changesWaitBounds,
  });
  // Read before each check of an index or of which files exist: the position a listing is known to
  // include. Bounded: a change log that hangs delays no catalog (nor the downloads behind it) past
  // it; the check goes on with the older position it had, and listings wait for a new one.
  const positionWaitMs = adapters.changesPositionWaitMs ?? changesPositionWaitMs;
  const changesPosition = (): Promise<number | undefined> =>
    new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        changes.abandonPositionRead();
        reject(new Error(`the change log gave no position in ${positionWaitMs} ms`));
      }, positionWaitMs);
      timer.unref();
      changes.position().then(resolve, reject).finally(() => clearTimeout(timer));
    }).catch((error: unknown) => {
      logger.warn({ err: error }, "the change log's position could not be read; listings wait for it");
      return undefined;
    });
  const memory = new LruBoundedMemory(config.catalogCacheBytes);
  metrics.observeCatalogMemory(() => memory.stats());
  const catalogs = new CatalogCache({
    source: new BlobIndexSource(store, config.indexMaxBytes),
    memory,
    clock,
    refreshAfterMs: config.indexRefreshSeconds * 1000,
    onWarnings: (indexPath, warnings) => {
      for (const warning of warnings) logger.warn({ indexPath, row: warning.row }, `index row skipped: ${warning.message}`);
    },
    onStaleServed: (indexPath, cause) => logger.warn({ indexPath, err: cause }, 'storage failed; serving the last loaded catalog'),
    slices: { yieldToLoop, stepsPerSlice: ROWS_PER_SLICE },
    changesPosition,
  });
  // The one signer: every token, link, session token and cursor, each purpose under its own key.
  const signer = new JoseSigner({ rootKey: config.tokenSigningKey, clock });
  const files = new FileAccess({
    entitlement: new Entitlement(catalogs, clock),
    store,
    clock,
    listCacheMs: config.listCacheSeconds * 1000,
    memory,
    yieldToLoop,
    checksums,
    changesPosition,
  });
  const auth: ClientAuthentication = new ClientAuthentication({
    registry,
    secrets: adapters.secrets ?? new ScryptSecretHasher({ concurrency: config.secretHashConcurrency }),
    tokens: new JwtTokenStore({ signer, clock }),
    tokenLifetimeSeconds: config.tokenTtlSeconds,
    clock,
  });
  const definitionPath = openApiDefinitionPath();
  const { links, signedLinks } = directLinks(config, adapters.storageLinks, signer);
  const verifications = new VerificationQueue({
    concurrency: config.secretHashConcurrency,
    ...verificationQueueBounds(config.secretHashConcurrency),
    onWaiting: (waiting) => metrics.secretVerificationsWaiting(waiting),
    onRefused: (reason) => metrics.secretVerificationRefused(reason),
  });
  const portal = portalSettings(config, links, signedLinks);
  const stores = resilientStores(adapters.rateLimitStores ?? boundedMemoryStores(clock), config.rateLimitOnStoreError, logger, clock);
  const audit = adapters.audit ?? noAudit;
  // What the core reports once final: the audit trail and the metrics follow from it.
  const events = new EventBus();
  events.subscribe(auditEvents(audit));
  events.subscribe(metrics.onEvent);
  const downloadWindowMs = config.downloadRateWindowSeconds * 1000;
  const metering = new Metering({
    limit: createDownloadLimit({ limit: config.downloadRateLimit, windowSeconds: config.downloadRateWindowSeconds, stores, clock }),
    requests: createRequestLimit({ limit: config.requestRateLimit, windowSeconds: config.requestRateWindowSeconds, stores, clock }),
    versions: (adapters.countedVersions ?? memoryCountedVersions(clock))(downloadWindowMs),
    quota: new MonthlyQuota(adapters.quotaLedger ?? new MemoryQuotaLedger(clock), clock),
    clock,
    onLedgerError: config.rateLimitOnStoreError,
    events,
  });
  const downloads = new Downloads({ files, metering, events, clock });
  const webhookRegistry = adapters.webhookRegistry ?? new MemoryWebhookRegistry();
  const allowPrivate = config.webhooks.allowPrivate;
  const webhooks = new Webhooks({
    registry: webhookRegistry,
    log: changeLog,
    targets: adapters.webhookTargets ?? new WebhookTargetPolicy({ allowPrivate }),
    signer,
    clock,
  });
  const webhookDelivery = new WebhookDelivery({
    // Asked only while lanes run, once the duties below exist.
    leading: () => leaderDuties.leading,
    registry: webhookRegistry,
    log: changeLog,
    sender: adapters.webhookSender ?? new NodeWebhookSender({ allowPrivate, clock }),
    signer,
    clock,
    retrySeconds: config.webhooks.retrySeconds,
    events,
    onError: (error, endpoint) => logger.warn({ err: error, clientId: endpoint?.clientId, webhookId: endpoint?.id }, 'webhook delivery failed to read or record its state'),
  });
  const idleTimeoutMs = config.downloadIdleTimeoutSeconds * 1000;

  const app = createHttpApp({
    api: await loadOpenApi(definitionPath),
    openApiDocument: await readFile(definitionPath, 'utf8'),
    files,
    auth,
    registry,
    verifications,
    clock,
    logger,
    tokenFailureLimits: {
      perAddress: config.tokenFailureLimit,
      perClient: config.tokenFailureClientLimit,
      windowSeconds: config.tokenFailureWindowSeconds,
      stores,
      clock,
    },
    tokenIssueLimit: { limit: config.tokenIssueLimit, windowSeconds: config.tokenIssueWindowSeconds, stores, clock },
    downloads,
    metering,
    downloadIdleTimeoutMs: idleTimeoutMs,
    events,
    metrics,
    metricsToken: config.metricsToken,
    readiness,
    trustProxy: config.trustProxy,
    links,
    signedLinks: portal?.signedLinks ?? signedLinks,
    portal: portal?.settings,
    publicBaseUrl: config.publicBaseUrl,
    s3: s3Door(config, { files, downloads, metering, auth, clock, idleTimeoutMs, signer }),
    listCursors: new ListCursors(signer),
    keptAnswers: memory,
    webhooks,
    changes,
    changeCursors: new ChangeCursors(signer),
  });
  const leaderDuties = new LeaderDuties({
    lease: changeStores.lease,
    scanner: new ChangeScanner({
      store,
      indexes: new BlobIndexSource(store, config.indexMaxBytes),
      registry,
      log: changeLog,
      checksums,
      hasher: new NodeContentHasher(),
      state: changeStores.state,
      clock,
      backlogBytesPerSecond: BACKLOG_HASH_BYTES_PER_SECOND,
      slices: { yieldToLoop, stepsPerSlice: ROWS_PER_SLICE },
      maxBytes: config.changes.scannerMaxBytes,
    }),
    log: changeLog,
    clock,
    scanEveryMs: config.changes.scanSeconds * 1000,
    retentionMs: config.changes.retentionDays * 24 * 3600 * 1000,
    onError: (error, what) =>
      error instanceof ChangeScannerOverBudget
        ? logger.error({ err: error, heldBytes: error.heldBytes, budgetBytes: error.budgetBytes, ...error.counted }, 'change scanner: over CHANGES_SCANNER_MB')
        : logger.error({ err: error }, `change scanner: ${what} failed`),
    onScan: (report) => {
      if (report.first || report.changes > 0) logger.info({ ...report }, 'change scanner: scan done');
    },
    onLeadership: (held) => logger.info({ held }, held ? 'change scanner: this instance holds the scanner lease' : 'change scanner: lease held elsewhere'),
  });
  // An index the scanner found changed is checked again by the next request on this instance, so its
  // listings show at once what its feed says (other instances within INDEX_REFRESH_SECONDS, and
  // before any refusal: see Entitlement). Before the webhooks are started.
  leaderDuties.afterScan(async ({ report }) => {
    for (const indexPath of report.indexesChanged) catalogs.invalidate(indexPath);
  });
  // The holder of the scanner lease delivers webhooks after each scan, so one instance of the fleet
  // delivers. Started, not awaited: a slow receiver holds its own lane, never the next scan.
  leaderDuties.afterScan(async () => {
    void webhookDelivery.tick().catch((error: unknown) => logger.error({ err: error }, 'webhook delivery: tick failed'));
  });
  return { app, settled: () => downloads.settled(), webhookDelivery, releaseWaits: () => changes.close(), changeLog, checksums, leaderDuties };
}

/**
 * How fast the versions stored before the first scan are read for their SHA-256: 16 MiB per second
 * of time between scans (about 1 GiB per 60 s scan), a fixed rate that keeps storage egress and
 * the scanner's CPU modest while a large container is caught up on in hours, not weeks.
 */
export const BACKLOG_HASH_BYTES_PER_SECOND = 16 * 1024 * 1024;

/**
 * How often the scanner lease's holder delivers webhooks between scans: the first retry of
 * WEBHOOK_RETRY_SECONDS's default schedule is 5 s after a failure, so no coarser.
 */
export const WEBHOOK_TICK_MS = 5_000;

/** How often every instance renews or tries the scanner lease (a dead holder's lease expires 45 s after its last renewal). */
export const LEASE_TICK_MS = 15_000;

/**
 * Runs the leader duties on a timer until the returned `stop` is called: a tick at least every 15 s
 * (the lease's renewal), and when this instance holds the lease, at each scan's due time. `stop`
 * waits for a scan in progress and releases the lease (within `timeoutMs`).
 */
export function runLeaderDuties(duties: LeaderDuties, logger: Logger, renewEveryMs = LEASE_TICK_MS): { stop: (timeoutMs: number) => Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = (): void => {
    running = duties
      .tick()
      .catch((error: unknown) => logger.error({ err: error }, 'change scanner: tick failed'))
      .finally(() => {
        if (stopped) return;
        timer = setTimeout(tick, duties.delayBeforeNextTick(renewEveryMs));
        timer.unref();
      });
  };
  // A long scan (a big backlog, a slow store) must not let the lease expire: it is renewed meanwhile.
  const renewal = setInterval(() => {
    if (duties.scanning) void duties.tick().catch((error: unknown) => logger.error({ err: error }, 'change scanner: renewal failed'));
  }, renewEveryMs);
  renewal.unref();
  tick();
  return {
    stop: async (timeoutMs) => {
      stopped = true;
      clearTimeout(timer);
      clearInterval(renewal);
      let timeout: NodeJS.Timeout | undefined;
      const expired = new Promise<void>((resolve) => {
        timeout = setTimeout(() => {
          logger.warn('change scanner: still scanning at shutdown; the lease expires on its own');
          resolve();
        }, timeoutMs);
      });
      await Promise.race([running.then(() => duties.stop()), expired]).catch((error: unknown) => logger.warn({ err: error }, 'change scanner: lease not released'));
      clearTimeout(timeout);
    },
  };
}

/** The S3-compatible API (S3_API=on): a door of its own over the same use cases. */
function s3Door(
  config: GatewayConfig,
  core: {
    readonly files: FileAccess;
    readonly downloads: Downloads;
    readonly metering: Metering;
    readonly auth: ClientAuthentication;
    readonly clock: Clock;
    readonly idleTimeoutMs: number;
    readonly signer: Signer;
  },
): HttpAppDependencies['s3'] {
  if (config.s3 === undefined) return undefined;
  const credentials = new S3Credentials({ signer: core.signer, auth: core.auth });
  return {
    door: createS3Api({
      bucket: config.s3.bucket,
      files: core.files,
      downloads: core.downloads,
      admitRequest: (clientId) => core.metering.admitRequest(clientId),
      credentials,
      clock: core.clock,
      idleTimeoutMs: core.idleTimeoutMs,
      signer: core.signer,
    }),
    issueCredentials: (principal, token) => credentials.issueTemporary(principal, token),
  };
}

/**
 * Direct links when DOWNLOAD_LINKS=on: the gateway's own signed links (served by every instance at
 * `/download/signed/<name>`), and storage's own where the store can make them, which the core hands
 * only to clients without a monthly quota (it could not meter their uses).
 */
function directLinks(
  config: GatewayConfig,
  storageLinks: AppAdapters['storageLinks'],
  signer: Signer,
): { links: DirectLinks | undefined; signedLinks: SignedLinks | undefined } {
  const signedLinks = config.downloadLinks || config.portal ? new SignedLinks(signer) : undefined;
  if (!config.downloadLinks) return { links: undefined, signedLinks };
  return { links: { makers: linkMakers(signedLinks, storageLinks), ttlMs: config.downloadLinkTtlSeconds * 1000 }, signedLinks };
}

function linkMakers(signedLinks: SignedLinks | undefined, storageLinks: AppAdapters['storageLinks']): LinkMakers {
  return {
    signed: signedLinks === undefined ? undefined : (link, baseUrl) => signedLinks.urlFor(link, baseUrl),
    storage: storageLinks,
  };
}

/**
 * The portal (PORTAL=on) and its download links: the same makers as DOWNLOAD_LINKS=on (with the
 * gateway's own signed links even when it is off), valid 60 seconds at most.
 */
function portalSettings(
  config: GatewayConfig,
  links: DirectLinks | undefined,
  signedLinks: SignedLinks | undefined,
): { readonly settings: PortalSettings; readonly signedLinks: SignedLinks | undefined } | undefined {
  if (!config.portal) return undefined;
  const files = builtPortalFiles(builtPortalDir());
  const s3Bucket = config.s3?.bucket;
  const makers = links?.makers ?? linkMakers(signedLinks, undefined);
  return { settings: { ...files, s3Bucket, links: { makers, ttlMs: Math.min(links?.ttlMs ?? portalLinkTtlMs, portalLinkTtlMs) } }, signedLinks };
}

/** A turn of the event loop: pending I/O (other requests, `/health`) runs before the promise settles. */
function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
