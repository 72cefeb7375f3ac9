import type { Clock } from '../../src/domain/ports.js';

/**
 * The real time, moved by the test. SigV4 checks and Azurite's SAS checks compare with the real
 * clock and allow minutes of skew, so tests that use them move it by seconds or minutes only.
 */
export class MovableClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
}
