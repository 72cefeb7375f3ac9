import { GatewayError } from '../../domain/errors.js';
import type { BlobContent, BlobProperties, BlobReadOptions, BlobStore, BlobSummary } from '../../domain/ports.js';
import type { GatewayMetrics } from './gateway-metrics.js';

/** A `BlobStore` that times every call and counts failures by code, then answers as the store does. */
export class InstrumentedBlobStore implements BlobStore {
  constructor(
    private readonly inner: BlobStore,
    private readonly metrics: GatewayMetrics,
  ) {}

  getProperties(path: string): Promise<BlobProperties | undefined> {
    return this.#timed('getProperties', () => this.inner.getProperties(path));
  }

  async *list(prefix: string): AsyncIterable<BlobSummary> {
    const started = process.hrtime.bigint();
    let failure: unknown;
    try {
      yield* this.inner.list(prefix);
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      this.#record('list', started, failure);
    }
  }

  existing(paths: readonly string[]): Promise<ReadonlyMap<string, BlobSummary>> {
    return this.#timed('existing', () => this.inner.existing(paths));
  }

  read(path: string, options: BlobReadOptions): Promise<BlobContent> {
    return this.#timed('read', () => this.inner.read(path, options));
  }

  probe(signal?: AbortSignal): Promise<void> {
    return this.#timed('probe', () => this.inner.probe(signal));
  }

  async #timed<T>(operation: string, call: () => Promise<T>): Promise<T> {
    const started = process.hrtime.bigint();
    try {
      const result = await call();
      this.#record(operation, started, undefined);
      return result;
    } catch (error) {
      this.#record(operation, started, error);
      throw error;
    }
  }

  #record(operation: string, started: bigint, failure: unknown): void {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const code = failure === undefined ? undefined : failure instanceof GatewayError ? failure.code : 'unexpected';
    this.metrics.storageCall(operation, seconds, code);
  }
}
