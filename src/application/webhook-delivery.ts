import type { LoggedChange } from '../domain/changes.js';
import type { ChangeLog, Clock, Signer, WebhookRegistry, WebhookSender } from '../domain/ports.js';
import { decideDelivery, webhookBody, type WebhookDeliveryState, type WebhookEndpoint } from '../domain/webhooks.js';
import type { EventSink } from './events.js';

/** Reads of the log per endpoint and tick, so passing over old changes is bounded too. */
const MAX_READS_PER_TICK = 10;

export interface WebhookDeliveryOptions {
  readonly registry: WebhookRegistry;
  readonly log: ChangeLog;
  readonly sender: WebhookSender;
  readonly signer: Signer;
  readonly clock: Clock;
  /** WEBHOOK_RETRY_SECONDS: the delay before each retry, in order; spent, the endpoint is disabled. */
  readonly retrySeconds: readonly number[];
  /** Where `webhook.disabled` is reported (the audit trail subscribes). */
  readonly events: EventSink;
  /** Changes sent to one endpoint per tick at most, so one busy endpoint cannot hold a tick for long. */
  readonly changesPerTick?: number;
  /** Endpoints served at once. */
  readonly concurrency?: number;
  /** Told of what failed for one endpoint (the registry or the log could not be read or written); the others go on. */
  readonly onError?: (error: unknown, endpoint: WebhookEndpoint | undefined) => void;
}

/** What one tick did. */
export interface WebhookTickSummary {
  /** Deliveries tried. */
  readonly attempts: number;
  /** Deliveries answered 2xx. */
  readonly delivered: number;
  /** Endpoints disabled (410, or the schedule spent). */
  readonly disabled: number;
}

/**
 * Delivers the change log to the webhook endpoints: at least once, in the log's order per endpoint
 * (a change is not sent before the one before it was answered 2xx), never again once answered 2xx,
 * retried on WEBHOOK_RETRY_SECONDS. Where each endpoint stands lives in the registry, written after
 * every attempt, so a restart (or another instance taking over) goes on where it stopped; the log
 * holds the changes themselves. Driven by `tick`, which the instance that holds the scanner's lease
 * calls after each scan: exactly one instance delivers at a time.
 */
export class WebhookDelivery {
  readonly #options: WebhookDeliveryOptions;
  #running: Promise<WebhookTickSummary> | undefined;

  constructor(options: WebhookDeliveryOptions) {
    if (options.retrySeconds.length === 0) throw new Error('The webhook retry schedule needs at least one delay');
    this.#options = options;
  }

  /**
   * Sends every endpoint that is due (no retry pending after `now`) the changes it is owed, up to
   * `changesPerTick` each. A tick called while one runs gets that one's summary.
   */
  tick(now: Date = this.#options.clock.now()): Promise<WebhookTickSummary> {
    this.#running ??= this.#tick(now).finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #tick(now: Date): Promise<WebhookTickSummary> {
    const totals = { attempts: 0, delivered: 0, disabled: 0 };
    let endpoints: readonly WebhookEndpoint[];
    try {
      endpoints = await this.#options.registry.enabled();
    } catch (error) {
      this.#options.onError?.(error, undefined);
      return totals;
    }
    const due = endpoints.filter((endpoint) => endpoint.delivery.nextAttemptAt === undefined || endpoint.delivery.nextAttemptAt <= now);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < due.length) {
        const endpoint = due[next] as WebhookEndpoint;
        next += 1;
        try {
          await this.#serve(endpoint, totals);
        } catch (error) {
          this.#options.onError?.(error, endpoint);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#options.concurrency ?? 8, due.length) }, worker));
    return totals;
  }

  /**
   * Sends `endpoint` its changes in order until one fails, `changesPerTick` were sent, or it is
   * removed. A change found before the endpoint was registered is passed over, not sent: an
   * endpoint registered where the log's head was not known (the operator's CLI) starts at 0.
   */
  async #serve(endpoint: WebhookEndpoint, totals: { attempts: number; delivered: number; disabled: number }): Promise<void> {
    const { registry, log, retrySeconds, clock } = this.#options;
    const perTick = this.#options.changesPerTick ?? 100;
    let state: WebhookDeliveryState = endpoint.delivery;
    let passedOver = false;
    let sent = 0;
    const record = (): Promise<boolean> => registry.update(endpoint.clientId, endpoint.id, { delivery: state });
    for (let reads = 0; reads < MAX_READS_PER_TICK && sent < perTick; reads += 1) {
      const changes = await log.read(endpoint.clientId, state.delivered, perTick);
      if (changes.length === 0) break;
      for (const change of changes) {
        if (change.time < endpoint.createdAt) {
          state = { delivered: change.position, attempts: 0 };
          passedOver = true;
          continue;
        }
        if (sent === perTick) break;
        sent += 1;
        totals.attempts += 1;
        const outcome = await this.#options.sender.send(this.#request(endpoint, change));
        const verdict = decideDelivery(state, change.position, outcome, retrySeconds, clock.now());
        state = verdict.state;
        passedOver = false;
        if (verdict.kind === 'delivered') {
          totals.delivered += 1;
          if (!(await record())) return;
          continue;
        }
        if (verdict.kind === 'retry') {
          await record();
          return;
        }
        const disabled = { reason: verdict.reason, at: clock.now(), detail: verdict.detail };
        if (await registry.update(endpoint.clientId, endpoint.id, { delivery: state, disabled })) {
          totals.disabled += 1;
          this.#options.events.emit({
            type: 'webhook.disabled',
            clientId: endpoint.clientId,
            endpointId: endpoint.id,
            reason: verdict.reason,
            detail: verdict.detail,
            attempts: state.attempts,
          });
        }
        return;
      }
    }
    if (passedOver) await record();
  }

  /** Standard Webhooks: the change's id on every retry, the time of this attempt, `v1,` and the HMAC of `id.timestamp.body`. */
  #request(endpoint: WebhookEndpoint, change: LoggedChange): { url: string; headers: Record<string, string>; body: string } {
    const body = webhookBody(change);
    const timestamp = String(Math.floor(this.#options.clock.now().getTime() / 1000));
    const signature = this.#options.signer.webhookSignature(endpoint.id, `${change.id}.${timestamp}.${body}`);
    return {
      url: endpoint.url,
      headers: { 'webhook-id': change.id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` },
      body,
    };
  }
}
