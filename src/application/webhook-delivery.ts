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
  /** Changes sent to one endpoint per turn at most (100 when absent). */
  readonly changesPerTick?: number;
  /**
   * How long one endpoint's turn may go on sending (30 s when absent): a slow receiver (each attempt
   * may take up to the sender's 10 s) gives its lane up and goes on at a later tick.
   */
  readonly turnMs?: number;
  /** Endpoints served at once, in all (32 when absent). */
  readonly concurrency?: number;
  /** Endpoints of one client served at once (2 when absent): one client's slow receivers never take every lane. */
  readonly concurrencyPerClient?: number;
  /**
   * Whether this instance still holds the scanner lease: a lane that lost it stops after the attempt
   * under way, so two instances never serve one endpoint for long (always, when absent).
   */
  readonly leading?: () => boolean;
  /** Told of what failed for one endpoint (the registry or the log could not be read or written); the others go on. */
  readonly onError?: (error: unknown, endpoint: WebhookEndpoint | undefined) => void;
}

/** What the turns one tick started did. */
export interface WebhookTickSummary {
  /** Deliveries tried. */
  readonly attempts: number;
  /** Deliveries answered 2xx. */
  readonly delivered: number;
  /** Endpoints disabled (410, or the schedule spent). */
  readonly disabled: number;
}

/** Where an endpoint's turn is kept: its client and id. */
function turnKey(endpoint: WebhookEndpoint): string {
  return `${endpoint.clientId}\0${endpoint.id}`;
}

/** The lanes one tick started, and the totals their turns add to as they go. */
interface StartedTurns {
  readonly turns: readonly Promise<void>[];
  readonly totals: { attempts: number; delivered: number; disabled: number };
}

/**
 * Delivers the change log to the webhook endpoints: at least once, in the log's order per endpoint
 * (a change is not sent before the one before it was answered 2xx), never again once answered 2xx,
 * retried on WEBHOOK_RETRY_SECONDS. Where each endpoint stands lives in the registry, written after
 * every attempt, so a restart (or another instance taking over) goes on where it stopped; the log
 * holds the changes themselves. Driven by `tick`, which the instance that holds the scanner's lease
 * calls after each scan and every few seconds: exactly one instance delivers at a time.
 *
 * Each endpoint is served in a turn of its own, never two at once (so its order holds), and a tick
 * starts a turn for every due endpoint that has none running, within the bounds of lanes in all and
 * per client: a slow receiver holds its own lane for at most `turnMs`, never a tick, a scan or
 * another endpoint.
 */
export class WebhookDelivery {
  readonly #options: WebhookDeliveryOptions;
  /** The turn running for each endpoint (by `turnKey`). */
  readonly #turns = new Map<string, Promise<void>>();
  /**
   * A count of turns ended, and the count when each endpoint's last turn ended: a copy of an
   * endpoint read from the registry before its last turn ended is out of date (what it delivered,
   * its retry time) and never starts a turn. One entry per endpoint that had a turn; entries of
   * endpoints no longer enabled are dropped at each tick.
   */
  #turnsEnded = 0;
  readonly #endedAt = new Map<string, number>();
  /** Where the next tick starts handing lanes out among clients (round robin: no client first every time). */
  #firstClient = 0;
  /** Every lane running (it never rejects: a turn's failure goes to `onError`). */
  readonly #lanes = new Set<Promise<void>>();
  /** Lanes running per client (bounded by the registered clients: at most 10 endpoints each). */
  readonly #perClient = new Map<string, number>();
  /** A tick reading the registry and starting turns; ticks meanwhile share it. */
  #starting: Promise<StartedTurns> | undefined;

  constructor(options: WebhookDeliveryOptions) {
    if (options.retrySeconds.length === 0) throw new Error('The webhook retry schedule needs at least one delay');
    this.#options = options;
  }

