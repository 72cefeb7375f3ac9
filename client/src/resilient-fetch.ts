import { GatewayClientError } from './errors.js';
import { decideRetry, type AttemptOutcome, type RetryOptions, type RetryReason } from './retry-policy.js';

/** Reported before each wait, so callers can see (and react to) throttling. */
export interface RetryEvent {
  readonly method: string;
  readonly url: string;
  readonly reason: RetryReason;
  /** The status that caused the retry; absent for a connection failure. */
  readonly status?: number;
  /** What the server's `Retry-After` asked for, in milliseconds. */
  readonly retryAfterMs?: number;
  readonly delayMs: number;
  /** 1 for the first retry. */
  readonly retry: number;
}

export type FetchFunction = (request: Request) => Promise<Response>;

export interface ResilientFetchOptions {
  readonly fetch: FetchFunction;
  readonly retry: RetryOptions;
  readonly onRetry?: (event: RetryEvent) => void;
  readonly random?: () => number;
  readonly now?: () => number;
}

/**
 * A `fetch` that retries by `decideRetry`, gives each attempt `attemptTimeoutMs` to answer with
 * headers and the whole call `deadlineMs`. The body of the answer it returns is still tied to the
 * caller's signal, never to those timers: a download may take as long as it keeps moving bytes.
 */
export function createResilientFetch(options: ResilientFetchOptions): FetchFunction {
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  const { retry } = options;

  return async (request) => {
    const template = request.clone();
    const callerSignal = request.signal;
    const deadline = now() + retry.deadlineMs;
    let retries = 0;
    for (;;) {
      const attempt = await attemptOnce(template.clone(), callerSignal, Math.min(retry.attemptTimeoutMs, Math.max(0, deadline - now())), options.fetch);
      const outcome: AttemptOutcome = attempt instanceof Response ? { status: attempt.status, retryAfter: attempt.headers.get('retry-after') } : { connectionFailed: true };
      const decision = decideRetry(outcome, retries, retry, random, now());
      if (!decision.retry || now() + decision.delayMs > deadline) {
        if (attempt instanceof Response) return attempt;
        if (decision.retry) throw new GatewayClientError('deadline_exceeded', `${request.method} ${request.url}: no answer within the ${retry.deadlineMs} ms deadline`, { cause: attempt });
        throw attempt;
      }
      if (attempt instanceof Response) await attempt.body?.cancel().catch(() => undefined);
      retries += 1;
      options.onRetry?.({
        method: request.method,
        url: request.url,
        reason: decision.reason,
        ...(attempt instanceof Response && { status: attempt.status }),
        ...(decision.retryAfterMs !== undefined && { retryAfterMs: decision.retryAfterMs }),
        delayMs: decision.delayMs,
        retry: retries,
      });
      await wait(decision.delayMs, callerSignal);
    }
  };
}

/**
 * One attempt: the answer, or the connection failure as a `GatewayClientError` (to be retried).
 * Aborts by the caller are thrown at once: they are never retried.
 */
async function attemptOnce(request: Request, callerSignal: AbortSignal, timeoutMs: number, fetchFn: FetchFunction): Promise<Response | GatewayClientError> {
  if (callerSignal.aborted) throw abortedError(request, callerSignal);
  // The attempt's own timer only ever fires before the headers; after them the body follows the caller alone.
  const attemptTimer = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    attemptTimer.abort(new Error('attempt timeout'));
  }, timeoutMs);
  try {
    return await fetchFn(new Request(request, { signal: AbortSignal.any([callerSignal, attemptTimer.signal]) }));
  } catch (error) {
    if (callerSignal.aborted) throw abortedError(request, callerSignal);
    if (timedOut) return new GatewayClientError('deadline_exceeded', `${request.method} ${request.url}: no answer within ${timeoutMs} ms`, { cause: error });
    return new GatewayClientError('network_error', `${request.method} ${request.url}: ${describeFailure(error)}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

const abortedError = (request: Request, signal: AbortSignal): GatewayClientError =>
  new GatewayClientError('aborted', `${request.method} ${request.url}: aborted`, { cause: signal.reason });

/** Node's fetch says only "fetch failed"; the socket's own error (ECONNRESET, ECONNREFUSED) is in `cause`. */
export function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  if (cause instanceof Error) return `${error.message} (${(cause as NodeJS.ErrnoException).code ?? cause.message})`;
  return error.message;
}

/** Resolves after `ms`, or rejects as soon as `signal` aborts. */
export function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new GatewayClientError('aborted', 'aborted while waiting to retry', { cause: signal.reason }));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new GatewayClientError('aborted', 'aborted while waiting to retry', { cause: signal.reason }));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
