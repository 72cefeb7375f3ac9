import { createServer, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { startGatewayProcess } from '../support/server-process.js';

/*
 * APPLICATIONINSIGHTS_CONNECTION_STRING: request traces and metrics reach Azure Monitor. The
 * ingestion endpoint is a local HTTP server here; the gateway honours a plain http:// endpoint as
 * given (the exporter would otherwise rewrite it to https://). Telemetry is flushed when the
 * process drains on SIGTERM, so the test waits on that, not on the exporter's timers.
 */

interface Envelope {
  readonly name: string;
  readonly data?: { readonly baseType?: string; readonly baseData?: { readonly name?: string; readonly metrics?: Array<{ readonly name: string }> } };
}

describe('telemetry to Azure Monitor (@azure/monitor-opentelemetry, the real server process)', function () {
  this.timeout(60_000);
  let ingestion: Server;
  const envelopes: Envelope[] = [];
  const paths: string[] = [];

  before(async function () {
    ingestion = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        const items = JSON.parse(body.toString('utf8')) as Envelope[];
        paths.push(req.url ?? '');
        envelopes.push(...items);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ itemsReceived: items.length, itemsAccepted: items.length, errors: [] }));
      });
    });
    await new Promise<void>((resolve) => ingestion.listen(0, '127.0.0.1', resolve));
  });

  after(async function () {
    await new Promise<void>((resolve) => ingestion.close(() => resolve()));
  });

  it('exports request traces and the gateway\'s metrics to the configured ingestion endpoint', async function () {
    const address = ingestion.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const gateway = await startGatewayProcess({
      APPLICATIONINSIGHTS_CONNECTION_STRING: `InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=http://127.0.0.1:${port}/`,
      // Every request traced (the default samples at most 5 per second, fewer just after start-up).
      OTEL_TRACES_SAMPLER: 'always_on',
      // No statsbeat to Microsoft's endpoints from a test.
      APPLICATION_INSIGHTS_NO_STATSBEAT: 'true',
    });
    try {
      for (const path of ['/health', '/ready', '/catalog']) await fetch(`http://127.0.0.1:${gateway.port}${path}`);
      gateway.child.kill('SIGTERM');
      expect(await gateway.exited).to.equal(0);
    } finally {
      await gateway.stop();
    }
    expect(paths.length, 'batches received').to.be.above(0);
    for (const path of paths) expect(path).to.equal('/v2.1/track');
    const requests = envelopes.filter((envelope) => envelope.data?.baseType === 'RequestData').map((envelope) => envelope.data?.baseData?.name);
    expect(requests).to.include.members(['GET /health', 'GET /ready', 'GET /catalog']);
    const metrics = envelopes.filter((envelope) => envelope.data?.baseType === 'MetricData').flatMap((envelope) => envelope.data?.baseData?.metrics ?? []);
    expect(metrics.map((metric) => metric.name)).to.include('dfg.http.requests');
  });
});
