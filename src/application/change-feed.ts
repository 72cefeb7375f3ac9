import type { LoggedChange } from '../domain/changes.js';
import { CursorExpired } from '../domain/errors.js';
import type { ChangeLog, ChecksumStore } from '../domain/ports.js';

/**
 * Runs `run` after `ms` milliseconds; the function returned cancels it. The system's timers in
 * production (unref'd: a pending wait never keeps the process alive), a hand-driven one in tests.
 */
export type Schedule = (ms: number, run: () => void) => () => void;

/** What a client asks of its feed. */
export interface FeedRequest {
  /** The position the client has read up to (a cursor's); the oldest retained event when absent. */
  readonly after?: number;
  /** At most this many events. */
  readonly limit: number;
  /** How long to hold the answer while there is nothing new; 0 answers at once. */
  readonly waitMs: number;
  /** Aborted when the client goes away: the wait ends at once. */
  readonly signal?: AbortSignal;
}

/** One page of a client's feed. */
export interface FeedPage {
  /** The client's events after the request's position, in order (SHA-256 filled in where known). */
  readonly events: readonly LoggedChange[];
  /** The position to continue from: the last event returned, or the request's own position when there was none. */
  readonly next: number;
  /** Whether more of the client's events follow `next` already. */
  readonly hasMore: boolean;
}

export interface ChangeFeedOptions {
  readonly log: ChangeLog;
  /** Fills in the `sha256` of events the scanner logged before it had computed it. */
  readonly checksums: ChecksumStore;
  readonly schedule: Schedule;
  /** How often the one watcher of the log's head asks it, while anyone waits. */
  readonly pollMs: number;
  /** How many requests may wait at once on this instance; more are answered at once. */
  readonly maxWaiters: number;
  /** How many of those may be one client's. */
  readonly maxWaitersPerClient: number;
}

interface Waiter {
  readonly clientId: string;
  /** Woken when the log's head passes this position. */
  readonly after: number;
  readonly wake: () => void;
}

/**
 * A client's changes, as its `GET /changes` reads them: a page after a position, refused once the
 * retention has pruned what the position had not read yet (`CursorExpired`, start over from a
 * listing), and held for up to `waitMs` while nothing new is there (a long poll).
 *
 * The long polls of an instance share one watcher: while anyone waits, the log's head is read once
 * per `pollMs` whatever the number of waiting requests, and only those whose position it passed
 * read the log again. Waits are bounded in number (in all and per client), each ends at its
 * timeout, when its client goes away, or at `close()` (graceful shutdown).
 */
export class ChangeFeed {
  readonly #options: ChangeFeedOptions;
  readonly #waiters = new Set<Waiter>();
  readonly #perClient = new Map<string, number>();
  #cancelPoll: (() => void) | undefined;
  #polling = false;
  #closed = false;
  #positionRead: Promise<number> | undefined;

  constructor(options: ChangeFeedOptions) {
    this.#options = options;
  }

