import type { Logger } from 'pino';
import type { BlobStore, ClientRegistry, Clock } from '../domain/ports.js';

/** What `/ready` answers: ready, or the dependencies that keep it from being ready. */
export interface ReadinessReport {
  readonly ready: boolean;
  /** Names only (`storage`, `registry`, `redis`, `shutting down`): the answer needs no token, so details go to the log. */
  readonly reasons: readonly string[];
}

/** A dependency `/ready` checks, as it names it. */
export type Dependency = 'storage' | 'registry' | 'redis';

/**
 * How long one readiness check may take, every probe included, whatever storage, the registry or
 * Redis do: a health checker (App Service's waits a few seconds) must get an answer, and a
 * dependency that does not answer in time is not ready.
 */
export const READINESS_PROBE_BUDGET_MS = 2000;

export interface ReadinessOptions {
  readonly store: Pick<BlobStore, 'probe'>;
  readonly registry: Pick<ClientRegistry, 'problem'>;
  /** What keeps Redis from answering, or `undefined`; absent when Redis is not configured. */
  readonly redisProblem?: () => Promise<string | undefined>;
  /** How long a probe's result is reused: a health checker polling fast costs storage nothing more. */
  readonly cacheMs: number;
  readonly clock: Clock;
  /** Told what is wrong with a dependency that failed its probe (for the log; `/ready` names the dependency only). */
  readonly onProblem?: (dependency: Dependency, detail: string) => void;
}

/**
 * Readiness of one instance: storage answered a cheap probe recently, the client registry is
 * readable, Redis answers (when configured), and the instance is not shutting down (which counts
 * at once, never cached). Concurrent checks share one probe, and a probe ends within
 * `READINESS_PROBE_BUDGET_MS`.
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
    const budget = AbortSignal.timeout(READINESS_PROBE_BUDGET_MS);
    const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
    const checks: Array<[Dependency, Promise<string | undefined>]> = [
      ['storage', this.options.store.probe(budget).then(() => undefined, describe)],
      ['registry', this.options.registry.problem()],
    ];
    const { redisProblem } = this.options;
    if (redisProblem !== undefined) checks.push(['redis', redisProblem()]);
    const problems = await Promise.all(checks.map(([, check]) => withinBudget(check, budget)));
    const reasons: Dependency[] = [];
    problems.forEach((problem, i) => {
      const dependency = checks[i]?.[0];
      if (problem === undefined || dependency === undefined) return;
      reasons.push(dependency);
      this.options.onProblem?.(dependency, problem);
    });
    return reasons;
  }
}

/** The check's problem, or a timeout as the problem once `budget` is spent. */
function withinBudget(check: Promise<string | undefined>, budget: AbortSignal): Promise<string | undefined> {
  const spent = `no answer within the readiness budget of ${READINESS_PROBE_BUDGET_MS} ms`;
  if (budget.aborted) return Promise.resolve(spent);
  return new Promise((resolve) => {
    const onSpent = (): void => resolve(spent);
    budget.addEventListener('abort', onSpent, { once: true });
    check.then(
      (problem) => resolve(problem),
      (error: unknown) => resolve(error instanceof Error ? error.message : String(error)),
    ).finally(() => budget.removeEventListener('abort', onSpent));
  });
}

/** Logs what a failed readiness probe found, which `/ready` itself does not say. */
export function logReadinessProblems(logger: Logger): (dependency: Dependency, detail: string) => void {
  return (dependency, detail) => logger.warn({ dependency, problem: detail }, `not ready: ${dependency} failed its probe`);
}
