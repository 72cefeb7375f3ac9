import { WebhookNotFound, WebhookUrlRefused } from '../domain/errors.js';
import type { ChangeLog, Clock, Signer, WebhookRegistry, WebhookTargets } from '../domain/ports.js';
import { isWebhookId, type WebhookEndpoint } from '../domain/webhooks.js';

/** A newly registered endpoint and its secret (shown once: it is never stored). */
export interface RegisteredWebhook {
  readonly endpoint: WebhookEndpoint;
  /** `whsec_<base64>`, derived by the signer from the endpoint id. */
  readonly secret: string;
}

export interface WebhooksOptions {
  readonly registry: WebhookRegistry;
  /** Where the log's head is: a new endpoint starts after it. */
  readonly log: Pick<ChangeLog, 'head'>;
  /** Which URLs may be registered (https to public addresses unless WEBHOOK_ALLOW_PRIVATE=on). */
  readonly targets: WebhookTargets;
  readonly signer: Signer;
  readonly clock: Clock;
}

/**
 * Registering, listing and removing webhook endpoints, the same for the operator's CLI and a
 * subscriber's `/webhooks`. An endpoint gets the changes appended after the log's head at its
 * registration, and none once removed (delivery reads the registry at every tick).
 */
export class Webhooks {
  readonly #options: WebhooksOptions;

  constructor(options: WebhooksOptions) {
    this.#options = options;
  }

  /** Throws `WebhookUrlRefused` for a URL the gateway will not call, `WebhookLimitReached` past the client's bound. */
  async register(clientId: string, url: string): Promise<RegisteredWebhook> {
    const problem = await this.#options.targets.problem(url);
    if (problem !== undefined) throw new WebhookUrlRefused(`The webhook URL is refused: ${problem}`);
    const startsAfter = await this.#options.log.head();
    const endpoint = await this.#options.registry.add({ clientId, url, createdAt: this.#options.clock.now(), startsAfter });
    return { endpoint, secret: this.#options.signer.webhookSecret(endpoint.id) };
  }

  list(clientId: string): Promise<readonly WebhookEndpoint[]> {
    return this.#options.registry.list(clientId);
  }

  /** Throws `WebhookNotFound` when the client has no endpoint `id` (another client's included). */
  async remove(clientId: string, id: string): Promise<void> {
    if (!isWebhookId(id) || !(await this.#options.registry.remove(clientId, id))) {
      throw new WebhookNotFound(`No webhook endpoint ${JSON.stringify(id)} among the endpoints of client ${JSON.stringify(clientId)}`);
    }
  }
}