  /** How many requests wait now (for metrics and tests). */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** The log's position now: a listing taken after it, then the feed followed from it, misses nothing. */
  position(): Promise<number> {
    // Concurrent listings share one read of the head (a round trip to Table Storage on Azure). A
    // position read a little earlier is as safe (the listing that follows is taken later still, so
    // what it missed comes after that position); only a later one could skip a change.
    if (this.#positionRead === undefined) {
      const read = this.#options.log.head().finally(() => {
        if (this.#positionRead === read) this.#positionRead = undefined;
      });
      this.#positionRead = read;
    }
    return this.#positionRead;
  }

  /**
   * Stops sharing the read of the head under way (its caller gave up waiting for it): the next
   * `position()` reads the head again instead of joining a read that may never end.
   */
  abandonPositionRead(): void {
    this.#positionRead = undefined;
  }

  async read(clientId: string, request: FeedRequest): Promise<FeedPage> {
    const log = this.#options.log;
    const from = request.after ?? (await log.horizon());
    let { page, seen } = await this.#page(clientId, from, request.limit, request.after !== undefined);
    if (page.events.length > 0 || request.waitMs <= 0) return page;
    const deadline = this.#startWait(clientId, request.waitMs, request.signal);
    if (deadline === undefined) return page;
    try {
      // Woken each time the head passes what was read; another client's events wake it without
      // giving it anything, so it reads again (from the same position: the client's own events
      // after it are all it can get) and waits until its own arrive or the wait ends.
      while (page.events.length === 0 && (await deadline.woken(seen)) === 'appended') {
        ({ page, seen } = await this.#page(clientId, from, request.limit, true));
      }
      return page;
    } finally {
      deadline.end();
    }
  }

  /** Ends every wait now (they answer with what they have) and every later one at once: the instance is draining. */
  close(): void {
    this.#closed = true;
    for (const waiter of [...this.#waiters]) waiter.wake();
    this.#stopPolling();
  }

  /** A page after `from`, and the log's head read before it (every event of the client up to it is in the page or before `from`). */
  async #page(clientId: string, from: number, limit: number, fromCursor: boolean): Promise<{ readonly page: FeedPage; readonly seen: number }> {
    const log = this.#options.log;
    const head = await log.head();
    const found = await log.read(clientId, from, limit + 1);
    if (fromCursor) {
      if (from > head) {
        // A position the log never reached: a log that was reset since the cursor was made.
        throw new CursorExpired('The feed was reset since this cursor was made: list again, then follow its changesCursor');
      }
      // Expired only if one of the client's own changes after the cursor was pruned: a quiet
      // client keeps its cursor for as long as it likes (asked only once the log pruned past it).
      if (from < (await log.horizon()) && from < (await log.prunedThrough(clientId))) {
        throw new CursorExpired('The feed no longer holds the changes after this cursor (CHANGES_RETENTION_DAYS): list again, then follow its changesCursor');
      }
    }
    const hasMore = found.length > limit;
    const events = await this.#withChecksums(hasMore ? found.slice(0, limit) : found);
    // Nothing of the client's own after its position: the same position, the same cursor.
    return { page: { events, next: events.at(-1)?.position ?? from, hasMore }, seen: head };
  }

  /** The events with the `sha256` the checksum store knows for their exact version: one lookup per page. */
  async #withChecksums(events: readonly LoggedChange[]): Promise<readonly LoggedChange[]> {
    const missing = events.filter((event) => event.file.sha256 === undefined);
    if (missing.length === 0) return events;
    const known = await this.#options.checksums.lookup(missing.map((event) => ({ path: event.file.fileName, etag: event.file.etag })));
    // Keyed by path for one etag each: only events of that same version get it.
    const versions = new Map(missing.map((event) => [event.file.fileName, event.file.etag]));
    return events.map((event) => {
      const sha256 = known.get(event.file.fileName);
      if (event.file.sha256 !== undefined || sha256 === undefined || versions.get(event.file.fileName) !== event.file.etag) return event;
      return { ...event, file: { ...event.file, sha256 } };
    });
  }

  /**
   * Registers a wait of at most `waitMs`; `undefined` when no wait is possible (draining, or the
   * bounds are reached: the request is answered at once, and its client asks again).
   */
  #startWait(
    clientId: string,
    waitMs: number,
    signal: AbortSignal | undefined,
  ): { woken(after: number): Promise<'appended' | 'ended'>; end(): void } | undefined {
    const { maxWaiters, maxWaitersPerClient, schedule } = this.#options;
    const own = this.#perClient.get(clientId) ?? 0;
    if (this.#closed || signal?.aborted === true || this.#waiters.size >= maxWaiters || own >= maxWaitersPerClient) return undefined;
    this.#perClient.set(clientId, own + 1);
    let ended = false;
    let current: Waiter | undefined;
    let settle: ((outcome: 'appended' | 'ended') => void) | undefined;
    const finish = (outcome: 'appended' | 'ended'): void => {
      if (outcome === 'ended') ended = true;
      if (current !== undefined) this.#waiters.delete(current);
      current = undefined;
      const resolve = settle;
      settle = undefined;
      resolve?.(outcome);
    };
    const cancelTimeout = schedule(waitMs, () => finish('ended'));
    const onAbort = (): void => finish('ended');
    signal?.addEventListener('abort', onAbort, { once: true });
    return {
      woken: (position) =>
        new Promise((resolve) => {
          if (ended || this.#closed) return resolve('ended');
          settle = resolve;
          current = { clientId, after: position, wake: () => finish(this.#closed ? 'ended' : 'appended') };
          this.#waiters.add(current);
          this.#startPolling();
        }),
      end: () => {
        finish('ended');
        cancelTimeout();
        signal?.removeEventListener('abort', onAbort);
        const left = (this.#perClient.get(clientId) ?? 1) - 1;
        if (left === 0) this.#perClient.delete(clientId);
        else this.#perClient.set(clientId, left);
        if (this.#waiters.size === 0) this.#stopPolling();
      },
    };
  }

  /** The one watcher: a read of the head per `pollMs` while anyone waits, never two at once. */
  #startPolling(): void {
    if (this.#cancelPoll !== undefined || this.#polling || this.#closed) return;
    this.#cancelPoll = this.#options.schedule(this.#options.pollMs, () => {
      this.#cancelPoll = undefined;
      void this.#poll();
    });
  }

  async #poll(): Promise<void> {
    if (this.#waiters.size === 0) return;
    this.#polling = true;
    let head: number | undefined;
    try {
      head = await this.#options.log.head();
    } catch {
      // The log could not be read: every wait goes on until the next poll or its own timeout.
      head = undefined;
    } finally {
      this.#polling = false;
    }
    if (head !== undefined) {
      for (const waiter of [...this.#waiters]) if (head > waiter.after) waiter.wake();
    }
    if (this.#waiters.size > 0) this.#startPolling();
  }

  #stopPolling(): void {
    this.#cancelPoll?.();
    this.#cancelPoll = undefined;
  }
}
