import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createAuditTrail, type AuditRecord } from '../../src/adapters/audit/audit-trail.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { logReadinessProblems, Readiness } from '../../src/app/readiness.js';
import { StorageUnavailable } from '../../src/domain/errors.js';
import type { BlobContent, BlobReadOptions, Clock } from '../../src/domain/ports.js';
import { capturedAudit } from '../support/audit-capture.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody } from '../support/json.js';
import { captureLog } from '../support/log-capture.js';
import { parsePrometheusText, sampleValue } from '../support/prometheus.js';

const acme = { clientId: 'acme', secret: 'acme-secret-acme-secret' };
const FILE = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));

/** A memory store whose reads of `data/frozen.bin` send `bytes` bytes, then nothing until aborted. */
class FreezingStore extends MemoryBlobStore {
  override async read(path: string, options: BlobReadOptions): Promise<BlobContent> {
    const content = await super.read(path, options);
    if (path !== 'data/frozen.bin') return content;
    return (async function* () {
      yield new Uint8Array(50_000).fill(7);
      await new Promise((_resolve, reject) => options.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
    })();
  }
}

function seed(store: MemoryBlobStore): void {
  store.put(
    'indexes/acme.csv',
    buildIndexCsv([
      buildIndexRow({ Symbol: 'FILE', FileName: 'data/file.bin' }),
      buildIndexRow({ Symbol: 'FROZEN', FileName: 'data/frozen.bin' }),
      buildIndexRow({ Symbol: 'GONE', FileName: 'data/gone.bin' }),
    ]),
  );
  store.put('data/file.bin', FILE);
  store.put('data/frozen.bin', new Uint8Array(200_000));
}

describe('operating the gateway', function () {
  describe('X-Request-Id', function () {
    let gateway: TestGateway;
    const log = captureLog('debug');

    before(async function () {
      const store = new MemoryBlobStore();
      seed(store);
      gateway = await startGateway({ store, clients: [acme], logger: log.logger });
    });

    after(async function () {
      await gateway?.close();
    });

    it('is generated for every response, a UUID, different each time', async function () {
      const [first, second] = [await gateway.request('GET', '/health'), await gateway.request('GET', '/nowhere')];
      expect(first.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
      expect(second.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
      expect(first.headers['x-request-id']).to.not.equal(second.headers['x-request-id']);
    });

    it('reuses a sane incoming value, and replaces one that is not', async function () {
      const kept = await gateway.request('GET', '/health', { headers: { 'x-request-id': 'lb-7f3a:42@edge' } });
      expect(kept.headers['x-request-id']).to.equal('lb-7f3a:42@edge');
      for (const insane of ['has space', 'a'.repeat(129), 'quote"d', '']) {
        const replaced = await gateway.request('GET', '/health', { headers: { 'x-request-id': insane } });
        expect(replaced.headers['x-request-id'], insane).to.match(/^[0-9a-f-]{36}$/);
      }
    });

    it('is carried by every log line of the request', async function () {
      const response = await gateway.request('GET', '/download/FILE', { headers: { 'x-request-id': 'trace-me-1', authorization: 'Bearer forged' } });
      expect(response.status).to.equal(401);
      const lines = log.lines.filter((line) => JSON.stringify(line).includes('/download/FILE') || line['code'] === 'invalid_token');
      expect(lines.length).to.be.at.least(2);
      for (const line of lines.filter((entry) => entry['requestId'] !== undefined || entry['req'] !== undefined)) {
        expect(line['requestId'], JSON.stringify(line)).to.equal('trace-me-1');
      }
    });
  });

  describe('GET /ready', function () {
    let now: number;
    const clock: Clock = { now: () => new Date(now) };

    beforeEach(function () {
      now = Date.UTC(2026, 0, 1);
    });

    it('answers 200 {status: "ready"} without a token when storage and the registry answer', async function () {
      const gateway = await startGateway({ store: new MemoryBlobStore(), clients: [acme] });
      try {
        const response = await gateway.request('GET', '/ready');
        expect(response.status).to.equal(200);
        expect(jsonOf(response)).to.deep.equal({ status: 'ready' });
        expect(response.headers['cache-control']).to.equal('no-store');
      } finally {
        await gateway.close();
      }
    });

    it('answers 503 {status: "not_ready", reasons: ["storage"]} when storage fails its probe, probing at most once per READY_CACHE_SECONDS', async function () {
      let probes = 0;
      let storageDown = true;
      const store = new MemoryBlobStore();
      store.probe = async () => {
        probes += 1;
        if (storageDown) throw new StorageUnavailable('Azure Storage timed out on ""', { retryable: true });
      };
      const gateway = await startGateway({ store, clients: [acme], clock, env: { READY_CACHE_SECONDS: '5' } });
      try {
        for (let i = 0; i < 5; i += 1) {
          const response = await gateway.request('GET', '/ready');
          expect(response.status).to.equal(503);
          expect(jsonOf(response)).to.deep.equal({ status: 'not_ready', reasons: ['storage'] });
        }
        expect(probes, 'probes within the cache period').to.equal(1);
        storageDown = false;
        now += 5_000;
        expect((await gateway.request('GET', '/ready')).status).to.equal(200);
        expect(probes).to.equal(2);
      } finally {
        await gateway.close();
      }
    });

    it('names every missing dependency (storage, registry, redis) and nothing more, and logs what is wrong with each', async function () {
      const log = captureLog('warn');
      const store = new MemoryBlobStore();
      store.probe = async () => {
        throw new StorageUnavailable('container not found', { retryable: false });
      };
      const readiness = new Readiness({
        store,
        registry: { problem: async () => 'client registry /home/clients.json: not valid JSON' },
        redisProblem: async () => 'Redis does not answer: connect ECONNREFUSED',
        cacheMs: 0,
        clock,
        onProblem: logReadinessProblems(log.logger),
      });
      const gateway = await startGateway({ store, clients: [acme], readiness });
      try {
        const response = await gateway.request('GET', '/ready');
        expect(response.status).to.equal(503);
        expect(jsonOf(response)).to.deep.equal({ status: 'not_ready', reasons: ['storage', 'registry', 'redis'] });
        // The answer needs no token: paths, hosts and error texts are for the operator's log only.
        expect(log.lines.map((line) => [line['dependency'], line['problem']])).to.deep.equal([
          ['storage', 'container not found'],
          ['registry', 'client registry /home/clients.json: not valid JSON'],
          ['redis', 'Redis does not answer: connect ECONNREFUSED'],
        ]);
      } finally {
        await gateway.close();
      }
    });

    it('answers 503 naming each dependency that has not answered within the readiness budget, whatever it does after', async function () {
      const store = new MemoryBlobStore();
      let probeSignal: AbortSignal | undefined;
      // Storage, the registry and Redis that never answer (and the storage probe ignores its signal).
      store.probe = (signal) => {
        probeSignal = signal;
        return new Promise(() => {});
      };
      const readiness = new Readiness({
        store,
        registry: { problem: () => new Promise(() => {}) },
        redisProblem: () => new Promise(() => {}),
        cacheMs: 0,
        clock,
      });
      const gateway = await startGateway({ store, clients: [acme], readiness });
      try {
        const response = await gateway.request('GET', '/ready');
        expect(response.status).to.equal(503);
        expect(jsonOf(response)).to.deep.equal({ status: 'not_ready', reasons: ['storage', 'registry', 'redis'] });
        // The storage probe was told to give up: the readiness budget is what ended it.
        expect(probeSignal?.aborted).to.equal(true);
      } finally {
        await gateway.close();
      }
    });

    it('turns 503 "shutting down" at once when the instance starts draining, whatever is cached', async function () {
      const store = new MemoryBlobStore();
      const readiness = new Readiness({ store, registry: { problem: async () => undefined }, cacheMs: 60_000, clock });
      const gateway = await startGateway({ store, clients: [acme], readiness });
      try {
        expect((await gateway.request('GET', '/ready')).status).to.equal(200);
        readiness.markShuttingDown();
        const response = await gateway.request('GET', '/ready');
        expect(response.status).to.equal(503);
        expect(jsonOf(response)).to.deep.equal({ status: 'not_ready', reasons: ['shutting down'] });
      } finally {
        await gateway.close();
      }
    });

    it('is never rate limited and never read as a storage path', async function () {
      const store = new MemoryBlobStore();
      store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'R', FileName: 'ready' })]));
      store.put('ready', 'a file named ready');
      const gateway = await startGateway({ store, clients: [acme], env: { DOWNLOAD_RATE_LIMIT: '1' } });
      try {
        for (let i = 0; i < 5; i += 1) expect((await gateway.request('GET', '/ready')).status).to.equal(200);
        const withToken = await gateway.get('acme', '/ready');
        expect(withToken.body.toString()).to.equal('{"status":"ready"}');
      } finally {
        await gateway.close();
      }
    });
  });

  describe('GET /metrics', function () {
    const metricsToken = 'metrics-token-0123456789abcdef';

    it('does not exist without METRICS_TOKEN (404)', async function () {
      const gateway = await startGateway({ store: new MemoryBlobStore(), clients: [acme] });
      try {
        const response = await gateway.request('GET', '/metrics', { headers: { authorization: `Bearer ${metricsToken}` } });
        expect(response.status).to.equal(404);
      } finally {
        await gateway.close();
      }
    });

    describe('with METRICS_TOKEN set', function () {
      let gateway: TestGateway;

      before(async function () {
        const store = new MemoryBlobStore();
        seed(store);
        gateway = await startGateway({ store, clients: [acme], env: { METRICS_TOKEN: metricsToken, DOWNLOAD_RATE_LIMIT: '2' } });
      });

      after(async function () {
        await gateway?.close();
      });

      const scrape = async () => {
        const response = await gateway.request('GET', '/metrics', { headers: { authorization: `Bearer ${metricsToken}` } });
        expect(response.status).to.equal(200);
        expect(String(response.headers['content-type'])).to.match(/^text\/plain; version=0\.0\.4/);
        return parsePrometheusText(response.body.toString('utf8'));
      };

      it('refuses a request without the token (401 missing_token), and one with another token or a client\'s bearer token (401 invalid_token)', async function () {
        const codeOf = (response: { status: number; body: Buffer }): [number, string | undefined] => [response.status, jsonOf<ErrorBody>(response).code];
        expect(codeOf(await gateway.request('GET', '/metrics'))).to.deep.equal([401, 'missing_token']);
        expect(codeOf(await gateway.request('GET', '/metrics', { headers: { authorization: 'Bearer not-the-metrics-token-xxxx' } }))).to.deep.equal([401, 'invalid_token']);
        const clientToken = await gateway.tokenFor('acme');
        expect(codeOf(await gateway.request('GET', '/metrics', { headers: { authorization: `Bearer ${clientToken}` } }))).to.deep.equal([401, 'invalid_token']);
      });

      it('exposes the process metrics and the gateway\'s own, which move as requests are made', async function () {
        const before = await scrape();
        expect(before.some((sample) => sample.name === 'process_cpu_user_seconds_total')).to.equal(true);
        await gateway.get('acme', '/catalog');
        await gateway.get('acme', '/download/FILE', { range: 'bytes=0-' });
        await gateway.get('acme', '/download/GONE');
        // The same version of FILE by range again: not counted. Then another file, over the budget of 2.
        await gateway.get('acme', '/download/FILE', { range: 'bytes=0-' });
        await gateway.get('acme', '/download/FROZEN');
        await gateway.request('POST', '/oauth/token', {
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials&client_id=acme&client_secret=wrong-secret-wrong',
        });
        const after = await scrape();
        const grew = (name: string, labels: Record<string, string> = {}): number => sampleValue(after, name, labels) - sampleValue(before, name, labels);
        expect(grew('dfg_http_requests_total', { operation: 'getCatalog', status: '200' })).to.equal(1);
        expect(grew('dfg_http_requests_total', { operation: 'downloadBySymbol', status: '206' })).to.equal(2);
        expect(grew('dfg_http_requests_total', { operation: 'downloadBySymbol', status: '404' })).to.equal(1);
        expect(grew('dfg_downloads_total', { outcome: 'completed' })).to.equal(2);
        expect(grew('dfg_downloads_total', { outcome: 'refused' })).to.equal(2);
        expect(grew('dfg_download_bytes_total')).to.equal(2 * FILE.length);
        expect(grew('dfg_rate_limited_total', { operation: 'downloadBySymbol' })).to.equal(1);
        expect(grew('dfg_tokens_refused_total', { reason: 'invalid_client' })).to.equal(1);
        expect(grew('dfg_http_request_duration_seconds_count', { operation: 'getCatalog' })).to.equal(1);
        expect(grew('dfg_storage_call_duration_seconds_count', { operation: 'getProperties' })).to.be.at.least(3);
        expect(grew('dfg_storage_errors_total')).to.equal(0);
      });

      it('shows the catalog memory: bytes within CATALOG_CACHE_MB, hits, misses and evictions', async function () {
        await gateway.get('acme', '/catalog');
        const before = await scrape();
        await gateway.get('acme', '/catalog');
        await gateway.get('acme', '/count');
        const after = await scrape();
        const bytes = sampleValue(after, 'dfg_catalog_cache_bytes');
        expect(bytes).to.be.greaterThan(0);
        expect(bytes).to.be.at.most(sampleValue(after, 'dfg_catalog_cache_max_bytes'));
        expect(sampleValue(after, 'dfg_catalog_cache_max_bytes')).to.equal(256 * 1024 * 1024);
        expect(sampleValue(after, 'dfg_catalog_cache_hits_total') - sampleValue(before, 'dfg_catalog_cache_hits_total')).to.be.at.least(2);
        expect(sampleValue(after, 'dfg_catalog_cache_misses_total')).to.be.at.least(1);
        expect(after.some((sample) => sample.name === 'dfg_catalog_cache_evictions_total')).to.equal(true);
      });
    });
  });

  describe('the audit trail', function () {
    let gateway: TestGateway;
    let audited: ReturnType<typeof capturedAudit>;

    beforeEach(async function () {
      const store = new FreezingStore();
      seed(store);
      audited = capturedAudit();
      gateway = await startGateway({ store, clients: [acme], audit: audited.audit, env: { DOWNLOAD_RATE_LIMIT: '5' } });
    });

    afterEach(async function () {
      await gateway?.close();
    });

    const downloads = () => audited.records().filter((record) => record.event === 'download');
    const waitForRecords = async (count: number): Promise<void> => {
      // Records are written when the connection is done with the response, just after the client has it.
      while (audited.records().length < count) await new Promise((resolve) => setImmediate(resolve));
    };

    it('records a completed download with its exact bytes, file, version and duration', async function () {
      const response = await gateway.get('acme', '/download/FILE', { 'x-request-id': 'audit-1' });
      await waitForRecords(2);
      const record = downloads()[0];
      expect(record).to.include({
        event: 'download',
        requestId: 'audit-1',
        clientId: 'acme',
        symbol: 'FILE',
        path: 'data/file.bin',
        method: 'GET',
        status: 200,
        range: null,
        bytesSent: FILE.length,
        fileSize: FILE.length,
        etag: response.headers['etag'],
        outcome: 'completed',
        msg: 'audit',
      });
      expect(record?.durationMs).to.be.a('number').and.at.least(0);
      expect(Date.parse(record?.time ?? '')).to.not.be.NaN;
    });

    it('records a ranged download with the range asked for and the bytes of the range', async function () {
      await gateway.get('acme', '/data/file.bin', { range: 'bytes=1000-1999' });
      await waitForRecords(2);
      expect(downloads()[0]).to.include({ status: 206, range: 'bytes=1000-1999', bytesSent: 1000, outcome: 'completed', symbol: 'FILE' });
    });

    it('records an aborted download with the exact bytes handed to the connection', async function () {
      const token = await gateway.tokenFor('acme');
      await new Promise<void>((resolve) => {
        const request = httpGet({ host: '127.0.0.1', port: gateway.port, path: '/download/FROZEN', agent: false, headers: { authorization: `Bearer ${token}` } }, (response) => {
          let received = 0;
          response.on('data', (chunk: Buffer) => {
            received += chunk.length;
            // Everything storage sent has arrived: the subscriber gives up.
            if (received === 50_000) request.destroy();
          });
          response.on('error', () => {});
        });
        request.on('close', () => resolve());
        request.on('error', () => {});
      });
      await waitForRecords(2);
      expect(downloads()[0]).to.include({ status: 200, bytesSent: 50_000, fileSize: 200_000, outcome: 'aborted' });
    });

    it('records a 304 revalidation as not_modified, and refusals as refused', async function () {
      const first = await gateway.get('acme', '/download/FILE');
      await gateway.get('acme', '/download/FILE', { 'if-none-match': String(first.headers['etag']) });
      await gateway.get('acme', '/download/GONE');
      await gateway.get('acme', '/download/NOT_MINE');
      await waitForRecords(5);
      expect(downloads().map((record) => [record.status, record.outcome, record.bytesSent])).to.deep.equal([
        [200, 'completed', FILE.length],
        [304, 'not_modified', 0],
        [404, 'refused', 0],
        [403, 'refused', 0],
      ]);
    });

    it('records token requests with the client id, outcome and address, never the secret or the token', async function () {
      const token = await gateway.tokenFor('acme');
      await gateway.request('POST', '/oauth/token', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials&client_id=acme&client_secret=a-wrong-secret-for-acme',
      });
      await waitForRecords(2);
      const tokens = audited.records().filter((record) => record.event === 'token');
      expect(tokens.map((record) => [record.clientId, record.outcome, record.status])).to.deep.equal([
        ['acme', 'issued', 200],
        ['acme', 'invalid_client', 401],
      ]);
      expect(tokens[0]).to.have.property('address').that.matches(/127\.0\.0\.1/);
      const everything = JSON.stringify(audited.records());
      expect(everything).to.not.include(acme.secret);
      expect(everything).to.not.include('a-wrong-secret-for-acme');
      expect(everything).to.not.include(token);
    });
  });

  describe('AUDIT_LOG_FILE', function () {
    it('appends the same records to the file as JSON lines, across restarts', async function () {
      const dir = await mkdtemp(join(tmpdir(), 'audit-file-'));
      try {
        const file = join(dir, 'audit', 'downloads.jsonl');
        for (let run = 0; run < 2; run += 1) {
          const store = new MemoryBlobStore();
          seed(store);
          const audit = createAuditTrail(new Writable({ write: (_chunk, _encoding, callback) => callback() }), file);
          const gateway = await startGateway({ store, clients: [acme], audit });
          await gateway.get('acme', '/download/FILE');
          await gateway.close();
          await audit.close();
        }
        const lines = (await readFile(file, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as AuditRecord);
        expect(lines.filter((line) => line.event === 'download').map((line) => line.event === 'download' && line.bytesSent)).to.deep.equal([FILE.length, FILE.length]);
        expect(lines.filter((line) => line.event === 'token')).to.have.length(2);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
});