  /**
   * Starts a turn for every endpoint that is due (no retry pending after `now`) and has none
   * running, within the lanes free; resolves with what those turns did once they end. Callers that
   * must not wait on receivers (the scanner, the timer) do not await it. A tick called while another
   * still reads the registry shares that one's turns.
   */
  async tick(now: Date = this.#options.clock.now()): Promise<WebhookTickSummary> {
    this.#starting ??= this.#start(now).finally(() => {
      this.#starting = undefined;
    });
    const { turns, totals } = await this.#starting;
    await Promise.all(turns);
    return totals;
  }

  /** Resolves once no tick reads the registry and no lane is running (tests; a draining instance). */
  async idle(): Promise<void> {
    while (this.#starting !== undefined || this.#lanes.size > 0) await Promise.all([this.#starting, ...this.#lanes]);
  }

  /** Endpoints being served now (for metrics and tests). */
  get running(): number {
    return this.#turns.size;
  }

  async #start(now: Date): Promise<StartedTurns> {
    const totals = { attempts: 0, delivered: 0, disabled: 0 };
    // Turns that end after this are newer than what the registry is about to answer.
    const readAt = this.#turnsEnded;
    let endpoints: readonly WebhookEndpoint[];
    try {
      endpoints = await this.#options.registry.enabled();
    } catch (error) {
      this.#options.onError?.(error, undefined);
      return { turns: [], totals };
    }
    const enabled = new Set(endpoints.map(turnKey));
    for (const key of this.#endedAt.keys()) if (!enabled.has(key) && !this.#turns.has(key)) this.#endedAt.delete(key);
    const lanes = this.#options.concurrency ?? 32;
    const lanesPerClient = this.#options.concurrencyPerClient ?? 2;
    // Each client's due endpoints without a turn, served by at most its free lanes, one after another.
    const queues = new Map<string, WebhookEndpoint[]>();
    for (const endpoint of endpoints) {
      const due = endpoint.delivery.nextAttemptAt === undefined || endpoint.delivery.nextAttemptAt <= now;
      if (!due || !this.#current(endpoint, readAt)) continue;
      const queue = queues.get(endpoint.clientId);
      if (queue === undefined) queues.set(endpoint.clientId, [endpoint]);
      else queue.push(endpoint);
    }
    const started: Promise<void>[] = [];
    const clients = [...queues.keys()];
    const first = clients.length === 0 ? 0 : this.#firstClient % clients.length;
    this.#firstClient += 1;
    for (const clientId of [...clients.slice(first), ...clients.slice(0, first)]) {
      const queue = queues.get(clientId) as WebhookEndpoint[];
      const free = Math.min(lanesPerClient - (this.#perClient.get(clientId) ?? 0), queue.length, lanes - this.#lanes.size);
      for (let i = 0; i < free; i += 1) {
        const lane = this.#lane(clientId, queue, readAt, totals);
        this.#lanes.add(lane);
        void lane.finally(() => this.#lanes.delete(lane));
        started.push(lane);
      }
    }
    return { turns: started, totals };
  }

  /** Whether `endpoint`, as read from the registry when `readAt` turns had ended, may start a turn: none runs, and none ended since. */
  #current(endpoint: WebhookEndpoint, readAt: number): boolean {
    const key = turnKey(endpoint);
    return !this.#turns.has(key) && (this.#endedAt.get(key) ?? 0) <= readAt;
  }

  /** One lane of a client: serves the endpoints of `queue` one after another (those still current: no turn elsewhere meanwhile). */
  async #lane(clientId: string, queue: WebhookEndpoint[], readAt: number, totals: StartedTurns['totals']): Promise<void> {
    this.#perClient.set(clientId, (this.#perClient.get(clientId) ?? 0) + 1);
    try {
      for (let endpoint = queue.shift(); endpoint !== undefined; endpoint = queue.shift()) {
        if (!this.#current(endpoint, readAt)) continue;
        const key = turnKey(endpoint);
        const turn = this.#serve(endpoint, totals).catch((error: unknown) => this.#options.onError?.(error, endpoint));
        this.#turns.set(key, turn);
        try {
          await turn;
        } finally {
          this.#turns.delete(key);
          this.#turnsEnded += 1;
          this.#endedAt.set(key, this.#turnsEnded);
        }
      }
    } finally {
      const left = (this.#perClient.get(clientId) ?? 1) - 1;
      if (left === 0) this.#perClient.delete(clientId);
      else this.#perClient.set(clientId, left);
    }
  }

  /**
   * Sends `endpoint` its changes in order until one fails, `changesPerTick` were sent, or it is
   * removed. A change found before the endpoint was registered is passed over, not sent: an
   * endpoint registered where the log's head was not known (the operator's CLI) starts at 0.
   */
  async #serve(endpoint: WebhookEndpoint, totals: { attempts: number; delivered: number; disabled: number }): Promise<void> {
    const { registry, log, retrySeconds, clock } = this.#options;
    const perTick = this.#options.changesPerTick ?? 100;
    const turnEnds = clock.now().getTime() + (this.#options.turnMs ?? 30_000);
    let sent = 0;
    // The turn is spent once it sent its share, or sent something and ran out of time: the endpoint
    // goes on at a later tick, its lane free meanwhile.
    const spent = (): boolean => sent === perTick || (sent > 0 && clock.now().getTime() >= turnEnds) || this.#options.leading?.() === false;
    let state: WebhookDeliveryState = endpoint.delivery;
    let passedOver = false;
    const record = (): Promise<boolean> => registry.update(endpoint.clientId, endpoint.id, { delivery: state });
    for (let reads = 0; reads < MAX_READS_PER_TICK && !spent(); reads += 1) {
      const changes = await log.read(endpoint.clientId, state.delivered, perTick);
      if (changes.length === 0) break;
      for (const change of changes) {
        if (change.time < endpoint.createdAt) {
          state = { delivered: change.position, attempts: 0 };
          passedOver = true;
          continue;
        }
        if (spent()) break;
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
