import { LRUCache } from 'lru-cache';
import type { BoundedMemory, BoundedMemoryStats } from '../../domain/ports.js';

interface Sized {
  readonly value: object;
  readonly bytes: number;
}

/** What a key costs besides its value: the string and lru-cache's slots for it. */
const entryOverheadBytes = 96;


/** `BoundedMemory` on lru-cache, bounded by `maxSize` over the sizes the callers state. */
export class LruBoundedMemory implements BoundedMemory {
  readonly #cache: LRUCache<string, Sized>;
  readonly #maxBytes: number;
  #hits = 0;
  #misses = 0;
  #evictions = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
    this.#cache = new LRUCache<string, Sized>({
      maxSize: maxBytes,
      sizeCalculation: (entry, key) => Math.max(1, entry.bytes + 2 * key.length + entryOverheadBytes),
      dispose: (_entry, _key, reason) => {
        if (reason === 'evict') this.#evictions += 1;
      },
    });
  }

  get(key: string): object | undefined {
    const entry = this.#cache.get(key);
    if (entry === undefined) this.#misses += 1;
    else this.#hits += 1;
    return entry?.value;
  }

  set(key: string, value: object, bytes: number): void {
    this.#cache.set(key, { value, bytes });
  }

  delete(key: string): void {
    this.#cache.delete(key);
  }

  stats(): BoundedMemoryStats {
    return {
      bytes: this.#cache.calculatedSize,
      maxBytes: this.#maxBytes,
      entries: this.#cache.size,
      hits: this.#hits,
      misses: this.#misses,
      evictions: this.#evictions,
    };
  }
}
