import { expect } from 'chai';
import fc from 'fast-check';
import { compareUtf8 } from '../../src/application/file-access.js';
import { buildPathOrder, PATH_ORDER_STEPS_PER_SLICE, type PathOrderSource } from '../../src/application/path-order.js';

/** Counts the comparisons a build makes and where it yields; the yield itself does nothing. */
function countingBudget(stepsPerSlice = PATH_ORDER_STEPS_PER_SLICE) {
  const counts = { comparisons: 0, sinceYield: 0, mostBetweenYields: 0, yields: 0 };
  return {
    counts,
    budget: {
      stepsPerSlice,
      yieldToLoop: async (): Promise<void> => {
        counts.yields += 1;
        counts.mostBetweenYields = Math.max(counts.mostBetweenYields, counts.sinceYield);
        counts.sinceYield = 0;
      },
    },
    compare: (paths: readonly string[]) => (a: number, b: number) => {
      counts.comparisons += 1;
      counts.sinceYield += 1;
      return compareUtf8(paths[a] as string, paths[b] as string);
    },
  };
}

/** A source over plain paths (one per catalog row) of which the rows in `existing` exist. */
function sourceOf(paths: readonly string[], existing: readonly number[], comparePaths: (a: number, b: number) => number): PathOrderSource {
  const first = new Map<string, number>();
  paths.forEach((path, row) => first.has(path) || first.set(path, row));
  return {
    catalogRows: paths.length,
    existingCount: existing.length,
    existingRowAt: (i) => existing[i] as number,
    isFirstOfPath: (row) => first.get(paths[row] as string) === row,
    comparePaths,
  };
}

/** The reference: the first existing row of each path, by the paths' UTF-8 bytes. */
function referenceOrder(paths: readonly string[], existing: readonly number[]): number[] {
  const seen = new Set<string>();
  const rows = [...existing].sort((a, b) => a - b).filter((row) => !seen.has(paths[row] as string) && seen.add(paths[row] as string));
  const bytes = new Map(rows.map((row) => [row, Buffer.from(paths[row] as string)]));
  return rows.sort((a, b) => Buffer.compare(bytes.get(a) as Buffer, bytes.get(b) as Buffer));
}

const rows200k = Array.from({ length: 200_000 }, (_, i) => `m/${(i * 7919) % 200}/S${(i * 104_729) % 200_000}.parquet`);

describe('buildPathOrder', function () {
  describe('when it orders 200,000 existing rows', function () {
    it('yields to the event loop once per slice and never compares more than a slice of paths between two yields', async function () {
      const { counts, budget, compare } = countingBudget();
      const existing = rows200k.map((_, row) => row);
      const order = await buildPathOrder(sourceOf(rows200k, existing, compare(rows200k)), budget);
      expect(order.length).to.equal(200_000);
      let outOfOrder = 0;
      for (let k = 1; k < order.length; k += 1) if (compareUtf8(rows200k[order[k - 1] as number] as string, rows200k[order[k] as number] as string) >= 0) outOfOrder += 1;
      expect(outOfOrder).to.equal(0);
      // n log2 n comparisons at most; at least one yield per slice of them.
      expect(counts.comparisons).to.be.at.most(200_000 * 18);
      expect(counts.yields).to.be.at.least(Math.floor(counts.comparisons / PATH_ORDER_STEPS_PER_SLICE));
      expect(counts.yields).to.be.at.least(100);
      expect(Math.max(counts.mostBetweenYields, counts.sinceYield)).to.be.at.most(PATH_ORDER_STEPS_PER_SLICE);
    });
  });

  describe('when only the existence list changed since the previous order', function () {
    it('compares only to place the rows that appeared, not to sort them all again', async function () {
      const paths = rows200k.slice(0, 50_000);
      const before = paths.map((_, row) => row).filter((row) => row % 1000 !== 7);
      const first = countingBudget();
      const previous = await buildPathOrder(sourceOf(paths, before, first.compare(paths)), first.budget);
      const again = countingBudget();
      const after = paths.map((_, row) => row).filter((row) => row % 1000 !== 3);
      const order = await buildPathOrder(sourceOf(paths, after, again.compare(paths)), again.budget, previous);
      expect([...order]).to.deep.equal(referenceOrder(paths, after));
      // 50 rows appeared: their sort, and one merge pass.
      expect(again.counts.comparisons).to.be.at.most(paths.length + 50 * 6);
      expect(first.counts.comparisons).to.be.at.least(10 * paths.length);
    });
  });

  describe('with repeated paths, missing rows and any previous order of the same catalog', function () {
    it('gives the first existing row of each path once, in UTF-8 byte order', async function () {
      const path = fc
        .array(fc.constantFrom('a', 'b', 'z', 'é', 'ÿ', '\uFF01', '\uE000', '\u{1F600}', '/'), { minLength: 1, maxLength: 4 })
        .map((parts) => parts.join(''));
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(path, fc.boolean(), fc.boolean()), { maxLength: 40 }),
          fc.integer({ min: 1, max: 7 }),
          async (rows, stepsPerSlice) => {
            const paths = rows.map(([p]) => p);
            const existsBefore = rows.flatMap(([, before], row) => (before ? [row] : []));
            // Existence is a property of the path: every row of an existing path exists.
            const existingPaths = new Set(rows.flatMap(([p, , now]) => (now ? [p] : [])));
            const existsNow = paths.flatMap((p, row) => (existingPaths.has(p) ? [row] : []));
            const before = countingBudget(stepsPerSlice);
            const previous = await buildPathOrder(sourceOf(paths, existsBefore, before.compare(paths)), before.budget);
            const now = countingBudget(stepsPerSlice);
            const fresh = await buildPathOrder(sourceOf(paths, existsNow, now.compare(paths)), now.budget);
            const reused = await buildPathOrder(sourceOf(paths, existsNow, now.compare(paths)), now.budget, previous);
            expect([...fresh]).to.deep.equal(referenceOrder(paths, existsNow));
            expect([...reused]).to.deep.equal([...fresh]);
            expect(Math.max(now.counts.mostBetweenYields, now.counts.sinceYield)).to.be.at.most(stepsPerSlice);
          },
        ),
      );
    });
  });
});
