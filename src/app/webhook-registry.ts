import { dirname, join } from 'node:path';
import { TableClient } from '@azure/data-tables';
import { DefaultAzureCredential } from '@azure/identity';
import { tablesFromConnectionString } from '../adapters/changes/table-storage.js';
import { FileWebhookRegistry, WEBHOOKS_FILE_NAME } from '../adapters/webhooks/file-webhook-registry.js';
import { MemoryWebhookRegistry } from '../adapters/webhooks/memory-webhook-registry.js';
import { TableWebhookRegistry } from '../adapters/webhooks/table-webhook-registry.js';
import type { WebhookRegistry } from '../domain/ports.js';
import type { GatewayConfig } from './config.js';

/** The table of webhook endpoints in the gateway's storage account. */
export const WEBHOOK_TABLE = 'webhooks';

/**
 * Where the webhook endpoints live: beside the change log they deliver from (`config.changes.store`,
 * see config.ts), so both are in the same place. Azure Table Storage in the same account (the
 * connection string's `TableEndpoint`, or the account's table endpoint with the managed identity),
 * a `webhooks.json` beside CLIENTS_FILE on the local folder store, this process's memory on the
 * embedded default (or where no table endpoint can be told). Shared by the server and the
 * `clients` CLI, so both see the same endpoints.
 */
export function webhookRegistryFor(config: Pick<GatewayConfig, 'changes' | 'clientsFile' | 'storageTimeoutSeconds'>): WebhookRegistry {
  const { store } = config.changes;
  switch (store.kind) {
    case 'folder':
      return config.clientsFile === undefined
        ? new MemoryWebhookRegistry()
        : new FileWebhookRegistry(join(dirname(config.clientsFile), WEBHOOKS_FILE_NAME));
    case 'table-connection-string': {
      const tables = tablesFromConnectionString(store.connectionString, { responseTimeoutMs: config.storageTimeoutSeconds * 1000 });
      return new TableWebhookRegistry(() => tables(WEBHOOK_TABLE));
    }
    case 'table-url':
      return new TableWebhookRegistry(new TableClient(store.tableUrl, WEBHOOK_TABLE, new DefaultAzureCredential()));
    case 'memory':
      return new MemoryWebhookRegistry();
  }
}
