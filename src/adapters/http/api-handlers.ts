import { posix } from 'node:path';
import type { Request, Response } from 'express';
import type { ChangeFeed } from '../../application/change-feed.js';
import type { DownloadTarget, FileAccess } from '../../application/file-access.js';
import { changedFileFields, type LoggedChange } from '../../domain/changes.js';
import { StorageUnavailable } from '../../domain/errors.js';
import type { Metering } from '../../application/metering.js';
import type { Webhooks } from '../../application/webhooks.js';
import type { WebhookEndpoint } from '../../domain/webhooks.js';
import type { CatalogEntry, FileCatalog } from '../../domain/file-catalog.js';
import type { BoundedMemory, Principal } from '../../domain/ports.js';
import { termStatus } from '../../domain/subscription.js';
import type { Registry } from 'prom-client';
import { apiReferenceContentSecurityPolicy, apiReferencePage, type ApiReferenceAsset } from './api-reference.js';
import { answeredNotModified, cacheableJson, sendCacheableJson, sendCacheableJsonPieces, sendStreamedJson, weakTagOf, withUntaggedField } from './cacheable-json.js';
import { handleDownload, handleLinkRequest, type DirectLinks, type DownloadHandlerDependencies } from './download-handler.js';
import { RequestRefused } from './error-responses.js';
import { decodeRequestPath } from '../../http-wire/grammar/request-path.js';
import { authorizationServerMetadata, protectedResourceMetadata, publicOrigin } from './oauth-discovery.js';
import type { ChangeCursors } from './change-cursors.js';
import type { ListCursors } from './list-cursors.js';
import { portalConfiguration, portalContentSecurityPolicy, type PortalSettings } from './portal.js';
import type { SignedLinks } from './signed-links.js';
import type { TokenResponse } from './token-endpoint.js';
import type { RequestTarget } from './routing.js';

/** What a handler of one `openapi.yaml` operation gets once the request is validated and authenticated. */
export interface OperationContext {
  readonly req: Request;
  readonly res: Response;
  /** Present for every operation that requires a bearer token. */
  readonly principal: Principal | undefined;
  readonly params: Readonly<Record<string, string>>;
  /** What the request addresses, as the router parsed it. */
  readonly target: RequestTarget | undefined;
}

export interface ApiHandlerDependencies extends DownloadHandlerDependencies {
  /** The listing use cases: catalog, list, count, info. */
  readonly files: FileAccess;
  /** What downloads cost a client: its standing in the monthly quota for `GET /account`. */
  readonly metering: Metering;
  /** Verifies the links the gateway signs itself, when it serves them (`/download/signed/<name>`). */
  readonly signedLinks: SignedLinks | undefined;
  /** The client a link was made for while it is registered, active and in its term; or why the link no longer works. */
  readonly linkHolder: (clientId: string) => Promise<{ readonly principal: Principal } | { readonly refused: string }>;
  /** The contract itself, served at `/openapi.yaml` so subscribers can generate clients. */
  readonly openApiDocument: string;
  /** Runs the client credentials grant for a token request. */
  readonly issueToken: (req: Request) => Promise<TokenResponse>;
  /** Whether this instance should get traffic, and why not. */
  readonly readiness: { report(): Promise<{ readonly ready: boolean; readonly reasons: readonly string[] }> };
  /** The Prometheus registry `GET /metrics` exposes. */
  readonly metricsRegistry: Registry;
  /** Makes and checks the `cursor` of `GET /list`. */
  readonly listCursors: ListCursors;
  /** The change feed (`GET /changes`), and the log position `/list` and `/catalog` report. */
  readonly changes: ChangeFeed;
  /** Makes and checks the cursors of the change feed. */
  readonly changeCursors: ChangeCursors;
  /** The files of the `/docs` page by name; `undefined` for any other name. */
  readonly apiReferenceAsset: (name: string) => Promise<ApiReferenceAsset | undefined>;
  /** The subscriber portal (`/portal`); its routes do not exist when `undefined` (PORTAL=off). */
  readonly portal: PortalSettings | undefined;
  /** Where serialized answers worth keeping (the rows of a small `/catalog`) are kept: the catalogs' bounded memory. */
  readonly keptAnswers: BoundedMemory;
  /** A subscriber's own webhook endpoints (`/webhooks`); the routes do not exist when `undefined`. */
  readonly webhooks: Webhooks | undefined;
}

