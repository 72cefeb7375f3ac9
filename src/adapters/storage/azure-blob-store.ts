import { Readable } from 'node:stream';
import { DefaultAzureCredential } from '@azure/identity';
import {
  BlobSASPermissions,
  BlobServiceClient,
  ContainerClient,
  generateBlobSASQueryParameters,
  RestError,
  StorageSharedKeyCredential,
  type StoragePipelineOptions,
  type UserDelegationKey,
} from '@azure/storage-blob';
import { ContentChanged, GatewayError, FileNotFound, StorageUnavailable } from '../../domain/errors.js';
import { flowingContent } from '../../http-wire/flowing-content.js';
import type {
  BlobContent,
  BlobProperties,
  BlobReadOptions,
  BlobStore,
  BlobSummary,
} from '../../domain/ports.js';
import { validateStoragePath } from '../../domain/storage-path.js';
import { EXISTENCE_CHECK, findExistingBlobs } from './existing-blobs.js';
import { validateStoragePrefix } from './storage-prefix.js';

/**
 * Options of the factories. `retryOptions` defaults to `retryOptionsWithin(responseTimeoutMs)`;
 * tests turn `maxTries` down to fail fast.
 */
export type AzureBlobStoreOptions = Pick<StoragePipelineOptions, 'retryOptions' | 'keepAliveOptions'> & StoreTimeouts;

export interface StoreTimeouts {
  /**
   * How long a storage call may take, the SDK's retries and their back-off included, to start
   * answering (response headers, or the next page of a listing) before it fails with a retryable
   * `StorageUnavailable` (STORAGE_TIMEOUT_SECONDS). The SDK's own `tryTimeoutInMs` only asks the
   * service to time out; it never gives up on a silent connection.
   */
  readonly responseTimeoutMs: number;
}

/** Tries of one storage call: the first and two retries. */
const STORAGE_MAX_TRIES = 3;
/** The first retry's back-off at most; the SDK's default (4 s, then 12 s) outlasts any sensible deadline. */
const STORAGE_RETRY_DELAY_MS = 500;

/**
 * SDK retries that fit in a call's deadline: three tries, backing off 0, then `d`, then 3`d`
 * (the SDK's exponential policy) with `d` at most an eighth of the deadline, so that a storage
 * that refuses connections or answers 500/503 is asked three times and reported within about
 * half the deadline, rather than after the SDK's default 16 s. The deadline's abort (which
 * covers the retries) still ends a call that hangs.
 */
export function retryOptionsWithin(responseTimeoutMs: number): NonNullable<StoragePipelineOptions['retryOptions']> {
  const retryDelayInMs = Math.min(STORAGE_RETRY_DELAY_MS, Math.floor(responseTimeoutMs / 8));
  // No `tryTimeoutInMs`: it only sets the service's own `timeout=` parameter (whose maximum Azure
  // fixes per operation); the deadline's abort is what bounds the call.
  return { maxTries: STORAGE_MAX_TRIES, retryDelayInMs, maxRetryDelayInMs: 3 * retryDelayInMs };
}

const LIST_PAGE_SIZE = 5000;
/** SAS start times are set back this much, so that a clock a little ahead of storage's still works. */
const SAS_CLOCK_SKEW_MS = 5 * 60_000;
/** A user delegation key is asked for this much longer than the first link needs, and reused. */
const DELEGATION_KEY_SPARE_MS = 60 * 60_000;

/** A deadline that aborts a call unless `clear`ed (or `extend`ed) in time, combined with the caller's own signal. */
function deadline(timeoutMs: number, callerSignal?: AbortSignal) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  return {
    signal: callerSignal === undefined ? controller.signal : AbortSignal.any([callerSignal, controller.signal]),
    extend: () => timer.refresh(),
    clear: () => clearTimeout(timer),
  };
}

/**
 * A `BlobStore` over one Azure Blob Storage container. Every SDK failure is translated here: no
 * `RestError` leaves this adapter.
 */
export class AzureBlobStore implements BlobStore {
  readonly #container: ContainerClient;
  readonly #responseTimeoutMs: number;
  /** For user delegation keys, when the store authenticates with Entra ID (managed identity). */
  readonly #service: BlobServiceClient | undefined;
  #delegationKey: { readonly key: Promise<UserDelegationKey>; readonly validUntil: Date } | undefined;

