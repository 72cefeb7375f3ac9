export { createClient, parseContentRange } from './gateway-client.js';
export type { ClientOptions, GatewayClient } from './gateway-client.js';
export type {
  Account,
  CallOptions,
  Catalog,
  ChangeEvent,
  ChangeFeed,
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
export { GatewayClientError, isClientError, type ClientErrorCode } from './errors.js';
export { defaultRetryOptions, decideRetry, parseRetryAfter, type RetryOptions, type RetryDecision, type RetryReason } from './retry-policy.js';
export type { RetryEvent } from './resilient-fetch.js';
export type { FileOutcome, FileReport, SyncEvent, SyncOptions, SyncReport } from './sync/sync-catalog.js';
export type { ChangeOutcome, ChangeReport, WatchOptions } from './sync/watch-changes.js';
export type { components, paths } from './generated/api-types.js';