export type OperationHandler = (context: OperationContext) => Promise<void>;

/** JSON answers depend on the caller and change with the index and storage: revalidate every time. */
const jsonCacheControl = 'private, no-cache';
/** The contract's default `limit` of `/list` (openapi.yaml). */
const defaultListLimit = 1000;
/** The contract's defaults of `/changes` (openapi.yaml). */
const defaultChangesLimit = 500;
const defaultChangesWaitSeconds = 0;

function principalOf(context: OperationContext): Principal {
  if (context.principal === undefined) throw new Error(`Operation at ${context.req.path} needs an authenticated caller`);
  return context.principal;
}

/** `?redirect=true` (the contract allows only `true` and `false`). */
function wantsRedirect(context: OperationContext): boolean {
  return context.req.query['redirect'] === 'true';
}

function sendJson(res: Response, body: unknown): void {
  res.set('Cache-Control', jsonCacheControl).status(200).json(body);
}

/** One handler per `operationId` of `openapi.yaml`. */
export function createOperationHandlers(deps: ApiHandlerDependencies): Record<string, OperationHandler> {
  /** A subscriber's own download of `target`; a GET with `?redirect=true` may be answered with a link. */
  const downloadFor = (context: OperationContext, target: DownloadTarget): Promise<void> => {
    const principal = principalOf(context);
    return handleDownload(deps, context.req, context.res, {
      clientId: principal.clientId,
      target,
      principal: async () => principal,
      redirect: wantsRedirect(context),
    });
  };
  /** `GET|HEAD /download/<symbol>`. */
  const downloadBySymbol: OperationHandler = (context) => downloadFor(context, { symbol: context.params['symbol'] ?? '' });
  /** `GET|HEAD /<storage path>`: the raw rest of the request path, decoded here exactly once. */
  const downloadByPath: OperationHandler = (context) =>
    downloadFor(context, { path: decodeRequestPath(context.target?.kind === 'file' ? context.target.rawStoragePath : '') });

  /**
   * `GET|HEAD /download/signed/<name>?token=`: the link is the credential, for as long as its
   * client is registered, active and in its term and the file is in that client's index (checked on
   * every use, from memory). Each use is a download of that client's like any other: counted
   * against its budget and drawn from its monthly quota.
   */
  const downloadBySignedLink: OperationHandler = async (context) => {
    if (deps.signedLinks === undefined) throw new Error('Gateway-signed links are off: the route should not exist');
    const link = await deps.signedLinks.verify(String(context.req.query['token'] ?? ''));
    if (context.params['name'] !== posix.basename(link.path)) {
      throw new RequestRefused('invalid_link', 'The download link is not valid for this file name');
    }
    return handleDownload(deps, context.req, context.res, {
      clientId: link.clientId,
      target: { path: link.path },
      principal: async () => {
        const holder = await deps.linkHolder(link.clientId);
        if ('refused' in holder) throw new RequestRefused('invalid_link', holder.refused);
        await deps.metering.admitRequest(holder.principal.clientId);
        return holder.principal;
      },
      pinnedEtag: link.etag,
      redirect: false,
    });
  };

  return {
    async issueToken(context) {
      const token = await deps.issueToken(context.req);
      // RFC 6749 section 5.1: token responses must not be cached.
      context.res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).status(200).json(token);
    },

    async getCatalog(context) {
      const principal = principalOf(context);
      // Its tag follows from the index version and the client it names, so a revalidation is answered
      // from the (cached) catalog alone: a 304 reads no feed position and signs no cursor it would drop.
      const tagOf = (catalog: FileCatalog): string =>
        weakTagOf(`catalog v1\0${principal.clientId}\0${catalog.version !== '' ? catalog.version : `serial ${catalog.serial}`}`);
      const catalog = await deps.files.catalog(principal);
      const etag = tagOf(catalog);
      if (answeredNotModified(context.req, context.res, etag)) return;
      // The feed's position read before this catalog was last found current: a change it misses comes
      // after it. (Not part of the tag: a 304 keeps an earlier changesCursor, still a safe one.)
      const changesCursor = deps.changeCursors.encode(principal.clientId, knownPosition(deps.files.catalogChangesSeen(catalog)));
      if (catalog.count > keptCatalogRowsMax) {
        // Serialized as it is sent, never kept whole.
        await sendStreamedJson(context.req, context.res, etag, catalogJson(principal.clientId, catalog, changesCursor));
        return;
      }
      // The rows' JSON, serialized once per catalog and shared by every client of that index: rebuilding
      // it for each request cost three times what bare Express spends answering the same JSON.
      const key = `catalog-rows-json:${catalog.serial}`;
      let rows = deps.keptAnswers.get(key) as KeptRows | undefined;
      if (rows === undefined) {
        rows = { json: Buffer.from([...catalogRowsJson(catalog)].join(''), 'utf8') };
        deps.keptAnswers.set(key, rows, rows.json.byteLength + keptRowsObjectBytes);
      }
      sendCacheableJsonPieces(context.req, context.res, etag, [
        Buffer.from(`{"clientId":${JSON.stringify(principal.clientId)},"files":[`, 'utf8'),
        rows.json,
        Buffer.from(`],"count":${catalog.count},"changesCursor":${JSON.stringify(changesCursor)}}`, 'utf8'),
      ]);
    },

    async listFiles(context) {
      const principal = principalOf(context);
      const { limit: rawLimit, modifiedSince: rawSince, cursor } = context.req.query;
      let modifiedSince = typeof rawSince === 'string' ? new Date(rawSince) : undefined;
      const continued = typeof cursor === 'string' ? deps.listCursors.decode(principal.clientId, cursor) : undefined;
      if (continued !== undefined) {
        if (modifiedSince !== undefined && modifiedSince.getTime() !== continued.modifiedSince?.getTime()) {
          throw new RequestRefused('invalid_request', 'modifiedSince differs from the one the cursor was made with: leave it out, or list again without a cursor');
        }
        modifiedSince = continued.modifiedSince;
      }
      const listing = await deps.files.list(principal, {
        limit: typeof rawLimit === 'string' ? Number(rawLimit) : defaultListLimit,
        ...(modifiedSince !== undefined && { modifiedSince }),
        ...(continued !== undefined && { from: continued.position }),
      });
      const answer = cacheableJson({
        files: listing.files.map((file) => ({
          symbol: file.entry.symbol,
          description: file.entry.description,
          fileName: file.entry.fileName,
          size: file.size,
          uploaded: file.uploaded.toISOString(),
          etag: file.etag,
          ...(file.md5 !== undefined && { md5: file.md5 }),
          ...(file.sha256 !== undefined && { sha256: file.sha256 }),
          ...releaseWindowOf(file.entry),
        })),
        count: listing.count,
        limit: listing.limit,
        truncated: listing.truncated,
        ...(listing.next !== undefined && { nextCursor: deps.listCursors.encode(principal.clientId, listing.next, modifiedSince) }),
      });
      // The position the listing's catalog and storage check (and its earlier pages') had seen: a change
      // they miss comes after it. The tag is the listing's alone: a 304 keeps an earlier changesCursor, still a safe one.
      const changesCursor = deps.changeCursors.encode(principal.clientId, knownPosition(listing.changesSeen));
      sendCacheableJson(context.req, context.res, withUntaggedField(answer, 'changesCursor', changesCursor));
    },

    async getChanges(context) {
      const principal = principalOf(context);
      const { cursor, limit, wait } = context.req.query;
      const after = typeof cursor === 'string' ? deps.changeCursors.decode(principal.clientId, cursor) : undefined;
      // A client that goes away ends its wait at once, freeing its place among the waiting.
      const gone = new AbortController();
      const onClose = (): void => gone.abort();
      context.res.once('close', onClose);
      let page;
      try {
        page = await deps.changes.read(principal.clientId, {
          ...(after !== undefined && { after }),
          limit: typeof limit === 'string' ? Number(limit) : defaultChangesLimit,
          waitMs: (typeof wait === 'string' ? Number(wait) : defaultChangesWaitSeconds) * 1000,
          signal: gone.signal,
        });
      } finally {
        context.res.off('close', onClose);
      }
      if (gone.signal.aborted) return;
      context.res.set('Cache-Control', 'no-store').status(200).json({
        events: page.events.map(changeEventJson),
        nextCursor: deps.changeCursors.encode(principal.clientId, page.next),
        hasMore: page.hasMore,
      });
    },

    async getAccount(context) {
      const principal = principalOf(context);
      const standing = await deps.metering.standing(principal, context.req.log, 'deny');
      const now = deps.clock.now();
      context.res.set('Cache-Control', 'no-store').status(200).json({
        clientId: principal.clientId,
        term: {
          ...(principal.validFrom !== undefined && { validFrom: principal.validFrom.toISOString() }),
          ...(principal.validUntil !== undefined && { validUntil: principal.validUntil.toISOString() }),
          active: termStatus(principal, now).kind === 'active',
        },
        ...(standing !== undefined && {
          quota: {
            monthlyBytes: standing.limit,
            period: standing.period.key,
            used: standing.used,
            remaining: standing.remaining,
            resetsAt: standing.period.end.toISOString(),
          },
        }),
      });
    },

    async countFiles(context) {
      sendJson(context.res, { count: await deps.files.count(principalOf(context)) });
    },

    async getFileInfo(context) {
      const { entry, properties, sha256 } = await deps.files.info(principalOf(context), context.params['symbol'] ?? '');
      context.res.set({ ETag: properties.etag, 'Last-Modified': properties.lastModified.toUTCString() });
      sendJson(context.res, {
        symbol: entry.symbol,
        size: properties.size,
        uploaded: properties.lastModified.toISOString(),
        etag: properties.etag,
        ...(sha256 !== undefined && { sha256 }),
        ...releaseWindowOf(entry),
        httpMetadata: definedOnly({
          contentType: properties.contentType,
          contentDisposition: properties.contentDisposition,
          contentEncoding: properties.contentEncoding,
          contentLanguage: properties.contentLanguage,
          cacheControl: properties.cacheControl,
          contentMd5: properties.contentMd5,
        }),
        customMetadata: properties.metadata,
      });
    },

    downloadBySymbol,
    headDownloadBySymbol: downloadBySymbol,
    downloadByPath,
    headDownloadByPath: downloadByPath,
    downloadBySignedLink,
    headDownloadBySignedLink: downloadBySignedLink,

    getDownloadLink: (context) => handleLinkRequest(deps, linksOf(deps), context.req, context.res, principalOf(context), context.params['symbol'] ?? ''),

    async getHealth(context) {
      context.res.set('Cache-Control', 'no-store').status(200).json({ status: 'ok' });
    },

    async getReadiness(context) {
      const report = await deps.readiness.report();
      if (!report.ready) {
        throw new RequestRefused('not_ready', 'This instance is not ready', { reasons: report.reasons });
      }
      context.res.set('Cache-Control', 'no-store').status(200).json({ status: 'ready' });
    },

    async getMetrics(context) {
      const text = await deps.metricsRegistry.metrics();
      // setHeader: the registry's content type carries its own version and charset.
      context.res.setHeader('Content-Type', deps.metricsRegistry.contentType);
      context.res.set('Cache-Control', 'no-store').status(200).send(text);
    },

    async getOpenApiDocument(context) {
      context.res.set('Cache-Control', 'public, max-age=300').type('application/yaml').status(200).send(deps.openApiDocument);
    },

    async getApiReference(context) {
      context.res
        .set({ 'Cache-Control': 'no-cache', 'Content-Security-Policy': apiReferenceContentSecurityPolicy })
        .type('text/html')
        .status(200)
        .send(apiReferencePage);
    },

    async getApiReferenceAsset(context) {
      const name = context.params['asset'] ?? '';
      const asset = await deps.apiReferenceAsset(name);
      if (asset === undefined) throw new RequestRefused('route_not_found', `No route GET /docs/${name}`);
      // setHeader: the asset's type carries its own charset, which res.type would rewrite.
      context.res.setHeader('Content-Type', asset.contentType);
      context.res.set('Cache-Control', 'public, max-age=3600').status(200).send(asset.body);
    },

    async getPortal(context) {
      const page = await portalOf(deps).page();
      if (page === undefined) throw new RequestRefused('route_not_found', 'No route GET /portal: the portal was not built (npm run build)');
      context.res
        .set({ 'Cache-Control': 'no-cache', 'Content-Security-Policy': portalContentSecurityPolicy })
        .setHeader('Content-Type', page.contentType);
      context.res.status(200).send(page.body);
    },

    async getPortalAsset(context) {
      const name = context.params['asset'] ?? '';
      const asset = await portalOf(deps).asset(name);
      if (asset === undefined) throw new RequestRefused('route_not_found', `No route GET /portal/assets/${name}`);
      // Vite names every asset after a hash of its content: a name never changes its bytes.
      context.res.setHeader('Content-Type', asset.contentType);
      context.res.set('Cache-Control', 'public, max-age=31536000, immutable').status(200).send(asset.body);
    },

    async getPortalConfig(context) {
      // Names the origin, which may come from the request's Host: no cache keeps it.
      const origin = publicOrigin(deps.publicBaseUrl, context.req);
      context.res.set('Cache-Control', 'no-store').status(200).json(portalConfiguration(portalOf(deps), origin));
    },

    /** The portal's download link: as `GET /link/<symbol>` (counted, audited), but short-lived and whatever DOWNLOAD_LINKS says. */
    getPortalDownloadLink: (context) =>
      handleLinkRequest(deps, portalOf(deps).links, context.req, context.res, principalOf(context), context.params['symbol'] ?? ''),

    async listWebhooks(context) {
      const endpoints = await webhooksOf(deps).list(principalOf(context).clientId);
      context.res.set('Cache-Control', 'no-store').status(200).json({ webhooks: endpoints.map(webhookJson) });
    },

    async createWebhook(context) {
      const { url } = context.req.body as { url: string };
      const { endpoint, secret } = await webhooksOf(deps).register(principalOf(context).clientId, url);
      // The secret is in this answer only: no cache may keep it.
      context.res.set('Cache-Control', 'no-store').status(201).json({ id: endpoint.id, url: endpoint.url, secret });
    },

    async deleteWebhook(context) {
      await webhooksOf(deps).remove(principalOf(context).clientId, context.params['id'] ?? '');
      context.res.status(204).end();
    },

    async getAuthorizationServerMetadata(context) {
      sendMetadata(context, deps.publicBaseUrl, authorizationServerMetadata);
    },

    async getProtectedResourceMetadata(context) {
      sendMetadata(context, deps.publicBaseUrl, protectedResourceMetadata);
    },
  };
}

