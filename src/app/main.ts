#!/usr/bin/env node
/**
 * The server process (`npm start`, `node dist/src/app/main.js`). The V8 heap is tuned for streaming
 * (`heap-tuning.ts`), then configuration is checked;
 * telemetry, when configured, is started before the HTTP stack is loaded (its instrumentation
 * hooks `http` as it is first loaded); then the server module is loaded and run.
 */
import { ConfigError, loadConfig, type GatewayConfig } from './config.js';
import { tuneHeapForStreaming } from './heap-tuning.js';
import { bundledSampleDataDir } from './package-root.js';
import { startAzureMonitor, type Telemetry } from './telemetry.js';

// Before anything streams: Node 24's young generation, set back to what reclaims a download's chunks cheaply.
tuneHeapForStreaming();

let config: GatewayConfig;
try {
  config = loadConfig(process.env, bundledSampleDataDir());
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`Configuration error: ${error.message}\n`);
  process.exit(1);
}

const telemetry: Telemetry | undefined =
  config.applicationInsightsConnectionString === undefined ? undefined : await startAzureMonitor(config.applicationInsightsConnectionString);

const { runServer } = await import('./server.js');
await runServer(config, telemetry);
