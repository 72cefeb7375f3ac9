import type { QuotaStanding } from '../domain/monthly-quota.js';

/**
 * The monthly byte quota in the IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers,
 * sections 3 and 4): a quota policy item named `monthly-bytes` in `RateLimit-Policy` (`q` the
 * quota, `qu` its unit `content-bytes`, `w` the period in seconds) and its live counter in
 * `RateLimit` (`r` the bytes left, `t` seconds until the period resets). Both fields are
 * Structured Field Lists, so the download budget's own item (express-rate-limit's `downloads`) and
 * this one sit side by side in one field each.
 */
export const QUOTA_POLICY_NAME = 'monthly-bytes';

export function quotaPolicyItem(standing: QuotaStanding): string {
  const windowSeconds = Math.round((standing.period.end.getTime() - standing.period.start.getTime()) / 1000);
  return `"${QUOTA_POLICY_NAME}";q=${standing.limit};qu="content-bytes";w=${windowSeconds}`;
}

export function quotaItem(standing: QuotaStanding, now: Date): string {
  return `"${QUOTA_POLICY_NAME}";r=${standing.remaining};t=${secondsUntilReset(standing, now)}`;
}

/** Whole seconds until the period resets, at least 1 (also the `Retry-After` of a refusal). */
export function secondsUntilReset(standing: QuotaStanding, now: Date): number {
  return Math.max(1, Math.ceil((standing.period.end.getTime() - now.getTime()) / 1000));
}

/** Adds `item` to a List field that may already hold other items (RFC 9651 section 3.1). */
export function appendListItem(existing: string | number | readonly string[] | undefined, item: string): string {
  const current = Array.isArray(existing) ? existing.join(', ') : existing === undefined ? '' : String(existing);
  return current.trim() === '' ? item : `${current}, ${item}`;
}
