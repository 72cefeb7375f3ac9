/**
 * The outcomes the domain names. The HTTP adapter alone maps each `code` to a status and a body
 * (see `src/adapters/http/error-mapping.ts`).
 */
export type GatewayErrorCode =
  | 'NotEntitled'
  | 'NotFound'
  | 'CatalogNotFound'
  | 'IndexMalformed'
  | 'InvalidPath'
  | 'ContentChanged'
  | 'StorageUnavailable'
  | 'InvalidClient'
  | 'InvalidToken';

export class GatewayError extends Error {
  readonly code: GatewayErrorCode;

  constructor(code: GatewayErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** The symbol or path is not in the caller's index. */
export class NotEntitled extends GatewayError {
  constructor(message: string) {
    super('NotEntitled', message);
  }
}

/** The caller is entitled to the file, but storage does not have it. */
export class NotFound extends GatewayError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('NotFound', message, options);
  }
}

/** The caller has no index, so no catalog. */
export class CatalogNotFound extends GatewayError {
  constructor(message: string) {
    super('CatalogNotFound', message);
  }
}

/** The caller's index exists but cannot be parsed; only that caller is affected. */
export class IndexMalformed extends GatewayError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('IndexMalformed', message, options);
  }
}

/** A storage path that could escape the store or its caller's index (`..`, NUL, backslash, ...). */
export class InvalidPath extends GatewayError {
  constructor(message: string) {
    super('InvalidPath', message);
  }
}

/** The blob changed between the property read and the data read: the bytes would not match the headers. */
export class ContentChanged extends GatewayError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ContentChanged', message, options);
  }
}

/** Storage failed or could not be reached. `retryable` is true for throttling and 5xx answers. */
export class StorageUnavailable extends GatewayError {
  readonly retryable: boolean;

  constructor(message: string, options: { cause?: unknown; retryable: boolean }) {
    super('StorageUnavailable', message, options);
    this.retryable = options.retryable;
  }
}

/** Unknown client, wrong secret or disabled client (RFC 6749 section 5.2 `invalid_client`). */
export class InvalidClient extends GatewayError {
  constructor(message: string) {
    super('InvalidClient', message);
  }
}

/** Malformed, forged, expired or revoked bearer token (RFC 6750 section 3.1 `invalid_token`). */
export class InvalidToken extends GatewayError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('InvalidToken', message, options);
  }
}
