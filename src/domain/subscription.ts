/**
 * A client's subscription term and a file's release window: when access starts and ends. Both are
 * half-open intervals, `[from, until)`: a term valid until midnight ends at midnight exactly, and a
 * file available from 21:00 is there at 21:00:00.000. Time always arrives as a parameter.
 */

/** When a client's subscription is in force; an absent bound is unbounded. */
export interface SubscriptionTerm {
  readonly validFrom?: Date;
  readonly validUntil?: Date;
}

/** Where `now` falls in a term. */
export type TermStatus =
  | { readonly kind: 'active'; readonly endsAt?: Date }
  | { readonly kind: 'notYetActive'; readonly startsAt: Date }
  | { readonly kind: 'ended'; readonly endedAt: Date };

export function termStatus(term: SubscriptionTerm, now: Date): TermStatus {
  const at = now.getTime();
  if (term.validFrom !== undefined && at < term.validFrom.getTime()) return { kind: 'notYetActive', startsAt: term.validFrom };
  if (term.validUntil !== undefined && at >= term.validUntil.getTime()) return { kind: 'ended', endedAt: term.validUntil };
  return term.validUntil === undefined ? { kind: 'active' } : { kind: 'active', endsAt: term.validUntil };
}

/** A sentence a subscriber can act on, for a term that is not in force. */
export function describeInactiveTerm(status: Exclude<TermStatus, { kind: 'active' }>): string {
  return status.kind === 'notYetActive'
    ? `The subscription is not active yet: it starts at ${status.startsAt.toISOString()}`
    : `The subscription is not active: it ended at ${status.endedAt.toISOString()}`;
}

/**
 * The moment something granted now (a token, a link, temporary credentials) must stop working:
 * `wanted`, or the end of the term if that comes first. No grant outlives its term.
 */
export function capToTerm(wanted: Date, term: SubscriptionTerm): Date {
  return term.validUntil !== undefined && term.validUntil.getTime() < wanted.getTime() ? term.validUntil : wanted;
}

/** When a file of an index may be seen and read; an absent bound is unbounded. */
export interface ReleaseWindow {
  readonly availableFrom?: Date;
  readonly availableUntil?: Date;
}

export function isReleased(window: ReleaseWindow, now: Date): boolean {
  return isReleasedAt(window.availableFrom?.getTime() ?? -Infinity, window.availableUntil?.getTime() ?? Infinity, now.getTime());
}

/** `wanted`, or the end of the file's release window if that comes first: no link outlives its file's window. */
export function capToWindow(wanted: Date, window: ReleaseWindow): Date {
  return window.availableUntil !== undefined && window.availableUntil.getTime() < wanted.getTime() ? window.availableUntil : wanted;
}

/** The release rule on times in milliseconds, `-Infinity`/`Infinity` for an unbounded side: `[from, until)`. */
export function isReleasedAt(from: number, until: number, at: number): boolean {
  return from <= at && at < until;
}

/**
 * The window boundaries nearest a moment `at`, gathered one window at a time: the last one at or
 * before it (when the set of released files last changed) and the first one after it (when it
 * next changes without any index change, so that whatever was derived from it expires then).
 */
export class ReleaseBoundaries {
  /** The last boundary at or before `at`, `-Infinity` when none. */
  since = Number.NEGATIVE_INFINITY;
  /** The first boundary after `at`, `Infinity` when none lies ahead. */
  until = Number.POSITIVE_INFINITY;

  constructor(readonly at: number) {}

  add(from: number, until: number): void {
    this.#take(from);
    this.#take(until);
  }

  #take(bound: number): void {
    if (!Number.isFinite(bound)) return;
    if (bound <= this.at) {
      if (bound > this.since) this.since = bound;
    } else if (bound < this.until) this.until = bound;
  }
}

/** The first window boundary strictly after `now`, `undefined` when none lies ahead. */
export function nextReleaseBoundary(windows: Iterable<ReleaseWindow>, now: Date): Date | undefined {
  const boundaries = new ReleaseBoundaries(now.getTime());
  for (const window of windows) {
    boundaries.add(window.availableFrom?.getTime() ?? -Infinity, window.availableUntil?.getTime() ?? Infinity);
  }
  return Number.isFinite(boundaries.until) ? new Date(boundaries.until) : undefined;
}
