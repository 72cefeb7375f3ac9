import { readFile } from 'node:fs/promises';
import type { Express } from 'express';
import type { Logger } from 'pino';
import type { DownloadRateLimit } from '../adapters/http/download-rate-limit.js';
import { createHttpApp } from '../adapters/http/http-app.js';
import { loadOpenApi } from '../adapters/http/openapi-contract.js';
import type { TokenThrottle } from '../adapters/http/token-endpoint.js';
import { BlobIndexSource } from '../adapters/index/blob-index-source.js';
import { JwtTokenStore } from '../adapters/tokens/jwt-token-store.js';
import { CatalogCache } from '../domain/catalog-cache.js';
import { Entitlement } from '../domain/entitlement.js';
import type { ExistenceCheckOptions } from '../domain/existing-blobs.js';
import { FileAccess } from '../domain/file-access.js';
import type { BlobStore, ClientRegistry, Clock } from '../domain/ports.js';
import { openApiDefinitionPath } from './package-root.js';

export interface AppDependencies {
  readonly store: BlobStore;
  readonly registry: ClientRegistry;
  readonly logger: Logger;
  readonly signingKey: Uint8Array;
  readonly clock?: Clock;
  readonly tokenTtlSeconds?: number;
  readonly indexRefreshSeconds?: number;
  readonly downloadRateLimit?: DownloadRateLimit;
  readonly tokenThrottle?: TokenThrottle;
  readonly existenceCheck?: ExistenceCheckOptions;
  readonly trustProxy?: boolean | number | string;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * Wires the gateway by hand: domain services over the given adapters, behind the Express app.
 * Returns the app without listening, so tests can start it on port 0.
 */
export async function createApp(deps: AppDependencies): Promise<Express> {
  const clock = deps.clock ?? systemClock;
  const tokenTtlSeconds = deps.tokenTtlSeconds ?? 3600;
  const catalogs = new CatalogCache({
    source: new BlobIndexSource(deps.store),
    clock,
    refreshAfterMs: (deps.indexRefreshSeconds ?? 60) * 1000,
    onWarnings: (indexPath, warnings) => {
      for (const warning of warnings) deps.logger.warn({ indexPath, row: warning.row }, `index row skipped: ${warning.message}`);
    },
    onStaleServed: (indexPath, cause) => deps.logger.warn({ indexPath, err: cause }, 'storage failed; serving the last loaded catalog'),
  });
  const files = new FileAccess({
    entitlement: new Entitlement(catalogs),
    store: deps.store,
    clock,
    ...(deps.existenceCheck !== undefined && { existenceCheck: deps.existenceCheck }),
  });
  const tokens = new JwtTokenStore({ signingKey: deps.signingKey, ttlSeconds: tokenTtlSeconds, registry: deps.registry, clock });
  const definitionPath = openApiDefinitionPath();

  return createHttpApp({
    api: await loadOpenApi(definitionPath),
    openApiDocument: await readFile(definitionPath, 'utf8'),
    files,
    tokens,
    registry: deps.registry,
    logger: deps.logger,
    tokenTtlSeconds,
    tokenThrottle: deps.tokenThrottle ?? { failuresPerClient: 10, windowSeconds: 900 },
    downloadRateLimit: deps.downloadRateLimit ?? { limit: 120, windowSeconds: 60 },
    trustProxy: deps.trustProxy ?? false,
  });
}
