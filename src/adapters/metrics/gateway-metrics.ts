import { metrics as openTelemetry, type Counter as OtelCounter, type Histogram as OtelHistogram } from '@opentelemetry/api';
import type { GatewayEvent } from '../../application/events.js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BoundedMemoryStats } from '../../domain/ports.js';

/** Request durations, from a fast JSON answer to a long download. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Storage round trips: a property read on loopback to a slow listing. */
const STORAGE_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The gateway's metrics, with bounded label sets (operation ids of `openapi.yaml`, status codes,
 * outcomes, storage operations, error codes): in a prom-client registry of their own (served at
 * `GET /metrics`), and mirrored to OpenTelemetry, which exports them to Azure Monitor when it is
 * configured and does nothing otherwise.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'operation' | 'status'>;
  readonly #requestDuration: Histogram<'operation'>;
  readonly #downloadBytes: Counter;
  readonly #downloads: Counter<'outcome'>;
  readonly #rateLimited: Counter<'operation'>;
  readonly #refusals: Counter<'reason'>;
  readonly #tokensIssued: Counter;
  readonly #tokensRefused: Counter<'reason'>;
  readonly #storageDuration: Histogram<'operation'>;
  readonly #storageErrors: Counter<'operation' | 'code'>;
  readonly #verificationsWaiting: Gauge;
  readonly #verificationsRefused: Counter<'reason'>;
  readonly #quotaRebuilds: Counter;
  readonly #otel: {
    readonly requests: OtelCounter;
    readonly requestDuration: OtelHistogram;
    readonly downloadBytes: OtelCounter;
    readonly downloads: OtelCounter;
    readonly tokens: OtelCounter;
    readonly storageErrors: OtelCounter;
  };

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.#requests = new Counter({ name: 'dfg_http_requests_total', help: 'HTTP requests answered, by operation and status.', labelNames: ['operation', 'status'], registers });
    this.#requestDuration = new Histogram({
      name: 'dfg_http_request_duration_seconds',
      help: 'Time from a request to the end of its answer (a whole download included), by operation.',
      labelNames: ['operation'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.#downloadBytes = new Counter({ name: 'dfg_download_bytes_total', help: 'File bytes handed to subscribers\' connections.', registers });
    this.#downloads = new Counter({ name: 'dfg_downloads_total', help: 'Download attempts, by outcome.', labelNames: ['outcome'], registers });
    this.#rateLimited = new Counter({ name: 'dfg_rate_limited_total', help: 'Requests refused by a rate limit (429, or the S3 API\'s 503 SlowDown), by operation.', labelNames: ['operation'], registers });
    this.#refusals = new Counter({
      name: 'dfg_refusals_total',
      help: 'Requests refused, by reason: the error code, or subscription_inactive for a client outside its term (quota_exceeded, rate_limited, not_entitled, ...).',
      labelNames: ['reason'],
      registers,
    });
    this.#tokensIssued = new Counter({ name: 'dfg_tokens_issued_total', help: 'Bearer tokens issued.', registers });
    this.#tokensRefused = new Counter({ name: 'dfg_tokens_refused_total', help: 'Token requests refused, by reason.', labelNames: ['reason'], registers });
    this.#storageDuration = new Histogram({
      name: 'dfg_storage_call_duration_seconds',
      help: 'Storage calls until they answered (a read: until its body starts), by operation.',
      labelNames: ['operation'],
      buckets: STORAGE_BUCKETS,
      registers,
    });
    this.#verificationsWaiting = new Gauge({ name: 'dfg_secret_verifications_waiting', help: 'Client secret verifications waiting for their turn.', registers });
    this.#verificationsRefused = new Counter({
      name: 'dfg_secret_verifications_refused_total',
      help: 'Token requests refused without waiting, by reason: the address held its share of the verification queue, or the queue was full.',
      labelNames: ['reason'],
      registers,
    });
    this.#quotaRebuilds = new Counter({
      name: 'dfg_quota_counts_rebuilt_total',
      help: 'Clients\' monthly quota counts that Redis had lost and this instance wrote back from the quota journal.',
      registers,
    });
    this.#storageErrors = new Counter({ name: 'dfg_storage_errors_total', help: 'Storage calls that failed, by operation and error code.', labelNames: ['operation', 'code'], registers });
    const meter = openTelemetry.getMeter('data-file-gateway');
    this.#otel = {
      requests: meter.createCounter('dfg.http.requests', { description: 'HTTP requests answered' }),
      requestDuration: meter.createHistogram('dfg.http.request.duration', { unit: 's', description: 'Request duration' }),
      downloadBytes: meter.createCounter('dfg.download.bytes', { unit: 'By', description: 'File bytes handed to subscribers' }),
      downloads: meter.createCounter('dfg.downloads', { description: 'Download attempts' }),
      tokens: meter.createCounter('dfg.token.requests', { description: 'Token requests' }),
      storageErrors: meter.createCounter('dfg.storage.errors', { description: 'Failed storage calls' }),
    };
  }

  /** `rateLimited`: refused by a rate limit with another status than 429 (the S3 API's 503 SlowDown). */
  requestAnswered(operation: string, status: number, seconds: number, rateLimited = false): void {
    this.#requests.inc({ operation, status: String(status) });
    this.#requestDuration.observe({ operation }, seconds);
    this.#otel.requests.add(1, { operation, status });
    this.#otel.requestDuration.record(seconds, { operation });
    if (status === 429 || rateLimited) this.#rateLimited.inc({ operation });
  }

  /** A refusal, by reason (an error code of the contract, or `subscription_inactive`): a bounded set. */
  refused(reason: string): void {
    this.#refusals.inc({ reason });
  }

  /** The core's events this instance counts: each settled download, by outcome, with its bytes. */
  readonly onEvent = (event: GatewayEvent): void => {
    if (event.type === 'download.settled') this.downloadEnded(event.outcome, event.bytesSent);
    else if (event.type === 'token.requested') this.tokenRequestEnded(event.outcome);
  };

  downloadEnded(outcome: string, bytes: number): void {
    this.#downloads.inc({ outcome });
    this.#otel.downloads.add(1, { outcome });
    if (bytes > 0) {
      this.#downloadBytes.inc(bytes);
      this.#otel.downloadBytes.add(bytes);
    }
  }

  tokenRequestEnded(outcome: string): void {
    if (outcome === 'issued') this.#tokensIssued.inc();
    else this.#tokensRefused.inc({ reason: outcome });
    this.#otel.tokens.add(1, { outcome });
  }

  secretVerificationsWaiting(waiting: number): void {
    this.#verificationsWaiting.set(waiting);
  }

  secretVerificationRefused(reason: 'address_share' | 'queue_full'): void {
    this.#verificationsRefused.inc({ reason });
  }

  /** This instance wrote back `clients` quota counts that Redis had lost (a restart or failover without persistence). */
  quotaLedgerRebuilt(clients: number): void {
    this.#quotaRebuilds.inc(clients);
  }

  /**
   * Exposes the catalog memory (CATALOG_CACHE_MB) as it is when scraped: bytes held and allowed,
   * entries, and the hits, misses and evictions so far.
   */
  observeCatalogMemory(stats: () => BoundedMemoryStats): void {
    const registers = [this.registry];
    const gauge = (name: string, help: string, read: (current: BoundedMemoryStats) => number): void => {
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read(stats()));
        },
      });
    };
    gauge('dfg_catalog_cache_bytes', 'Bytes of parsed catalogs and their file listings held in memory.', (s) => s.bytes);
    gauge('dfg_catalog_cache_max_bytes', 'The bound of that memory (CATALOG_CACHE_MB).', (s) => s.maxBytes);
    gauge('dfg_catalog_cache_entries', 'Catalogs and file listings held in memory.', (s) => s.entries);
    // Counters read from the cache's own running totals when scraped.
    const counter = (name: string, help: string, read: (current: BoundedMemoryStats) => number): void => {
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read(stats()));
        },
      });
    };
    counter('dfg_catalog_cache_hits_total', 'Lookups of a catalog or file listing found in memory.', (s) => s.hits);
    counter('dfg_catalog_cache_misses_total', 'Lookups of a catalog or file listing not in memory (loaded from storage).', (s) => s.misses);
    counter('dfg_catalog_cache_evictions_total', 'Catalogs and file listings dropped to stay within CATALOG_CACHE_MB.', (s) => s.evictions);
  }

  storageCall(operation: string, seconds: number, errorCode: string | undefined): void {
    this.#storageDuration.observe({ operation }, seconds);
    if (errorCode !== undefined) {
      this.#storageErrors.inc({ operation, code: errorCode });
      this.#otel.storageErrors.add(1, { operation, code: errorCode });
    }
  }
}
