/**
 * "What's new": the caller's recent events of the change feed (`GET /changes`), newest first. Pure,
 * so that the rules are tested outside the browser.
 */

export type ChangeType = 'file.released' | 'file.updated' | 'file.withdrawn';

/** One event of `/changes` (openapi.yaml `ChangeEvent`). */
export interface FeedEvent {
  readonly id: string;
  readonly type: ChangeType;
  readonly time: string;
  readonly file: {
    readonly symbol: string;
    readonly fileName: string;
    readonly size: number;
    readonly etag: string;
    readonly uploaded: string;
    readonly sha256?: string;
  };
}

/** One page of `/changes` (openapi.yaml `ChangeFeed`). */
export interface FeedAnswer {
  readonly events: readonly FeedEvent[];
  readonly nextCursor: string;
  readonly hasMore: boolean;
}

/** How many events the view keeps: the newest ones. */
export const recentLimit = 200;

/**
 * `shown` (newest first) with `arrived` (oldest first, as the feed sends them) put on top, each
 * event once (the feed delivers at least once: a repeated id is not shown twice), at most `limit`.
 */
export function newestFirst(shown: readonly FeedEvent[], arrived: readonly FeedEvent[], limit: number = recentLimit): FeedEvent[] {
  const seen = new Set(shown.map((event) => event.id));
  const fresh: FeedEvent[] = [];
  for (const event of arrived) {
    if (seen.has(event.id)) continue;
    seen.add(event.id);
    fresh.push(event);
  }
  return [...fresh.reverse(), ...shown].slice(0, limit);
}

const labels: Readonly<Record<ChangeType, string>> = {
  'file.released': 'Released',
  'file.updated': 'Updated',
  'file.withdrawn': 'Withdrawn',
};

/** What the view calls a kind of event; an unknown kind (a later gateway's) by its own name. */
export function changeLabel(type: string): string {
  return labels[type as ChangeType] ?? type;
}