function linksOf(deps: ApiHandlerDependencies): DirectLinks {
  if (deps.links === undefined) throw new Error('Direct links are off (DOWNLOAD_LINKS=off): the route should not exist');
  return deps.links;
}

function webhooksOf(deps: ApiHandlerDependencies): Webhooks {
  if (deps.webhooks === undefined) throw new Error('Webhooks are off: the routes should not exist');
  return deps.webhooks;
}

/** An endpoint as `GET /webhooks` shows it: never its secret. */
function webhookJson(endpoint: WebhookEndpoint): Record<string, unknown> {
  return {
    id: endpoint.id,
    url: endpoint.url,
    enabled: endpoint.enabled,
    ...(endpoint.disabled !== undefined && {
      disabledReason: endpoint.disabled.reason,
      disabledAt: endpoint.disabled.at.toISOString(),
      disabledDetail: endpoint.disabled.detail,
    }),
    createdAt: endpoint.createdAt.toISOString(),
    delivered: endpoint.delivery.delivered,
    attempts: endpoint.delivery.attempts,
    ...(endpoint.delivery.nextAttemptAt !== undefined && { nextAttemptAt: endpoint.delivery.nextAttemptAt.toISOString() }),
  };
}

function portalOf(deps: ApiHandlerDependencies): PortalSettings {
  if (deps.portal === undefined) throw new Error('The portal is off (PORTAL=off): its routes should not exist');
  return deps.portal;
}

