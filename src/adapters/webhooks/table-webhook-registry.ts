import { odata, RestError, type TableClient, type TableEntityResult } from '@azure/data-tables';
import { StorageUnavailable } from '../../domain/errors.js';
import type { WebhookEndpointUpdate, WebhookRegistry } from '../../domain/ports.js';
import { MAX_WEBHOOKS_PER_CLIENT, type NewWebhookEndpoint, type WebhookEndpoint } from '../../domain/webhooks.js';
import { limitReached } from './memory-webhook-registry.js';
import { byCreation, endpointOf, newWebhookId, storedOf, storedProblem, updated, type StoredEndpoint } from './stored-endpoints.js';

/** One row: PartitionKey the client id, RowKey the endpoint id, the rest a `StoredEndpoint`'s fields. */
type EndpointEntity = StoredEndpoint & { readonly partitionKey: string; readonly rowKey: string };

/**
 * The webhook registry in Azure Table Storage (the gateway's own storage account, beside the change
 * log): one row per endpoint, partitioned by client, so a client's endpoints are one partition
 * query and delivery reads the whole table (at most MAX_WEBHOOKS_PER_CLIENT rows per client).
 * Every `RestError` becomes `StorageUnavailable`; none leaves this file.
 */
export class TableWebhookRegistry implements WebhookRegistry {
  readonly #makeTable: () => TableClient;
  #client: TableClient | undefined;
  #ready: Promise<void> | undefined;

  /**
   * `table`, or how to make it on first use (a connection string without a table endpoint then
   * fails the calls, as `storage_failed`, rather than the instance's start).
   */
  constructor(table: TableClient | (() => TableClient)) {
    this.#makeTable = typeof table === 'function' ? table : () => table;
  }

  get #table(): TableClient {
    if (this.#client === undefined) {
      try {
        this.#client = this.#makeTable();
      } catch (error) {
        throw new StorageUnavailable(`Azure Table Storage cannot be reached for webhooks: ${error instanceof Error ? error.message : String(error)}`, {
          cause: error,
          retryable: false,
        });
      }
    }
    return this.#client;
  }

  async add(endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint> {
    await this.#created();
    if ((await this.list(endpoint.clientId)).length >= MAX_WEBHOOKS_PER_CLIENT) throw limitReached();
    const { id, stored } = storedOf(newWebhookId(), endpoint);
    await this.#call('add a webhook endpoint', () => this.#table.createEntity<EndpointEntity>({ partitionKey: endpoint.clientId, rowKey: id, ...stored }));
    // Two adds at once may both have seen room for one: the one that overshot takes itself back.
    if ((await this.list(endpoint.clientId)).length > MAX_WEBHOOKS_PER_CLIENT) {
      await this.remove(endpoint.clientId, id);
      throw limitReached();
    }
    return endpointOf(id, stored);
  }

  async list(clientId: string): Promise<readonly WebhookEndpoint[]> {
    return this.#query(odata`PartitionKey eq ${clientId}`);
  }

  async enabled(): Promise<readonly WebhookEndpoint[]> {
    return this.#query(odata`enabled eq ${true}`);
  }

  async remove(clientId: string, id: string): Promise<boolean> {
    await this.#created();
    try {
      await this.#table.deleteEntity(clientId, id);
      return true;
    } catch (error) {
      if (statusOf(error) === 404) return false;
      throw unavailable('remove a webhook endpoint', error);
    }
  }

  async update(clientId: string, id: string, change: WebhookEndpointUpdate): Promise<boolean> {
    await this.#created();
    try {
      const current = await this.#table.getEntity<EndpointEntity>(clientId, id);
      const next = updated(storedFrom(current), change);
      // If-Match on the row read: a row removed meanwhile (404) or changed (412) is not brought back.
      await this.#table.updateEntity<EndpointEntity>({ partitionKey: clientId, rowKey: id, ...next }, 'Replace', { etag: current.etag });
      return true;
    } catch (error) {
      const status = statusOf(error);
      if (status === 404 || status === 412) return false;
      throw unavailable('record a webhook delivery', error);
    }
  }

  async #query(filter: string): Promise<WebhookEndpoint[]> {
    await this.#created();
    return this.#call('read the webhook endpoints', async () => {
      const endpoints: WebhookEndpoint[] = [];
      for await (const entity of this.#table.listEntities<EndpointEntity>({ queryOptions: { filter } })) {
        endpoints.push(endpointOf(entity.rowKey, storedFrom(entity)));
      }
      return endpoints.sort(byCreation);
    });
  }

  /** Creates the table on first use (once per instance; an existing table is fine). */
  #created(): Promise<void> {
    this.#ready ??= Promise.resolve()
      .then(() => this.#table.createTable()).catch((error: unknown) => {
      this.#ready = undefined;
      throw error instanceof StorageUnavailable ? error : unavailable('create the webhook table', error);
    });
    return this.#ready;
  }

  async #call<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw unavailable(what, error);
    }
  }
}

function storedFrom(entity: TableEntityResult<EndpointEntity>): StoredEndpoint {
  const stored: StoredEndpoint = {
    clientId: entity.clientId,
    url: entity.url,
    enabled: entity.enabled,
    createdAt: entity.createdAt,
    startsAfter: Number(entity.startsAfter),
    delivered: Number(entity.delivered),
    attempts: Number(entity.attempts),
    nextAttemptAt: entity.nextAttemptAt ?? '',
    disabledReason: entity.disabledReason ?? '',
    disabledAt: entity.disabledAt ?? '',
    disabledDetail: entity.disabledDetail ?? '',
  };
  const problem = storedProblem(stored);
  if (problem !== undefined) throw new Error(`Webhook table row ${entity.partitionKey}/${entity.rowKey} is malformed: ${problem}`);
  return stored;
}

function statusOf(error: unknown): number | undefined {
  return error instanceof RestError ? error.statusCode : undefined;
}

function unavailable(what: string, error: unknown): Error {
  if (!(error instanceof RestError)) return error instanceof Error ? error : new Error(String(error));
  const status = error.statusCode;
  const retryable = status === undefined || status === 408 || status === 429 || status >= 500;
  return new StorageUnavailable(`Azure Table Storage failed to ${what}: ${status ?? error.code ?? 'no answer'}`, { cause: error, retryable });
}
