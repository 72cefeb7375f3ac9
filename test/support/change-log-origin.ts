import type { Clock } from '../../src/domain/ports.js';

/**
 * A clock at 1970-01-01 for making change logs: a log made with it has origin 0, so its positions
 * (and ids, `chg_000000000001`) start at 1, as tests write them. Production logs take the real clock.
 */
export const originZeroClock: Clock = { now: () => new Date(0) };
