/**
 * When to try a request again, and how long to wait first. Pure: the clock and the random source
 * are parameters, so the rules are testable without waiting.
 */
export interface RetryOptions {
  /** Retries after the first attempt (429, 503, 5xx, connection failures). */
  readonly maxRetries: number;
  /** First exponential back-off ceiling; doubles per retry (full jitter below it). */
  readonly baseDelayMs: number;
  /** Largest exponential back-off. */
  readonly maxDelayMs: number;
  /** The longest `Retry-After` obeyed; a longer one is waited for this long, then the request is tried again. */
  readonly maxRetryAfterMs: number;
  /** How long one attempt may take to receive response headers. */
  readonly attemptTimeoutMs: number;
  /** How long a whole call may take, retries and waits included, until its headers arrive. */
  readonly deadlineMs: number;
  /** How long a download body may go without a byte before it is cut. */
  readonly idleTimeoutMs: number;
}

export const defaultRetryOptions: RetryOptions = {
  maxRetries: 8,
  baseDelayMs: 250,
  maxDelayMs: 15_000,
  maxRetryAfterMs: 120_000,
  attemptTimeoutMs: 30_000,
  deadlineMs: 10 * 60_000,
  idleTimeoutMs: 60_000,
};

export type RetryReason = 'rate_limited' | 'unavailable' | 'server_error' | 'connection_failed';

export type RetryDecision =
  | { readonly retry: false }
  | { readonly retry: true; readonly delayMs: number; readonly reason: RetryReason; readonly retryAfterMs?: number };

/** What an attempt ended with: a status (and its `Retry-After`), or a connection failure. */
export type AttemptOutcome = { readonly status: number; readonly retryAfter?: string | null } | { readonly connectionFailed: true };

/**
 * `Retry-After` as milliseconds (RFC 9110 section 10.2.3: delay-seconds or an HTTP-date), or
 * undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  // IMF-fixdate, the one HTTP-date form senders generate (RFC 9110 section 5.6.7); Date.parse alone reads "-3" as a year.
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** A `Retry-After` beyond this is not waited for at all. */
const NOT_WORTH_WAITING_MS = 24 * 3600 * 1000;

/**
 * 429 and 503 wait what `Retry-After` says (capped; not at all beyond a day), other 5xx and connection failures back off
 * exponentially with full jitter; every other status (4xx included: retrying cannot change the
 * answer) is final. 401 is not retried here: the token layer refreshes and retries it once.
 */
export function decideRetry(outcome: AttemptOutcome, retriesSoFar: number, options: RetryOptions, random: () => number, nowMs: number): RetryDecision {
  if (retriesSoFar >= options.maxRetries) return { retry: false };
  const backoff = (): number => Math.round(random() * Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** retriesSoFar));
  if ('connectionFailed' in outcome) return { retry: true, delayMs: backoff(), reason: 'connection_failed' };
  const { status } = outcome;
  if (status === 429 || status === 503) {
    const retryAfterMs = parseRetryAfter(outcome.retryAfter, nowMs);
    const reason = status === 429 ? 'rate_limited' : 'unavailable';
    if (retryAfterMs === undefined) return { retry: true, delayMs: backoff(), reason };
    // A wait of more than a day (a monthly byte quota used up: Retry-After is the month's reset)
    // is not one a retry loop should sit out: the call fails now with the server's answer.
    if (retryAfterMs > NOT_WORTH_WAITING_MS) return { retry: false };
    // Never earlier than asked; a little later so that clients told the same moment do not return together.
    const capped = Math.min(retryAfterMs, options.maxRetryAfterMs);
    return { retry: true, delayMs: capped + Math.round(random() * Math.min(1000, capped / 10)), reason, retryAfterMs };
  }
  if (status >= 500 && status <= 599 && status !== 501 && status !== 505) {
    return { retry: true, delayMs: backoff(), reason: 'server_error' };
  }
  return { retry: false };
}
