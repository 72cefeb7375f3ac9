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
  const at = now.getTime();
  if (window.availableFrom !== undefined && at < window.availableFrom.getTime()) return false;
  return window.availableUntil === undefined || at < window.availableUntil.getTime();
}

/**
 * The first window boundary strictly after `now`: the moment the set of released files next
 * changes without any index change, so that whatever was derived from it expires then. `undefined`
 * when no boundary lies ahead.
 */
export function nextReleaseBoundary(windows: Iterable<ReleaseWindow>, now: Date): Date | undefined {
  const at = now.getTime();
  let next = Number.POSITIVE_INFINITY;
  for (const window of windows) {
    for (const bound of [window.availableFrom, window.availableUntil]) {
      if (bound === undefined) continue;
      const time = bound.getTime();
      if (time > at && time < next) next = time;
    }
  }
  return Number.isFinite(next) ? new Date(next) : undefined;
}
