import { dirname, join } from 'node:path';
import { TableClient } from '@azure/data-tables';
import { DefaultAzureCredential } from '@azure/identity';
import { FileWebhookRegistry, WEBHOOKS_FILE_NAME } from '../adapters/webhooks/file-webhook-registry.js';
import { MemoryWebhookRegistry } from '../adapters/webhooks/memory-webhook-registry.js';
import { TableWebhookRegistry } from '../adapters/webhooks/table-webhook-registry.js';
import type { WebhookRegistry } from '../domain/ports.js';
import type { GatewayConfig } from './config.js';

/** The table of webhook endpoints in the gateway's storage account. */
export const WEBHOOK_TABLE = 'webhooks';

/**
 * Where the webhook endpoints live, chosen by where the files are served from: Azure Table Storage
 * in the same account (the connection string's `TableEndpoint`, or the account URL's table
 * endpoint with the managed identity), a `webhooks.json` beside CLIENTS_FILE on the local folder
 * store, this process's memory on the embedded default. Shared by the server and the `clients` CLI,
 * so both see the same endpoints.
 */
export function webhookRegistryFor(config: Pick<GatewayConfig, 'storage' | 'clientsFile'>): WebhookRegistry {
  const { storage } = config;
  switch (storage.kind) {
    case 'local':
      return config.clientsFile === undefined
        ? new MemoryWebhookRegistry()
        : new FileWebhookRegistry(join(dirname(config.clientsFile), WEBHOOKS_FILE_NAME));
    case 'azure-connection-string':
      // Azurite's and other emulators' endpoints are http; a real account's are https.
      return new TableWebhookRegistry(() =>
        TableClient.fromConnectionString(storage.connectionString, WEBHOOK_TABLE, {
          allowInsecureConnection: /(^|;)\s*(TableEndpoint=http:|UseDevelopmentStorage=true)/i.test(storage.connectionString),
        }),
      );
    case 'azure-managed-identity':
      return new TableWebhookRegistry(new TableClient(tableUrlOf(storage.accountUrl), WEBHOOK_TABLE, new DefaultAzureCredential()));
  }
}

/** `https://<account>.blob.core.windows.net` → `https://<account>.table.core.windows.net`. */
function tableUrlOf(accountUrl: string): string {
  const url = new URL(accountUrl);
  url.hostname = url.hostname.replace(/\.blob\./, '.table.');
  return url.origin;
}
