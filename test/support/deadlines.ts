import Mocha from 'mocha';

/**
 * Every deadline of the suite is written as what a test needs on an idle machine, and stretched
 * here by one factor for a loaded one: the suite must pass on a 2-core machine that something else
 * keeps busy (three or four times slower than idle, and child processes that start `tsx` slower
 * still). A deadline only bounds how long a hung test takes to fail; it never decides a result
 * that would otherwise pass. `TEST_DEADLINE_FACTOR` sets the factor (default 4; 1 for the written
 * values).
 */
export const deadlineFactor: number = (() => {
  const text = process.env['TEST_DEADLINE_FACTOR'];
  const factor = text === undefined || text === '' ? 4 : Number(text);
  if (!Number.isFinite(factor) || factor < 1) throw new Error(`TEST_DEADLINE_FACTOR must be a number of at least 1, not ${text}`);
  return factor;
})();

/** `idleMs`, stretched for a loaded machine: for a test's own waits (`waitFor`, a child's run). */
export function deadline(idleMs: number): number {
  return Math.round(idleMs * deadlineFactor);
}

/**
 * mocha's timeouts, stretched alike: each test's and hook's once, when it first runs (whether it
 * came from .mocharc.json, `describe`'s `this.timeout` or mocha's default), and any a test or hook
 * sets on itself while running (`this.timeout(...)` in its body). 0 (no timeout) stays 0.
 */
const stretched = new WeakSet<Mocha.Runnable>();
const runnableRun = Mocha.Runnable.prototype.run;
Mocha.Runnable.prototype.run = function run(this: Mocha.Runnable, ...args: Parameters<Mocha.Runnable['run']>) {
  if (!stretched.has(this)) {
    stretched.add(this);
    if (this.timeout() > 0) this.timeout(deadline(this.timeout()));
  }
  return runnableRun.apply(this, args);
};
const contextTimeout = Mocha.Context.prototype.timeout;
Mocha.Context.prototype.timeout = function timeout(this: Mocha.Context, ...args: unknown[]) {
  if (args.length === 0) return (contextTimeout as () => number).call(this);
  const [ms] = args;
  return (contextTimeout as (ms: string | number) => Mocha.Context).call(this, typeof ms === 'number' && ms > 0 ? deadline(ms) : (ms as string | number));
} as Mocha.Context['timeout'];
