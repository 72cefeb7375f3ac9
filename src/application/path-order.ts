/**
 * The order of a client's existing files by storage path, built in slices of bounded work: a
 * million-row catalog takes seconds of CPU to sort, and one synchronous sort held the event loop
 * for all of it (every other request, `/health` included, waited). Between two slices the build
 * hands the event loop a turn through an injected `yieldToLoop`, so this module needs no timer and
 * imports nothing of Node.
 */
import { Slicer, type SliceBudget } from '../domain/slices.js';

export type { SliceBudget };

/**
 * Steps of a slice in production: a comparison of two catalog paths costs well under a
 * microsecond, so 20,000 keep a slice within a few milliseconds even on a loaded machine, and a
 * million-row sort yields about a thousand times.
 */
export const PATH_ORDER_STEPS_PER_SLICE = 20_000;

/** What an order is built from; rows are catalog rows. */
export interface PathOrderSource {
  /** Rows in the catalog. */
  readonly catalogRows: number;
  /** How many rows storage has, and the `i`th of them, ascending. */
  readonly existingCount: number;
  existingRowAt(i: number): number;
  /** Whether `row` is the first of the catalog's rows with its path (later ones repeat it). */
  isFirstOfPath(row: number): boolean;
  /** The UTF-8 byte order of two rows' paths (`compareUtf8`). */
  comparePaths(a: number, b: number): number;
}

/**
 * The rows storage has, one per path (the first row of each), in the byte order of their UTF-8
 * paths. `previous`, an order built the same way from an earlier existence list of the same
 * catalog, is reused: the rows still there keep their order and only the rows that appeared are
 * sorted and merged in, so a re-read existence list costs a pass over the rows, not a sort.
 */
export async function buildPathOrder(source: PathOrderSource, budget: SliceBudget, previous?: Uint32Array): Promise<Uint32Array> {
  const work = new Slicer(budget);
  const exists = new Uint8Array(source.catalogRows);
  for (let i = 0; i < source.existingCount; i += 1) {
    exists[source.existingRowAt(i)] = 1;
    if (work.spent()) await work.pause();
  }
  const ordered = new Uint8Array(source.catalogRows);
  // Typed arrays of the most rows they can take: no array growing (and copied) a million times.
  const kept = new Uint32Array(Math.min(previous?.length ?? 0, source.existingCount));
  let keptCount = 0;
  for (const row of previous ?? []) {
    if (row < source.catalogRows && exists[row] === 1) {
      kept[keptCount] = row;
      keptCount += 1;
      ordered[row] = 1;
    }
    if (work.spent()) await work.pause();
  }
  const added = new Uint32Array(source.existingCount);
  let addedCount = 0;
  for (let i = 0; i < source.existingCount; i += 1) {
    const row = source.existingRowAt(i);
    if (ordered[row] === 0 && source.isFirstOfPath(row)) {
      added[addedCount] = row;
      addedCount += 1;
    }
    if (work.spent()) await work.pause();
  }
  const sorted = await sortRows(added.subarray(0, addedCount), source.comparePaths, work);
  const order = await mergeRows(kept.subarray(0, keptCount), sorted, source.comparePaths, work);
  // A view of a bigger buffer would keep all of it alive: the order is kept at its own size.
  return order.byteLength === order.buffer.byteLength ? order : order.slice();
}

/** A stable bottom-up merge sort (equal paths keep their row order), one comparison a step. */
async function sortRows(rows: Uint32Array, compare: (a: number, b: number) => number, work: Slicer): Promise<Uint32Array> {
  const count = rows.length;
  let from: Uint32Array = rows;
  let to: Uint32Array = new Uint32Array(count);
  for (let width = 1; width < count; width *= 2) {
    for (let low = 0; low < count; low += 2 * width) {
      const middle = Math.min(low + width, count);
      const high = Math.min(low + 2 * width, count);
      let i = low;
      let j = middle;
      let k = low;
      while (i < middle && j < high) {
        const left = from[i] as number;
        const right = from[j] as number;
        if (compare(right, left) < 0) {
          to[k] = right;
          j += 1;
        } else {
          to[k] = left;
          i += 1;
        }
        k += 1;
        if (work.spent()) await work.pause();
      }
      to.set(from.subarray(i, middle), k);
      to.set(from.subarray(j, high), k + middle - i);
    }
    [from, to] = [to, from];
  }
  return from;
}

/** Two sorted runs of distinct paths, none in both, as one. */
async function mergeRows(a: Uint32Array, b: Uint32Array, compare: (a: number, b: number) => number, work: Slicer): Promise<Uint32Array> {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const merged = new Uint32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as number;
    const y = b[j] as number;
    if (compare(y, x) < 0) {
      merged[k] = y;
      j += 1;
    } else {
      merged[k] = x;
      i += 1;
    }
    k += 1;
    if (work.spent()) await work.pause();
  }
  merged.set(a.subarray(i), k);
  merged.set(b.subarray(j), k + a.length - i);
  return merged;
}
