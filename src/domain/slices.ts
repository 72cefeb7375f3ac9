/**
 * Long computations over a million rows (a catalog's hash tables, an existence list, a path order)
 * run in slices of bounded work with a turn of the event loop between them: one synchronous pass
 * held every other request, `/health` included, for seconds. The turn comes from an injected
 * `yieldToLoop`, so the domain and the application need no timer and import nothing of Node.
 */

/** How a long computation shares the thread. */
export interface SliceBudget {
  /** Gives the event loop a turn (the wiring passes `setImmediate`); awaited between two slices. */
  readonly yieldToLoop: () => Promise<void>;
  /** At most this many steps (what a step is, each computation says) between two yields. */
  readonly stepsPerSlice: number;
}

/**
 * Rows of a catalog touched per slice by one pass over it (a field decoded, hashed or copied, a
 * lookup in storage's answer): a row costs one to a few microseconds, so a slice stays within a few
 * milliseconds on a loaded machine (10,000 measured up to 70 ms of CPU on a busy 2-core box).
 */
export const ROWS_PER_SLICE = 5_000;

/**
 * Elements of a fresh typed array written per slice before a pass writes it at random (a hash
 * table): the first write to each page of fresh memory costs a page fault, which on a busy virtual
 * machine was measured at 100-200 microseconds (8 MiB written at random: 320 ms in one piece).
 */
export const ELEMENTS_PER_SLICE = 32_768;

/** Counts steps and yields once a slice's worth is spent. */
export class Slicer {
  #left: number;

  constructor(private readonly budget: SliceBudget) {
    this.#left = budget.stepsPerSlice;
  }

  /**
   * Counts one step; true once the slice is spent. Callers await `pause()` only then: an `await`
   * per step would cost a microtask each, more than the step it follows.
   */
  spent(): boolean {
    this.#left -= 1;
    return this.#left <= 0;
  }

  pause(): Promise<void> {
    this.#left = this.budget.stepsPerSlice;
    return this.budget.yieldToLoop();
  }
}
