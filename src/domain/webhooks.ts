import { changedFileFields, type LoggedChange } from './changes.js';

/**
 * Webhooks after Standard Webhooks (https://www.standardwebhooks.com/): each change of a client's
 * view is POSTed to each of its endpoints, signed, at least once, in the log's order. What an
 * endpoint is, what its body says and when it is retried or given up are decided here; storing,
 * signing and sending are ports.
 */

/** The most endpoints one client may register: the registry is keyed by what clients send. */
export const MAX_WEBHOOKS_PER_CLIENT = 10;

/** The longest endpoint URL accepted, in characters. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** Why an endpoint stopped receiving events: it answered `410 Gone`, or every retry of the schedule failed. */
export type WebhookDisabledReason = 'gone' | 'retries_exhausted';

/** Where an endpoint stands in the change log: what it has been given, and what is owed. */
export interface WebhookDeliveryState {
  /**
   * The position of the last change the endpoint answered 2xx to, or that it was registered after
   * (the log's head at registration): it is owed every change of its client after this one.
   */
  readonly delivered: number;
  /** Failed attempts at the change after `delivered`; 0 when none failed. */
  readonly attempts: number;
  /** When the next attempt is due after a failure; absent when due now. */
  readonly nextAttemptAt?: Date;
}

/** One registered endpoint of one client. */
export interface WebhookEndpoint {
  /** `wh_` and 26 base32 characters (the registry makes it); its secret is derived from it. */
  readonly id: string;
  readonly clientId: string;
  readonly url: string;
  readonly enabled: boolean;
  /** Why it is disabled, when it is. */
  readonly disabled?: { readonly reason: WebhookDisabledReason; readonly at: Date; readonly detail: string };
  readonly createdAt: Date;
  /** The log's head when it was registered: it gets the changes after this position only. */
  readonly startsAfter: number;
  readonly delivery: WebhookDeliveryState;
}

/** What a registry is asked to keep for a new endpoint (it makes the id). */
export interface NewWebhookEndpoint {
  readonly clientId: string;
  readonly url: string;
  readonly createdAt: Date;
  readonly startsAfter: number;
}

/** `wh_` and 26 characters of RFC 4648 base32 (lowercase): what endpoint ids look like. */
const WEBHOOK_ID = /^wh_[a-z2-7]{26}$/;

/** Whether `id` can be an endpoint id (ids in paths are checked before any store is asked). */
export function isWebhookId(id: string): boolean {
  return WEBHOOK_ID.test(id);
}

/**
 * The body of a change's delivery: `{ "type", "timestamp", "data" }` as Standard Webhooks lays it
 * out, `data` the changed file as the feed shows it. The same bytes on every retry.
 */
export function webhookBody(change: LoggedChange): string {
  const { file } = change;
  return JSON.stringify({
    type: change.type,
    timestamp: change.time.toISOString(),
    data: changedFileFields(file),
  });
}

/** What the receiver's `Retry-After` said: a delay in seconds or a date (RFC 9110 section 10.2.3). */
export type RetryAfter = { readonly seconds: number } | { readonly date: Date };

/** How one attempt ended. */
export type DeliveryOutcome =
  | { readonly kind: 'answered'; readonly status: number; readonly retryAfter?: RetryAfter }
  /** No answer: refused by the address guard, no connection, timed out, reset. */
  | { readonly kind: 'failed'; readonly reason: string };

/** What follows an attempt at the change at `position`. */
export type DeliveryVerdict =
  | { readonly kind: 'delivered'; readonly state: WebhookDeliveryState }
  | { readonly kind: 'retry'; readonly state: WebhookDeliveryState }
  | { readonly kind: 'disable'; readonly state: WebhookDeliveryState; readonly reason: WebhookDisabledReason; readonly detail: string };

/**
 * Decides what follows one attempt. A 2xx delivers (never again to this endpoint); `410 Gone`
 * disables at once; any other answer or failure is retried after `schedule[attempts - 1]` seconds,
 * or after what `Retry-After` asked when it did (at most the schedule's longest delay, so a
 * receiver cannot park an endpoint for ever), until the schedule is spent: then it is disabled.
 */
export function decideDelivery(
  state: WebhookDeliveryState,
  position: number,
  outcome: DeliveryOutcome,
  schedule: readonly number[],
  now: Date,
): DeliveryVerdict {
  if (outcome.kind === 'answered' && outcome.status >= 200 && outcome.status <= 299) {
    return { kind: 'delivered', state: { delivered: position, attempts: 0 } };
  }
  const attempts = state.attempts + 1;
  const what = outcome.kind === 'answered' ? `answered ${outcome.status}` : outcome.reason;
  if (outcome.kind === 'answered' && outcome.status === 410) {
    return { kind: 'disable', state: { delivered: state.delivered, attempts }, reason: 'gone', detail: `the endpoint answered 410 Gone to ${changeLabel(position)}` };
  }
  const scheduled = schedule[attempts - 1];
  if (scheduled === undefined) {
    return {
      kind: 'disable',
      state: { delivered: state.delivered, attempts },
      reason: 'retries_exhausted',
      detail: `${attempts} attempts at ${changeLabel(position)} failed, the last ${what}`,
    };
  }
  const longest = Math.max(...schedule);
  const asked = outcome.kind === 'answered' && outcome.retryAfter !== undefined ? retryAfterSeconds(outcome.retryAfter, now) : undefined;
  const delaySeconds = asked === undefined ? scheduled : Math.min(asked, longest);
  return { kind: 'retry', state: { delivered: state.delivered, attempts, nextAttemptAt: new Date(now.getTime() + delaySeconds * 1000) } };
}

/** Whole seconds from `now` that `Retry-After` asks for, never negative. */
function retryAfterSeconds(retryAfter: RetryAfter, now: Date): number {
  const seconds = 'seconds' in retryAfter ? retryAfter.seconds : Math.ceil((retryAfter.date.getTime() - now.getTime()) / 1000);
  return Math.max(0, seconds);
}

function changeLabel(position: number): string {
  return `the change at position ${position}`;
}
