import { WebhookLimitReached } from '../../domain/errors.js';
import type { WebhookEndpointUpdate, WebhookRegistry } from '../../domain/ports.js';
import { MAX_WEBHOOKS_PER_CLIENT, type NewWebhookEndpoint, type WebhookEndpoint } from '../../domain/webhooks.js';
import { byCreation, endpointOf, newWebhookId, storedOf, updated, type StoredEndpoint } from './stored-endpoints.js';

/** The webhook registry of one process, for tests and the embedded demo: at most MAX_WEBHOOKS_PER_CLIENT per client. */
export class MemoryWebhookRegistry implements WebhookRegistry {
  readonly #endpoints = new Map<string, StoredEndpoint>();

  async add(endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint> {
    if ((await this.list(endpoint.clientId)).length >= MAX_WEBHOOKS_PER_CLIENT) throw limitReached();
    const { id, stored } = storedOf(newWebhookId(), endpoint);
    this.#endpoints.set(id, stored);
    return endpointOf(id, stored);
  }

  async list(clientId: string): Promise<readonly WebhookEndpoint[]> {
    return this.#all().filter((endpoint) => endpoint.clientId === clientId);
  }

  async enabled(): Promise<readonly WebhookEndpoint[]> {
    return this.#all().filter((endpoint) => endpoint.enabled);
  }

  async remove(clientId: string, id: string): Promise<boolean> {
    if (this.#endpoints.get(id)?.clientId !== clientId) return false;
    return this.#endpoints.delete(id);
  }

  async update(clientId: string, id: string, update: WebhookEndpointUpdate): Promise<boolean> {
    const stored = this.#endpoints.get(id);
    if (stored?.clientId !== clientId) return false;
    this.#endpoints.set(id, updated(stored, update));
    return true;
  }

  #all(): WebhookEndpoint[] {
    return [...this.#endpoints].map(([id, stored]) => endpointOf(id, stored)).sort(byCreation);
  }
}

export function limitReached(): WebhookLimitReached {
  return new WebhookLimitReached(`A client may have at most ${MAX_WEBHOOKS_PER_CLIENT} webhook endpoints: remove one first`);
}