  constructor(container: ContainerClient, timeouts: StoreTimeouts, service?: BlobServiceClient) {
    this.#container = container;
    this.#responseTimeoutMs = timeouts.responseTimeoutMs;
    this.#service = service;
  }

  /**
   * A read-only SAS URL for exactly this blob (`sr=b`, permission `r`), valid from a few minutes
   * ago (clock skew) until `expiresAt`, naming the file's `Content-Disposition`: with the account key
   * when the store has one (a service SAS), otherwise signed with a user delegation key of the
   * store's Entra ID identity (a user delegation SAS; *Storage Blob Data Reader* includes the
   * *generateUserDelegationKey* action it needs).
   */
  async directLink(link: { readonly path: string; readonly expiresAt: Date; readonly contentDisposition: string }): Promise<string> {
    const blob = this.#container.getBlobClient(validateStoragePath(link.path));
    const values = {
      containerName: this.#container.containerName,
      blobName: link.path,
      permissions: BlobSASPermissions.parse('r'),
      startsOn: new Date(Date.now() - SAS_CLOCK_SKEW_MS),
      expiresOn: link.expiresAt,
      contentDisposition: link.contentDisposition,
    };
    try {
      const credential = this.#container.credential;
      if (credential instanceof StorageSharedKeyCredential) {
        return `${blob.url}?${generateBlobSASQueryParameters(values, credential).toString()}`;
      }
      if (this.#service === undefined) throw new StorageUnavailable('This storage credential cannot sign links', { retryable: false });
      const key = await this.#userDelegationKey(link.expiresAt);
      return `${blob.url}?${generateBlobSASQueryParameters(values, key, this.#service.accountName).toString()}`;
    } catch (error) {
      throw toDomainError(error, link.path);
    }
  }

  /**
   * A user delegation key valid past `needed`: asked of storage about once an hour, shared by the
   * links made meanwhile (concurrent ones included); a failed request is not remembered.
   */
  #userDelegationKey(needed: Date): Promise<UserDelegationKey> {
    const cached = this.#delegationKey;
    if (cached !== undefined && cached.validUntil.getTime() > needed.getTime()) return cached.key;
    const service = this.#service;
    if (service === undefined) return Promise.reject(new StorageUnavailable('No service client for user delegation keys', { retryable: false }));
    const now = Date.now();
    const expiresOn = new Date(Math.max(needed.getTime(), now) + DELEGATION_KEY_SPARE_MS);
    const timeout = deadline(this.#responseTimeoutMs);
    const key = service.getUserDelegationKey(new Date(now - SAS_CLOCK_SKEW_MS), expiresOn, { abortSignal: timeout.signal }).finally(() => timeout.clear());
    const entry = { key, validUntil: new Date(expiresOn.getTime() - SAS_CLOCK_SKEW_MS) };
    this.#delegationKey = entry;
    key.catch(() => {
      if (this.#delegationKey === entry) this.#delegationKey = undefined;
    });
    return key;
  }

  async getProperties(path: string): Promise<BlobProperties | undefined> {
    const blob = this.#container.getBlobClient(validateStoragePath(path));
    const timeout = deadline(this.#responseTimeoutMs);
    try {
      const response = await blob.getProperties({ abortSignal: timeout.signal });
      const optional = {
        contentType: response.contentType,
        contentDisposition: response.contentDisposition,
        contentEncoding: response.contentEncoding,
        contentLanguage: response.contentLanguage,
        cacheControl: response.cacheControl,
        contentMd5: response.contentMD5 === undefined ? undefined : Buffer.from(response.contentMD5).toString('base64'),
      };
      return {
        path,
        size: requireField(response.contentLength, 'Content-Length'),
        etag: requireField(response.etag, 'ETag'),
        lastModified: requireField(response.lastModified, 'Last-Modified'),
        ...withoutUndefined(optional),
        metadata: { ...response.metadata },
      };
    } catch (error) {
      if (isBlobNotFound(error)) return undefined;
      throw toDomainError(error, path);
    } finally {
      timeout.clear();
    }
  }

  /** `pageSize`: blobs per List Blobs call (5000, the most Azure returns, when absent). */
  async *list(prefix: string, pageSize: number = LIST_PAGE_SIZE): AsyncIterable<BlobSummary> {
    const timeout = deadline(this.#responseTimeoutMs);
    const pages = this.#container
      .listBlobsFlat({ ...(prefix !== '' && { prefix: validateStoragePrefix(prefix) }), abortSignal: timeout.signal })
      .byPage({ maxPageSize: Math.max(1, Math.min(LIST_PAGE_SIZE, pageSize)) });
    try {
      for await (const page of pages) {
        timeout.extend();
        for (const item of page.segment.blobItems) {
          const md5 = item.properties.contentMD5;
          yield {
            path: item.name,
            size: requireField(item.properties.contentLength, 'Content-Length'),
            etag: quoted(requireField(item.properties.etag, 'Etag')),
            lastModified: item.properties.lastModified,
            ...(md5 !== undefined && md5.byteLength > 0 && { contentMd5: Buffer.from(md5).toString('base64') }),
          };
        }
      }
    } catch (error) {
      throw toDomainError(error, prefix);
    } finally {
      timeout.clear();
    }
  }

  existing(paths: readonly string[]): Promise<ReadonlyMap<string, BlobSummary>> {
    return findExistingBlobs(this, paths, EXISTENCE_CHECK);
  }

  /** One List Blobs page of one blob: what the Storage Blob Data Reader role allows, and cheap. */
  async probe(signal?: AbortSignal): Promise<void> {
    const timeout = deadline(this.#responseTimeoutMs, signal);
    try {
      await this.#container.listBlobsFlat({ abortSignal: timeout.signal }).byPage({ maxPageSize: 1 }).next();
    } catch (error) {
      throw toDomainError(error, '', signal);
    } finally {
      timeout.clear();
    }
  }

  async read(path: string, options: BlobReadOptions): Promise<BlobContent> {
    const blob = this.#container.getBlobClient(validateStoragePath(path));
    const offset = options.range?.start ?? 0;
    const count = options.range === undefined ? undefined : options.range.end - options.range.start + 1;
    // Only the wait for the response headers has a deadline; the body may take as long as the subscriber reads.
    const timeout = deadline(this.#responseTimeoutMs, options.signal);
    try {
      const response = await blob.download(offset, count, {
        conditions: { ifMatch: options.ifMatch },
        abortSignal: timeout.signal,
        // The SDK can resume a body that ends early with a new ranged GET. We fail fast instead:
        // the gateway drops the client's connection and the client resumes with Range + If-Match,
        // the same recovery end to end, and no RestError from a resuming request can escape.
        maxRetryRequests: 0,
      });
      const body = response.readableStreamBody;
      if (!(body instanceof Readable)) {
        throw new StorageUnavailable('Azure Storage sent no readable body', { retryable: false });
      }
      return failuresAsStorageUnavailable(body, path, options.signal);
    } catch (error) {
      if (isRestError(error) && error.statusCode === 412) throw await this.#changedOrGone(path, error);
      throw toDomainError(error, path, options.signal);
    } finally {
      timeout.clear();
    }
  }

  /**
   * Azure answers 412, not 404, to a GET with If-Match on a blob that does not exist (so does
   * Azurite), so ask once more which it is.
   */
  async #changedOrGone(path: string, conditionFailure: RestError): Promise<Error> {
    try {
      if ((await this.getProperties(path)) === undefined) {
        return new FileNotFound(`No blob at ${JSON.stringify(path)}`, { cause: conditionFailure });
      }
    } catch {
      // Storage failed on the second question; the answer to the first one still stands.
    }
    return new ContentChanged(`The blob at ${JSON.stringify(path)} changed`, { cause: conditionFailure });
  }
}

/**
 * The body, with a failure reported as a retryable `StorageUnavailable`: the SDK reports a
 * connection reset mid-body as an `AbortError` (from the response's `aborted` event), which would
 * read as the caller's own abort. Only a real abort of `signal` passes through.
 */
function failuresAsStorageUnavailable(body: Readable, path: string, signal: AbortSignal | undefined): BlobContent {
  return flowingContent(body, (error) => {
    if (signal?.aborted === true && error instanceof Error) return error;
    return new StorageUnavailable(`Azure Storage broke off the body of ${JSON.stringify(path)}`, { cause: error, retryable: true });
  });
}

/**
 * An `AzureBlobStore` authenticated by a connection string (account key or SAS), e.g. Azurite's.
 */
export function fromConnectionString(
  connectionString: string,
  container: string,
  { responseTimeoutMs, retryOptions = retryOptionsWithin(responseTimeoutMs), ...pipeline }: AzureBlobStoreOptions,
): AzureBlobStore {
  return new AzureBlobStore(new ContainerClient(connectionString, container, { ...pipeline, retryOptions }), { responseTimeoutMs });
}

/**
 * An `AzureBlobStore` authenticated with `DefaultAzureCredential` (the managed identity on App
 * Service, a developer's Azure CLI login elsewhere). `accountUrl` is e.g.
 * `https://myaccount.blob.core.windows.net`.
 */
export function fromAccountUrl(
  accountUrl: string,
  container: string,
  { responseTimeoutMs, retryOptions = retryOptionsWithin(responseTimeoutMs), ...options }: AzureBlobStoreOptions,
): AzureBlobStore {
  const base = accountUrl.replace(/\/+$/, '');
  const credential = new DefaultAzureCredential();
  const pipeline = { ...options, retryOptions };
  return new AzureBlobStore(new ContainerClient(`${base}/${container}`, credential, pipeline), { responseTimeoutMs }, new BlobServiceClient(base, credential, pipeline));
}

function isRestError(error: unknown): error is RestError {
  return error instanceof RestError || (error instanceof Error && error.name === 'RestError');
}

// A missing container is a misconfiguration, not a missing file.
function isBlobNotFound(error: unknown): boolean {
  return isRestError(error) && error.statusCode === 404 && errorCodeOf(error) !== 'ContainerNotFound';
}

// A HEAD answer has no body, so the SDK leaves `code` unset; the header still carries it.
function errorCodeOf(error: RestError): string | undefined {
  return error.code ?? error.response?.headers.get('x-ms-error-code');
}

// List Blobs returns the ETag without the quotes that the ETag header of the same blob has.
function quoted(etag: string): string {
  return etag.startsWith('"') ? etag : `"${etag}"`;
}

function toDomainError(error: unknown, path: string, signal?: AbortSignal): Error {
  if (error instanceof GatewayError) return error;
  const where = JSON.stringify(path);
  if (error instanceof Error && error.name === 'AbortError') {
    // The caller's own abort is not a storage failure; any other abort is the SDK's try timeout.
    if (signal?.aborted === true) return error;
    return new StorageUnavailable(`Azure Storage timed out on ${where}`, { cause: error, retryable: true });
  }
  if (!isRestError(error)) {
    return new StorageUnavailable(`Azure Storage failed on ${where}`, { cause: error, retryable: false });
  }
  if (isBlobNotFound(error)) return new FileNotFound(`No blob at ${where}`, { cause: error });
  const status = error.statusCode;
  // 416: the blob shrank below a range that was valid for the version checked, so it is a new version.
  if (status === 412 || status === 416) {
    return new ContentChanged(`The blob at ${where} changed`, { cause: error });
  }
  // No status: the request never got an answer (connection refused or reset, timeout).
  const retryable = status === undefined || status === 408 || status === 429 || status >= 500;
  const reason = [status, errorCodeOf(error)].filter((part) => part !== undefined).join(' ');
  return new StorageUnavailable(`Azure Storage failed on ${where}: ${reason}`, { cause: error, retryable });
}

function requireField<T>(value: T | undefined, name: string): T {
  if (value === undefined) {
    throw new StorageUnavailable(`Azure Storage sent no ${name}`, { retryable: false });
  }
  return value;
}

/** `values` without its `undefined` properties: absent HTTP properties stay absent. */
function withoutUndefined<T extends Record<string, string | undefined>>(values: T): { [K in keyof T]?: string } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as { [K in keyof T]?: string };
}