/**
 * A discovery document for the configured base URL, which any cache may keep; or for the request's
 * own scheme and host, which no cache may keep (another request's `Host` must never be served).
 */
function sendMetadata(context: OperationContext, publicBaseUrl: string | undefined, metadata: (baseUrl: string) => object): void {
  const baseUrl = publicOrigin(publicBaseUrl, context.req);
  context.res
    .set('Cache-Control', publicBaseUrl === undefined ? 'no-store' : 'public, max-age=300')
    .status(200)
    .json(metadata(baseUrl));
}

/**
 * Catalogs of at most this many rows have their `/catalog` rows kept serialized (about 120 bytes a
 * row, in the bounded memory of CATALOG_CACHE_MB); bigger ones are serialized as they are sent.
 */
const keptCatalogRowsMax = 5_000;

/** A catalog's rows as `/catalog` writes them, kept in the bounded memory. */
interface KeptRows {
  readonly json: Buffer;
}

/** The object and its Buffer's header, beside the bytes. */
const keptRowsObjectBytes = 200;

/** `/catalog`'s body in pieces of a few hundred rows, so a catalog of a million rows is never one string. */
/** A listing's change position, or a retryable 503 while the change log cannot be read (a cursor from now could skip a change). */
function knownPosition(position: number | undefined): number {
  if (position === undefined) {
    throw new StorageUnavailable("The change feed's position cannot be read now, so no changesCursor can be given: retry", { retryable: true });
  }
  return position;
}

