import { expect } from 'chai';

/**
 * Asserts that `parse` runs in time linear in its input's length, as a ratio measured in one run:
 * parsing one 64 KiB input against parsing sixty-four 1 KiB inputs of the same shape, the same
 * number of characters in all (or one `largeLength` input against 64 of 1/64 of it). A linear parser takes about as long for both (ratio ~1); a quadratic
 * one takes about 64 times longer for the large input. No absolute time is asserted, so a slow or
 * busy machine changes both sides alike.
 */
export function expectLinearTime(
  parse: (input: string) => unknown,
  inputOfLength: (length: number) => string,
  /** For inputs bounded below 64 KiB: the large length, the small one being 1/64 of it. */
  largeLength = 64 * 1024,
): void {
  const small = inputOfLength(largeLength / 64);
  const large = inputOfLength(largeLength);
  const timeOf = (action: () => void): number => {
    const start = process.hrtime.bigint();
    action();
    return Number(process.hrtime.bigint() - start);
  };
  const smallBatch = (): void => {
    for (let i = 0; i < 64; i += 1) parse(small);
  };
  const largeOnce = (): void => {
    parse(large);
  };
  // Warm up both shapes so that the JIT has compiled the parser before anything is timed.
  for (let i = 0; i < 3; i += 1) {
    smallBatch();
    largeOnce();
  }
  // The median of interleaved trials, so that a pause of the machine cannot decide the outcome.
  const ratios: number[] = [];
  for (let trial = 0; trial < 7; trial += 1) {
    const smallNs = timeOf(smallBatch);
    const largeNs = timeOf(largeOnce);
    ratios.push(largeNs / Math.max(smallNs, 1));
  }
  ratios.sort((a, b) => a - b);
  const median = ratios[Math.floor(ratios.length / 2)] ?? Number.NaN;
  expect(median, `time for one ${largeLength}-character input / sixty-four of ${largeLength / 64} (trials: ${ratios.map((r) => r.toFixed(2)).join(', ')})`).to.be.below(8);
}
