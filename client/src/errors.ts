/** What went wrong, stable enough to branch on (the `dfg` exit code is chosen from it). */
export type ClientErrorCode =
  /** The gateway refused the credentials (token endpoint 400/401, or a 401 after a fresh token). */
  | 'auth_failed'
  /** The gateway answered an error status the client does not retry (its `code` is in `serverCode`). */
  | 'http_error'
  /** The call's deadline passed (headers not received in time, or retries outlasted it). */
  | 'deadline_exceeded'
  /** The connection failed and retries did not help. */
  | 'network_error'
  /** The caller's signal aborted the call. */
  | 'aborted'
  /** A download stopped sending bytes for longer than the idle timeout. */
  | 'idle_timeout'
  /** A storage path from the server would land outside the target folder, or on a reserved name. */
  | 'unsafe_path'
  /** The bytes received did not match the size or MD5 the server reported. */
  | 'integrity_failed'
  /** The gateway answered something the contract does not allow (e.g. a 206 at the wrong offset). */
  | 'protocol_error'
  /** Credentials could not be loaded (no profile, unsafe profile permissions, bad JSON). */
  | 'invalid_profile';

/** The one error type of the client: a stable `code`, the HTTP status and the gateway's own `code` when there was an answer. */
export class GatewayClientError extends Error {
  override readonly name = 'GatewayClientError';
  readonly code: ClientErrorCode;
  readonly status: number | undefined;
  readonly serverCode: string | undefined;

  constructor(code: ClientErrorCode, message: string, details: { status?: number; serverCode?: string; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.status = details.status;
    this.serverCode = details.serverCode;
  }
}

export const isClientError = (error: unknown, code?: ClientErrorCode): error is GatewayClientError =>
  error instanceof GatewayClientError && (code === undefined || error.code === code);
