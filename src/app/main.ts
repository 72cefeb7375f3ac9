import type { Server } from 'node:http';
import { pino, type Logger } from 'pino';
import { InMemoryClientRegistry } from '../adapters/clients/in-memory-client-registry.js';
import { JsonClientRegistry } from '../adapters/clients/json-client-registry.js';
import { generateSecret, hashSecret } from '../adapters/clients/secret-hash.js';
import { fromAccountUrl, fromConnectionString } from '../adapters/storage/azure-blob-store.js';
import { LocalFolderBlobStore } from '../adapters/storage/local-folder-blob-store.js';
import type { BlobStore, ClientRegistry } from '../domain/ports.js';
import { ConfigError, loadConfig, type GatewayConfig } from './config.js';
import { createApp } from './create-app.js';
import { createHttpServer } from '../adapters/http/http-server.js';
import { printDemoInstructions } from './demo-instructions.js';
import { bundledSampleDataDir } from './package-root.js';

const demoClientId = 'demo';

function storeFor(config: GatewayConfig): BlobStore {
  const azureOptions = { responseTimeoutMs: config.storageTimeoutSeconds * 1000 };
  switch (config.storage.kind) {
    case 'local':
      return new LocalFolderBlobStore(config.storage.dataDir);
    case 'azure-connection-string':
      return fromConnectionString(config.storage.connectionString, config.storage.container, azureOptions);
    case 'azure-managed-identity':
      return fromAccountUrl(config.storage.accountUrl, config.storage.container, azureOptions);
  }
}

async function registryFor(config: GatewayConfig, logger: Logger): Promise<{ registry: ClientRegistry; demoSecret?: string }> {
  if (config.clientsFile !== undefined) {
    const registry = new JsonClientRegistry(config.clientsFile, {
      onUnreadable: (error) => logger.error({ err: error }, 'client registry unreadable: serving the last good version until the file is fixed'),
    });
    return { registry };
  }
  const demoSecret = generateSecret();
  const registry = new InMemoryClientRegistry([
    { clientId: demoClientId, secretHash: await hashSecret(demoSecret), indexPath: `indexes/${demoClientId}.csv`, enabled: true },
  ]);
  return { registry, demoSecret };
}

async function main(): Promise<void> {
  let config: GatewayConfig;
  try {
    config = loadConfig(process.env, bundledSampleDataDir());
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`Configuration error: ${error.message}\n`);
    process.exit(1);
  }
  const logger = pino({ level: config.logLevel, redact: ['req.headers.authorization', 'req.headers.cookie'] });
  if (config.tokenSigningKeyIsEphemeral) {
    logger.warn('TOKEN_SIGNING_KEY is not set: using a random key, so tokens die with this process and other instances reject them');
  }
  const { registry, demoSecret } = await registryFor(config, logger);
  const app = await createApp(config, { store: storeFor(config), registry, logger });

  const server: Server = createHttpServer(app, {
    logger,
    headersTimeoutMs: config.headersTimeoutSeconds * 1000,
    requestTimeoutMs: config.requestTimeoutSeconds * 1000,
    maxConnections: config.maxConnections,
  }).listen(config.port);
  server.once('listening', () => {
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : config.port;
    logger.info({ port, storage: config.storage.kind }, 'data file gateway listening');
    if (demoSecret !== undefined) printDemoInstructions(process.stdout, { port, clientId: demoClientId, clientSecret: demoSecret });
  });
  server.once('error', (error) => {
    logger.fatal({ err: error }, 'could not listen');
    process.exit(1);
  });
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    server.close(() => process.exit(0));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

await main();