function* catalogJson(clientId: string, catalog: FileCatalog, changesCursor: string): Generator<string> {
  yield `{"clientId":${JSON.stringify(clientId)},"files":[`;
  yield* catalogRowsJson(catalog);
  yield `],"count":${catalog.count},"changesCursor":${JSON.stringify(changesCursor)}}`;
}

/** The rows of `/catalog`'s `files`, comma-separated, in pieces of a few hundred. */
function* catalogRowsJson(catalog: FileCatalog): Generator<string> {
  const rowsPerPiece = 512;
  for (let start = 0; start < catalog.count; start += rowsPerPiece) {
    const rows: string[] = [];
    for (let row = start; row < Math.min(start + rowsPerPiece, catalog.count); row += 1) {
      const entry = catalog.entryAt(row);
      rows.push(
        JSON.stringify({
          Symbol: entry.symbol,
          Description: entry.description,
          FileName: entry.fileName,
          ...(entry.availableFrom !== undefined && { AvailableFrom: entry.availableFrom.toISOString() }),
          ...(entry.availableUntil !== undefined && { AvailableUntil: entry.availableUntil.toISOString() }),
        }),
      );
    }
    yield (start === 0 ? '' : ',') + rows.join(',');
  }
}

/** `availableFrom` and `availableUntil` of `/list` and `/info`, each only where the file's index row has that bound. */
function releaseWindowOf(entry: CatalogEntry): { availableFrom?: string; availableUntil?: string } {
  return {
    ...(entry.availableFrom !== undefined && { availableFrom: entry.availableFrom.toISOString() }),
    ...(entry.availableUntil !== undefined && { availableUntil: entry.availableUntil.toISOString() }),
  };
}

/** One event of `/changes` (openapi.yaml `ChangeEvent`). */
function changeEventJson(change: LoggedChange): object {
  return {
    id: change.id,
    type: change.type,
    time: change.time.toISOString(),
    file: changedFileFields(change.file),
  };
}

function definedOnly(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined));
}
