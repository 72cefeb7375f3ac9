import type { QuotaAlertPercent, QuotaStanding } from '../domain/monthly-quota.js';
import type { WebhookDisabledReason } from '../domain/webhooks.js';

/**
 * What the core reports once it is final. The audit trail, the metrics and (later) notifications
 * subscribe; no door writes an audit record or a download metric itself.
 */

/** The door a download came through: the native API (its routes and its links), or the S3-compatible API. */
export type DownloadInterface = 'native' | 's3';

/**
 * How a download attempt ended; `linked`: the client was handed a direct link to the file (storage
 * or the gateway's signed URL serves the bytes, each use of a gateway-signed link being a download
 * of its own).
 */
export type DownloadOutcome = 'completed' | 'aborted' | 'failed' | 'refused' | 'not_modified' | 'linked';

/** Why a transfer ended before its last byte. */
export type TransferFailure = 'aborted' | 'reader-idle' | 'storage-idle' | 'storage-failed' | 'length-mismatch';

/** A download attempt, settled: its bytes delivered, its refund done, its outcome known. */
export interface DownloadSettled {
  readonly type: 'download.settled';
  readonly interface: DownloadInterface;
  readonly requestId: string;
  readonly clientId: string;
  readonly symbol: string | null;
  readonly path: string | null;
  readonly method: string;
  readonly status: number;
  /** The `Range` header as sent, when there was one. */
  readonly range: string | null;
  /** Body bytes handed to the subscriber's connection. */
  readonly bytesSent: number;
  /** What the monthly quota ledger kept for this attempt once its unsent bytes were given back. */
  readonly quotaBytes: number;
  readonly fileSize: number | null;
  readonly etag: string | null;
  readonly outcome: DownloadOutcome;
  readonly durationMs: number;
}

/** A client's monthly quota reached one of its alert shares (once per share and period). */
export interface QuotaThresholdReached {
  readonly type: 'quota.threshold';
  readonly requestId: string;
  readonly clientId: string;
  readonly percent: QuotaAlertPercent;
  readonly standing: QuotaStanding;
}

/** How a token request ended. */
export type TokenOutcome = 'issued' | 'invalid_client' | 'subscription_inactive' | 'invalid_request' | 'throttled' | 'failed';

/**
 * A token request, answered (the token endpoint, driven by @node-oauth/oauth2-server in the HTTP
 * adapter, reports it once its answer is over). Never a secret or a token.
 */
export interface TokenRequested {
  readonly type: 'token.requested';
  readonly requestId: string;
  /** The client id the request named, as sent (it may not exist), at most as long as an id may be. */
  readonly clientId: string | null;
  readonly outcome: TokenOutcome;
  readonly status: number;
  /** The caller's address, as `trust proxy` sees it. */
  readonly address: string;
  readonly durationMs: number;
}

/** A webhook endpoint stopped receiving events: it answered 410, or every retry of the schedule failed. */
export interface WebhookDisabled {
  readonly type: 'webhook.disabled';
  readonly clientId: string;
  readonly endpointId: string;
  readonly reason: WebhookDisabledReason;
  /** What happened, for the operator (never a secret; the URL is left out, as it may carry a receiver's token). */
  readonly detail: string;
  readonly attempts: number;
}

export type GatewayEvent = DownloadSettled | QuotaThresholdReached | TokenRequested | WebhookDisabled;

/** Where the core reports events. Subscribers must not throw; they are called in order, synchronously. */
export interface EventSink {
  emit(event: GatewayEvent): void;
}

/** A sink that hands every event to each subscriber, in the order they subscribed. */
export class EventBus implements EventSink {
  readonly #subscribers: Array<(event: GatewayEvent) => void> = [];

  subscribe(subscriber: (event: GatewayEvent) => void): void {
    this.#subscribers.push(subscriber);
  }

  emit(event: GatewayEvent): void {
    for (const subscriber of this.#subscribers) subscriber(event);
  }
}
