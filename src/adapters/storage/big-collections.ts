/**
 * Collections of a million entries that never grow in one piece. V8 grows a `Map` by rehashing
 * every key, and an array by copying every element into a new backing store, at once: with a
 * million entries each such step held the event loop for a tenth of a second to a quarter of a
 * second (main-thread CPU, measured while an existence check of a million files filled them).
 * These grow by small parts instead.
 */

/**
 * A map from strings spread over many small `Map`s by a hash of the key: a shard of a thousandth of
 * a million keys rehashes in well under a millisecond. Shards are made as keys arrive, so a small
 * map costs one.
 */
export class ShardedMap<V> {
  readonly #shards: Array<Map<string, V> | undefined> = new Array<Map<string, V> | undefined>(shardCount).fill(undefined);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  get(key: string): V | undefined {
    return this.#shards[shardOf(key)]?.get(key);
  }

  has(key: string): boolean {
    return this.#shards[shardOf(key)]?.has(key) ?? false;
  }

  set(key: string, value: V): void {
    const s = shardOf(key);
    let shard = this.#shards[s];
    if (shard === undefined) {
      shard = new Map();
      this.#shards[s] = shard;
    }
    const before = shard.size;
    shard.set(key, value);
    this.#size += shard.size - before;
  }
}

/** A power of two: a million keys make shards of about a thousand. */
const shardCount = 1024;

/** FNV-1a over the key's UTF-16 code units, cut to a shard number. */
function shardOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) & (shardCount - 1);
}

/** A list that grows a chunk of {@link chunkLength} elements at a time; the chunks are plain arrays. */
export class ChunkedList<T> {
  readonly #chunks: T[][] = [];
  #length = 0;

  get length(): number {
    return this.#length;
  }

  push(value: T): void {
    const offset = this.#length & (chunkLength - 1);
    if (offset === 0) this.#chunks.push([]);
    (this.#chunks[this.#chunks.length - 1] as T[]).push(value);
    this.#length += 1;
  }

  /** The element at `index` (0 <= index < length). */
  at(index: number): T {
    return (this.#chunks[index >>> chunkBits] as T[])[index & (chunkLength - 1)] as T;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (const chunk of this.#chunks) yield* chunk;
  }
}

const chunkBits = 13;
/** 8,192: a chunk's growth copies a few kilobytes; a million elements make some 120 chunks. */
const chunkLength = 1 << chunkBits;
