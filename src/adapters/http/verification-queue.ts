import { RequestRefused } from './error-responses.js';

/**
 * Secret verifications (scrypt, ~50 ms of a core each) waiting their turn, shared fairly between
 * addresses: at most `concurrency` run at once; the next to start is the first waiting one of the
 * address served least recently, so a client at another address waits for the verifications
 * already running, not for a flood queued before it; one address may hold at most `perAddress` places (running or
 * waiting) and all addresses together at most `capacity` waiting ones. A request past either bound
 * is refused at once, never queued: 429 `rate_limited` past the address's share, 503
 * `limits_unavailable` when the queue is full, both with `Retry-After`.
 */
export interface VerificationQueueOptions {
  readonly concurrency: number;
  /** Verifications waiting, from all addresses together. */
  readonly capacity: number;
  /** Verifications running or waiting for one address. */
  readonly perAddress: number;
  /** Told the number waiting whenever it changes (metrics). */
  readonly onWaiting?: (waiting: number) => void;
  /** Told each refusal (metrics). */
  readonly onRefused?: (reason: 'address_share' | 'queue_full') => void;
}

/** Waiting places per verification running at once: 64 * ~50 ms, about 3 s of work per worker. */
export const WAITING_PER_VERIFIER = 64;

/** The queue's bounds for `concurrency` verifications at once: 64 waiting per verifier, a quarter of them per address. */
export function verificationQueueBounds(concurrency: number): { capacity: number; perAddress: number } {
  const capacity = WAITING_PER_VERIFIER * concurrency;
  return { capacity, perAddress: Math.max(1, Math.floor(capacity / 4)) };
}

/** Seconds a refused client should wait: about the time the queue takes to move on. */
const RETRY_AFTER_SECONDS = 1;

interface AddressPlaces {
  running: number;
  readonly waiting: Array<() => void>;
  /** When a verification of this address last started (a sequence number); -1: never. */
  lastStarted: number;
}

export class VerificationQueue {
  readonly #options: VerificationQueueOptions;
  /** Only addresses holding a place: at most `concurrency + capacity` entries. */
  readonly #addresses = new Map<string, AddressPlaces>();
  /** Addresses with waiting verifications. */
  readonly #waitingAddresses = new Set<string>();
  #starts = 0;
  #running = 0;
  #waiting = 0;

  constructor(options: VerificationQueueOptions) {
    this.#options = options;
  }

  /** Runs `work` for `address` in its turn; throws `RequestRefused` at once when it may not wait. */
  async run<T>(address: string, work: () => Promise<T>): Promise<T> {
    const places = this.#addresses.get(address) ?? { running: 0, waiting: [], lastStarted: -1 };
    if (places.running + places.waiting.length >= this.#options.perAddress) {
      this.#options.onRefused?.('address_share');
      throw new RequestRefused('rate_limited', `Too many token requests from this address at once; retry in ${RETRY_AFTER_SECONDS} second`, {
        retryAfterSeconds: RETRY_AFTER_SECONDS,
      });
    }
    if (this.#running >= this.#options.concurrency && this.#waiting >= this.#options.capacity) {
      this.#options.onRefused?.('queue_full');
      throw new RequestRefused('limits_unavailable', `Too many client secrets are being verified right now; retry in ${RETRY_AFTER_SECONDS} second`, {
        retryAfterSeconds: RETRY_AFTER_SECONDS,
      });
    }
    this.#addresses.set(address, places);
    if (this.#running < this.#options.concurrency) {
      this.#started(places);
    } else {
      // Started by `#next`, which also counts it as running.
      await new Promise<void>((resolve) => {
        this.#waitingAddresses.add(address);
        places.waiting.push(resolve);
        this.#setWaiting(this.#waiting + 1);
      });
    }
    try {
      return await work();
    } finally {
      places.running -= 1;
      this.#running -= 1;
      if (places.running === 0 && places.waiting.length === 0) this.#addresses.delete(address);
      this.#next();
    }
  }

  /** Starts the first waiting verification of the address served least recently. */
  #next(): void {
    let chosen: { address: string; places: AddressPlaces } | undefined;
    for (const address of this.#waitingAddresses) {
      const places = this.#addresses.get(address);
      if (places !== undefined && (chosen === undefined || places.lastStarted < chosen.places.lastStarted)) chosen = { address, places };
    }
    const start = chosen?.places.waiting.shift();
    if (chosen === undefined || start === undefined) return;
    if (chosen.places.waiting.length === 0) this.#waitingAddresses.delete(chosen.address);
    this.#started(chosen.places);
    this.#setWaiting(this.#waiting - 1);
    start();
  }

  #started(places: AddressPlaces): void {
    places.running += 1;
    places.lastStarted = this.#starts;
    this.#starts += 1;
    this.#running += 1;
  }

  #setWaiting(waiting: number): void {
    this.#waiting = waiting;
    this.#options.onWaiting?.(waiting);
  }
}
