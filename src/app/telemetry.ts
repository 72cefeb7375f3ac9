/** Telemetry export to Azure Monitor, started only when a connection string is configured. */
export interface Telemetry {
  /** Flushes what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Starts `@azure/monitor-opentelemetry`: request traces and metrics (the HTTP instrumentation's and
 * the gateway's own, through the OpenTelemetry API) go to the Application Insights resource of
 * `connectionString`. Loaded on demand, so that nothing of it runs without a connection string.
 *
 * The exporter rewrites an `http://` ingestion endpoint to `https://`; a plain `http://` endpoint
 * (a local collector, the tests) is honoured as given instead.
 */
export async function startAzureMonitor(connectionString: string): Promise<Telemetry> {
  const { useAzureMonitor, shutdownAzureMonitor } = await import('@azure/monitor-opentelemetry');
  const plainEndpoint = /(?:^|;)\s*IngestionEndpoint=(http:\/\/[^;\s]+)/i.exec(connectionString)?.[1];
  useAzureMonitor({
    azureMonitorExporterOptions: {
      connectionString,
      ...(plainEndpoint !== undefined && { host: plainEndpoint.replace(/\/+$/, ''), allowInsecureConnection: true }),
    },
  });
  return { shutdown: () => shutdownAzureMonitor() };
}
