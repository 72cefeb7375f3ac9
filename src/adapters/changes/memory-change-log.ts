import { changeId, type FileChange, type LoggedChange } from '../../domain/changes.js';
import type { ChangeLog, Clock } from '../../domain/ports.js';

export interface MemoryChangeLogOptions {
  /** Fixes the log's origin when it is made (its time in milliseconds times 1000); default the system clock. */
  readonly clock?: Clock;
}

/**
 * The change log of one process, for tests and the embedded demo: what it keeps is bounded by
 * what the scanner appends within the retention (`prune`), never by what a client sends. Its
 * origin is the time it was made: the log of a restarted process starts above the last one's.
 */
export class MemoryChangeLog implements ChangeLog {
  readonly #origin: number;
  #changes: LoggedChange[] = [];
  #head: number;
  #horizon: number;
  /** Per client, the position of its last change pruned (one entry per client that had changes). */
  readonly #pruned = new Map<string, number>();

  constructor(options: MemoryChangeLogOptions = {}) {
    this.#origin = (options.clock?.now().getTime() ?? Date.now()) * 1000;
    this.#head = this.#origin;
    this.#horizon = this.#origin;
  }

  async append(changes: readonly FileChange[]): Promise<readonly LoggedChange[]> {
    const logged = changes.map((change) => {
      this.#head += 1;
      return { ...change, id: changeId(this.#head), position: this.#head };
    });
    this.#changes.push(...logged);
    return logged;
  }

  async read(clientId: string, after: number, limit: number): Promise<readonly LoggedChange[]> {
    const found: LoggedChange[] = [];
    // Positions are dense: the change at position p sits at p - (first position kept).
    const first = this.#changes[0]?.position ?? this.#head + 1;
    for (let i = Math.max(0, after + 1 - first); i < this.#changes.length && found.length < limit; i += 1) {
      const change = this.#changes[i] as LoggedChange;
      if (change.clientId === clientId) found.push(change);
    }
    return found;
  }

  async head(): Promise<number> {
    return this.#head;
  }

  async horizon(): Promise<number> {
    return this.#horizon;
  }

  async prunedThrough(clientId: string): Promise<number> {
    return this.#pruned.get(clientId) ?? this.#origin;
  }

  async prune(before: Date): Promise<void> {
    const cut = this.#changes.findIndex((change) => change.time.getTime() >= before.getTime());
    const dropped = cut === -1 ? this.#changes.length : cut;
    if (dropped === 0) return;
    for (let i = 0; i < dropped; i += 1) {
      const change = this.#changes[i] as LoggedChange;
      this.#pruned.set(change.clientId, change.position);
    }
    this.#horizon = (this.#changes[dropped - 1] as LoggedChange).position;
    this.#changes = this.#changes.slice(dropped);
  }
}
