import type { BlobStore, ClientRegistry, Clock } from '../domain/ports.js';

/** What `/ready` answers: ready, or the reasons it is not. */
export interface ReadinessReport {
  readonly ready: boolean;
  readonly reasons: readonly string[];
}

export interface ReadinessOptions {
  readonly store: Pick<BlobStore, 'probe'>;
  readonly registry: Pick<ClientRegistry, 'problem'>;
  /** What keeps Redis from answering, or `undefined`; absent when Redis is not configured. */
  readonly redisProblem?: () => Promise<string | undefined>;
  /** How long a probe's result is reused: a health checker polling fast costs storage nothing more. */
  readonly cacheMs: number;
  readonly clock: Clock;
}

/**
 * Readiness of one instance: storage answered a cheap probe recently, the client registry is
 * readable, Redis answers (when configured), and the instance is not shutting down (which counts
 * at once, never cached). Concurrent checks share one probe.
 */
export class Readiness {
  #shuttingDown = false;
  #cached: { readonly at: number; readonly reasons: readonly string[] } | undefined;
  #pending: Promise<readonly string[]> | undefined;

  constructor(private readonly options: ReadinessOptions) {}

  /** From now on, the instance is not ready: it is draining before it exits. */
  markShuttingDown(): void {
    this.#shuttingDown = true;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  async report(): Promise<ReadinessReport> {
    if (this.#shuttingDown) return { ready: false, reasons: ['shutting down'] };
    const now = this.options.clock.now().getTime();
    if (this.#cached === undefined || now - this.#cached.at >= this.options.cacheMs) {
      this.#pending ??= this.#probe().finally(() => (this.#pending = undefined));
      const reasons = await this.#pending;
      this.#cached = { at: now, reasons };
    }
    const reasons = this.#shuttingDown ? ['shutting down'] : this.#cached.reasons;
    return { ready: reasons.length === 0, reasons };
  }

  async #probe(): Promise<readonly string[]> {
    const checks = await Promise.all([
      this.options.store.probe().then(
        () => undefined,
        (error: unknown) => `storage: ${error instanceof Error ? error.message : String(error)}`,
      ),
      this.options.registry.problem(),
      this.options.redisProblem?.(),
    ]);
    return checks.filter((reason): reason is string => reason !== undefined);
  }
}
