import { readFile } from 'node:fs/promises';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { noAudit, type AuditTrail } from '../adapters/audit/audit-trail.js';
import { ScryptSecretHasher } from '../adapters/clients/secret-hash.js';
import type { DirectLinkIssuer, DirectLinkRequest } from '../adapters/http/download-handler.js';
import { createHttpApp } from '../adapters/http/http-app.js';
import { builtPortalFiles, portalLinkTtlMs, type PortalSettings } from '../adapters/http/portal.js';
import { SignedLinks } from '../adapters/http/signed-links.js';
import { ListCursors } from '../adapters/http/list-cursors.js';
import { loadOpenApi } from '../adapters/http/openapi-contract.js';
import { memoryCountedVersions, type CountedVersionsFactory } from '../adapters/http/counted-versions.js';
import { DownloadQuota } from '../adapters/http/download-quota.js';
import { memoryStores, resilientStores, type RateLimitStoreFactory } from '../adapters/http/rate-limits.js';
import { VerificationQueue, verificationQueueBounds } from '../adapters/http/verification-queue.js';
import { MemoryQuotaLedger } from '../adapters/quota/memory-quota-ledger.js';
import { GatewayMetrics } from '../adapters/metrics/gateway-metrics.js';
import { InstrumentedBlobStore } from '../adapters/metrics/instrumented-blob-store.js';
import { LruBoundedMemory } from '../adapters/index/lru-bounded-memory.js';
import { BlobIndexSource } from '../adapters/index/blob-index-source.js';
import { S3Credentials } from '../adapters/s3/s3-credentials.js';
import { JwtTokenStore } from '../adapters/tokens/jwt-token-store.js';
import { CatalogCache } from '../domain/catalog-cache.js';
import { ClientAuthentication } from '../domain/client-authentication.js';
import { Entitlement } from '../domain/entitlement.js';
import { FileAccess } from '../application/file-access.js';
import { MonthlyQuota } from '../domain/monthly-quota.js';
import type { BlobStore, ClientRegistry, Clock, QuotaLedger, SecretHasher } from '../domain/ports.js';
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
  readonly rateLimitStores?: RateLimitStoreFactory;
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
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * Wires the gateway by hand: domain services over the given adapters, behind the Express app.
 * Returns the app without listening, so tests can start it on port 0.
 */
export async function createApp(config: GatewayConfig, adapters: AppAdapters): Promise<Express> {
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
  });
  const files = new FileAccess({ entitlement: new Entitlement(catalogs), store, clock, listCacheMs: config.listCacheSeconds * 1000, memory, yieldToLoop });
  const auth: ClientAuthentication = new ClientAuthentication({
    registry,
    secrets: adapters.secrets ?? new ScryptSecretHasher({ concurrency: config.secretHashConcurrency }),
    tokens: new JwtTokenStore({ signingKey: config.tokenSigningKey, clock }),
    tokenLifetimeSeconds: config.tokenTtlSeconds,
    clock,
  });
  const definitionPath = openApiDefinitionPath();
  const { links, signedLinks } = directLinks(config, adapters.storageLinks, clock);
  const verifications = new VerificationQueue({
    concurrency: config.secretHashConcurrency,
    ...verificationQueueBounds(config.secretHashConcurrency),
    onWaiting: (waiting) => metrics.secretVerificationsWaiting(waiting),
    onRefused: (reason) => metrics.secretVerificationRefused(reason),
  });
  const portal = portalSettings(config, links, signedLinks, clock);
  const stores = resilientStores(adapters.rateLimitStores ?? memoryStores, config.rateLimitOnStoreError, logger);
  const audit = adapters.audit ?? noAudit;
  const quota = new DownloadQuota({
    quota: new MonthlyQuota(adapters.quotaLedger ?? new MemoryQuotaLedger(clock), clock),
    clock,
    onLedgerError: config.rateLimitOnStoreError,
    onCrossed: ({ requestId, clientId, percent, standing }, requestLogger) => {
      const fields = { clientId, period: standing.period.key, percent, limit: standing.limit, used: standing.used };
      requestLogger.warn({ event: 'quota', ...fields }, `monthly byte quota ${percent}% used`);
      audit.record({ event: 'quota', requestId, ...fields });
    },
  });

  return createHttpApp({
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
    },
    tokenIssueLimit: { limit: config.tokenIssueLimit, windowSeconds: config.tokenIssueWindowSeconds, stores },
    downloadRateLimit: { limit: config.downloadRateLimit, windowSeconds: config.downloadRateWindowSeconds, stores },
    countedVersions: adapters.countedVersions ?? memoryCountedVersions(clock),
    quota,
    downloadIdleTimeoutMs: config.downloadIdleTimeoutSeconds * 1000,
    audit,
    metrics,
    metricsToken: config.metricsToken,
    readiness,
    trustProxy: config.trustProxy,
    links,
    signedLinks: portal?.signedLinks ?? signedLinks,
    portal: portal?.settings,
    publicBaseUrl: config.publicBaseUrl,
    s3:
      config.s3 === undefined
        ? undefined
        : {
            bucket: config.s3.bucket,
            credentials: new S3Credentials({ serverKey: config.tokenSigningKey, auth, clock }),
            serverKey: config.tokenSigningKey,
          },
    listCursors: new ListCursors(config.tokenSigningKey),
  });
}

/**
 * Direct links when DOWNLOAD_LINKS=on: storage's own when the store can make them, otherwise URLs
 * the gateway signs and serves itself.
 */
function directLinks(
  config: GatewayConfig,
  storageLinks: AppAdapters['storageLinks'],
  clock: Clock,
): { links: { readonly issue: DirectLinkIssuer; readonly ttlMs: number } | undefined; signedLinks: SignedLinks | undefined } {
  if (!config.downloadLinks) return { links: undefined, signedLinks: undefined };
  const ttlMs = config.downloadLinkTtlSeconds * 1000;
  if (storageLinks !== undefined) return { links: { issue: (link) => storageLinks(link), ttlMs }, signedLinks: undefined };
  const signedLinks = new SignedLinks(config.tokenSigningKey, clock);
  return { links: { issue: (link, baseUrl) => signedLinks.urlFor(link, baseUrl), ttlMs }, signedLinks };
}

/**
 * The portal (PORTAL=on) and its download links: the direct links of DOWNLOAD_LINKS=on where they
 * are on, otherwise links the gateway signs and serves itself (so `/download/signed/<name>` exists
 * with the portal); either way valid 60 seconds at most.
 */
function portalSettings(
  config: GatewayConfig,
  links: { readonly issue: DirectLinkIssuer; readonly ttlMs: number } | undefined,
  signedLinks: SignedLinks | undefined,
  clock: Clock,
): { readonly settings: PortalSettings; readonly signedLinks: SignedLinks | undefined } | undefined {
  if (!config.portal) return undefined;
  const files = builtPortalFiles(builtPortalDir());
  const s3Bucket = config.s3?.bucket;
  if (links !== undefined) {
    return { settings: { ...files, s3Bucket, links: { issue: links.issue, ttlMs: Math.min(links.ttlMs, portalLinkTtlMs) } }, signedLinks };
  }
  // DOWNLOAD_LINKS=off: no links of any kind yet, so the gateway signs the portal's itself.
  const own = new SignedLinks(config.tokenSigningKey, clock);
  return { settings: { ...files, s3Bucket, links: { issue: (link, baseUrl) => own.urlFor(link, baseUrl), ttlMs: portalLinkTtlMs } }, signedLinks: own };
}

/** A turn of the event loop: pending I/O (other requests, `/health`) runs before the promise settles. */
function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
