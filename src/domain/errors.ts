/**
 * The outcomes the domain names. Each `code` is also the stable, machine-readable `code` of the
 * JSON error body a subscriber receives; the HTTP adapter alone (`src/adapters/http/error-responses.ts`)
 * turns a code into a status, headers and a body.
 */
export type DomainErrorCode =
  | 'not_entitled'
  | 'file_not_found'
  | 'catalog_not_found'
  | 'index_malformed'
  | 'invalid_path'
  | 'content_changed'
  | 'storage_unavailable'
  | 'storage_failed'
  | 'invalid_client'
  | 'invalid_token'
  | 'unauthorized_client'
  | 'quota_exceeded'
  | 'cursor_expired'
  | 'rate_limited'
  | 'limits_unavailable'
  | 'webhook_url_refused'
  | 'webhook_not_found'
  | 'webhook_limit_reached';

/** The one base class of the domain's errors: a `code`, a message safe to show, the original `cause`. */
export class GatewayError extends Error {
  readonly code: DomainErrorCode;

  constructor(code: DomainErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** The symbol or path is not in the caller's index. */
export class NotEntitled extends GatewayError {
  constructor(message: string) {
    super('not_entitled', message);
  }
}

/** The caller is entitled to the file (or the gateway asked for a blob), but storage does not have it. */
export class FileNotFound extends GatewayError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('file_not_found', message, options);
  }
}

/** The caller has no index, so no catalog. */
export class CatalogNotFound extends GatewayError {
  constructor(message: string) {
    super('catalog_not_found', message);
  }
}

/** The caller's index exists but cannot be parsed; only that caller is affected. */
export class IndexMalformed extends GatewayError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('index_malformed', message, options);
  }
}

/** A storage path that could escape the store or its caller's index (`..`, NUL, backslash, ...). */
export class InvalidPath extends GatewayError {
  constructor(message: string) {
    super('invalid_path', message);
  }
}

/** The blob changed between the property read and the data read: the bytes would not match the headers. */
export class ContentChanged extends GatewayError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('content_changed', message, options);
  }
}

/**
 * Storage failed or could not be reached. `retryable` (throttling, 5xx, timeouts, resets) gives the
 * code `storage_unavailable`; anything else (a missing container, a refused credential) is
 * `storage_failed`.
 */
export class StorageUnavailable extends GatewayError {
  readonly retryable: boolean;

  constructor(message: string, options: { cause?: unknown; retryable: boolean }) {
    super(options.retryable ? 'storage_unavailable' : 'storage_failed', message, options);
    this.retryable = options.retryable;
  }
}

/** Unknown client, wrong secret or disabled client (RFC 6749 section 5.2 `invalid_client`). */
export class InvalidClient extends GatewayError {
  constructor(message: string) {
    super('invalid_client', message);
  }
}

/** Malformed, forged, expired or revoked bearer token (RFC 6750 section 3.1 `invalid_token`). */
export class InvalidToken extends GatewayError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_token', message, options);
  }
}

/**
 * A cursor that can no longer continue: a `/list` cursor made from a version of the caller's index
 * that has since changed, or a `/changes` cursor older than the feed's retention (or from before a
 * reset of its log). Either way: list again from the start.
 */
export class CursorExpired extends GatewayError {
  constructor(message: string) {
    super('cursor_expired', message);
  }
}

/**
 * A client that authenticated but whose subscription term is not in force (RFC 6749 section 5.2
 * `unauthorized_client`: the client is known and its secret right, it may just not have a token now).
 */
export class SubscriptionInactive extends GatewayError {
  constructor(message: string) {
    super('unauthorized_client', message);
  }
}

/** A download or link that does not fit what is left of the client's monthly byte quota. */
export class QuotaExceeded extends GatewayError {
  /** Bytes left in the period. */
  readonly remaining: number;
  /** When the period resets. */
  readonly resetsAt: Date;
  /** Whole seconds until then, at least 1 (`Retry-After`). */
  readonly retryAfterSeconds: number;

  constructor(message: string, details: { readonly remaining: number; readonly resetsAt: Date; readonly retryAfterSeconds: number }) {
    super('quota_exceeded', message);
    this.remaining = details.remaining;
    this.resetsAt = details.resetsAt;
    this.retryAfterSeconds = details.retryAfterSeconds;
  }
}

/** Where a client stands in one of its request budgets (downloads per window). */
export interface BudgetStanding {
  /** The budget's name, as the `RateLimit` fields show it (`downloads`). */
  readonly name: string;
  readonly limit: number;
  readonly remaining: number;
  readonly windowSeconds: number;
  /** Whole seconds until the window resets, at least 1. */
  readonly resetSeconds: number;
  /** The key the budget is counted under (hashed before it is shown). */
  readonly key: string;
}

/** A client whose budget is spent for now: `Retry-After` says when it may try again. */
export class RateLimited extends GatewayError {
  readonly retryAfterSeconds: number;
  /** The budget that refused, when the refusal came from counting (shown in the `RateLimit` fields). */
  readonly standing: BudgetStanding | undefined;

  constructor(message: string, details: { readonly retryAfterSeconds: number; readonly standing?: BudgetStanding }) {
    super('rate_limited', message);
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.standing = details.standing;
  }
}

/**
 * The store that counts limits or quotas cannot be read and RATE_LIMIT_ON_STORE_ERROR=deny: the
 * request is refused rather than let through uncounted.
 */
export class LimitsUnavailable extends GatewayError {
  readonly retryAfterSeconds: number;

  constructor(message: string, details: { readonly retryAfterSeconds: number; readonly cause?: unknown }) {
    super('limits_unavailable', message, { cause: details.cause });
    this.retryAfterSeconds = details.retryAfterSeconds;
  }
}

/** A webhook URL the gateway will not call: not `https`, not a public address, malformed or too long. */
export class WebhookUrlRefused extends GatewayError {
  constructor(message: string) {
    super('webhook_url_refused', message);
  }
}

/** No webhook endpoint with this id among the caller's own (another client's is not found either). */
export class WebhookNotFound extends GatewayError {
  constructor(message: string) {
    super('webhook_not_found', message);
  }
}

/** The client already has as many webhook endpoints as it may (`MAX_WEBHOOKS_PER_CLIENT`). */
export class WebhookLimitReached extends GatewayError {
  constructor(message: string) {
    super('webhook_limit_reached', message);
  }
}

/**
 * The change scanner would hold more than its memory budget (the listing of storage and the rows
 * of every index some client names): the scan is abandoned before it holds it, and no change is
 * recorded until the budget is raised or storage and the indexes shrink. An operator's error, never
 * a subscriber's answer.
 */
export class ChangeScannerOverBudget extends Error {
  constructor(
    readonly heldBytes: number,
    readonly budgetBytes: number,
    readonly counted: { readonly blobs: number; readonly indexes: number; readonly rows: number },
  ) {
    const mib = (bytes: number): string => (bytes / (1024 * 1024)).toFixed(1);
    super(
      `the change scanner would hold more than its budget of ${mib(budgetBytes)} MiB: ${mib(heldBytes)} MiB counted when it stopped, ` +
        `for a listing of ${counted.blobs} blobs and ${counted.rows} rows of ${counted.indexes} indexes`,
    );
    this.name = 'ChangeScannerOverBudget';
  }
}
