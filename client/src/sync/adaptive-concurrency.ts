/**
 * How many transfers may run at once: `max` to start with, halved (down to 1) when the gateway
 * says 429, and raised by one after `successesToGrow` transfers in a row finished without one
 * (additive increase, multiplicative decrease, as TCP does). Several 429s answered to requests that
 * were already in flight together count as one signal: a cut needs a success since the last cut.
 */
export class AdaptiveConcurrency {
  private current: number;
  private active = 0;
  private successesSinceChange = 0;
  private successSinceCut = true;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly max: number, private readonly successesToGrow = 4) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`concurrency must be a positive integer, got ${max}`);
    this.current = max;
  }

  get limit(): number {
    return this.current;
  }

  /** Resolves when a slot is free; call `release` once done. */
  async acquire(): Promise<void> {
    if (this.active < this.current) {
      this.active += 1;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.active <= this.current ? this.waiting.shift() : undefined;
    if (next !== undefined) next();
    else this.active -= 1;
  }

  /** The gateway refused with 429. Returns true when the limit was cut. */
  throttled(): boolean {
    if (!this.successSinceCut || this.current === 1) return false;
    this.current = Math.max(1, Math.floor(this.current / 2));
    this.successesSinceChange = 0;
    this.successSinceCut = false;
    return true;
  }

  /** A transfer finished without being throttled. */
  succeeded(): void {
    this.successSinceCut = true;
    this.successesSinceChange += 1;
    if (this.successesSinceChange >= this.successesToGrow && this.current < this.max) {
      this.current += 1;
      this.successesSinceChange = 0;
      // A slot that just opened goes to whoever waits.
      if (this.active < this.current) {
        const next = this.waiting.shift();
        if (next !== undefined) {
          this.active += 1;
          next();
        }
      }
    }
  }
}
