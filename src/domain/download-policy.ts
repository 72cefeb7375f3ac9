import type { BlobProperties, ByteRange } from './ports.js';

/** An entity tag (RFC 9110 section 8.8.3). */
export interface EntityTag {
  readonly weak: boolean;
  /** The quoted part, quotes included, e.g. `"0x8DC"`. */
  readonly opaque: string;
}

/**
 * An `If-Match` or `If-None-Match` condition: `*`, a list of entity tags, or a value that is not
 * one of those (which matches nothing).
 */
export type EntityTagCondition =
  | { readonly kind: 'any' }
  | { readonly kind: 'tags'; readonly tags: readonly EntityTag[] }
  | { readonly kind: 'malformed' };

/** One `range-spec` of the `bytes` unit (RFC 9110 section 14.1.1), not yet checked against a size. */
export type RangeSpec =
  | { readonly kind: 'int'; readonly first: number; readonly last?: number }
  | { readonly kind: 'suffix'; readonly length: number };

/** An `If-Range` condition: an entity tag, a date, or a value that is neither (which never holds). */
export type IfRangeCondition =
  | { readonly kind: 'tag'; readonly tag: EntityTag }
  | { readonly kind: 'date'; readonly date: Date }
  | { readonly kind: 'malformed' };

/**
 * The parts of a download request that decide its outcome, already parsed from the wire. An absent
 * property means the header was absent or, where the RFC says so, is to be ignored (an invalid date,
 * an invalid or other-unit `Range`).
 */
export interface DownloadRequest {
  readonly method: 'GET' | 'HEAD';
  readonly ifMatch?: EntityTagCondition;
  readonly ifNoneMatch?: EntityTagCondition;
  readonly ifModifiedSince?: Date;
  readonly ifUnmodifiedSince?: Date;
  /** The range set, at least one spec. */
  readonly range?: readonly RangeSpec[];
  readonly ifRange?: IfRangeCondition;
}

/**
 * What a download request gets: the whole file (200), one explicit byte range (206), 304, 412, or
 * 416, which carries the file's size for its `Content-Range` (RFC 9110 section 15.5.17).
 */
export type DownloadDecision =
  | { readonly kind: 'full' }
  | { readonly kind: 'partial'; readonly range: ByteRange }
  | { readonly kind: 'notModified' }
  | { readonly kind: 'preconditionFailed'; readonly reason: string }
  | { readonly kind: 'rangeNotSatisfiable'; readonly size: number };

/**
 * The validators and size of the file a request is about. `etag` is the entity tag storage reports,
 * quotes included: strong on every store the gateway has, but a weak one is honoured as weak.
 */
export type DownloadedFile = Pick<BlobProperties, 'etag' | 'lastModified' | 'size'>;

const FULL: DownloadDecision = { kind: 'full' };

/**
 * Decides what a GET or HEAD of `file` gets, evaluating the preconditions in the order of RFC 9110
 * section 13.2.2: 412 first, then 304, then `Range`. `now` is the server's current time, against
 * which an `If-Modified-Since` date in the future is ignored (section 13.1.3).
 */
export function decideDownload(file: DownloadedFile, request: DownloadRequest, now: Date): DownloadDecision {
  const lastModified = toWholeSeconds(file.lastModified);
  const failure = preconditionFailure(file, lastModified, request);
  if (failure !== undefined) return { kind: 'preconditionFailed', reason: failure };
  if (isNotModified(file, lastModified, request, now)) return { kind: 'notModified' };
  return decideRange(file, lastModified, request);
}

// ---------------------------------------------------------------------------------------------
// Preconditions (RFC 9110 section 13.2.2, steps 1 to 4)

/** Why the request's preconditions fail (steps 1 and 2, answered with 412), or `undefined`. */
function preconditionFailure(file: DownloadedFile, lastModified: number, request: DownloadRequest): string | undefined {
  if (request.ifMatch !== undefined) {
    // Section 13.1.1: strong comparison; "*" matches any current representation, and the file exists.
    return conditionMatches(request.ifMatch, file.etag, matchesStrongly)
      ? undefined
      : 'If-Match does not match the current entity tag';
  }
  // Section 13.1.4: If-Unmodified-Since is ignored when If-Match is present, or when it is not a date.
  if (request.ifUnmodifiedSince !== undefined && lastModified > request.ifUnmodifiedSince.getTime()) {
    return 'The file was modified after the If-Unmodified-Since date';
  }
  return undefined;
}

/** Whether a GET or HEAD gets 304 (steps 3 and 4). */
function isNotModified(file: DownloadedFile, lastModified: number, request: DownloadRequest, now: Date): boolean {
  if (request.ifNoneMatch !== undefined) {
    // Section 13.1.2: weak comparison, because a cache may hold any version equivalent to this one.
    return conditionMatches(request.ifNoneMatch, file.etag, matchesWeakly);
  }
  // Section 13.1.3: If-Modified-Since is ignored when If-None-Match is present, when it is not a
  // date, and when the date is later than the server's current time.
  const since = request.ifModifiedSince;
  if (since === undefined || since.getTime() > now.getTime()) return false;
  return lastModified <= since.getTime();
}

/**
 * Whether a condition matches the current tag. A malformed condition matches nothing: `If-Match`
 * then fails (412) and `If-None-Match` lets the request through; neither can serve a version the
 * client did not ask for.
 */
function conditionMatches(
  condition: EntityTagCondition,
  currentEtag: string,
  matches: (listed: EntityTag, currentEtag: string) => boolean,
): boolean {
  switch (condition.kind) {
    case 'any':
      return true;
    case 'malformed':
      return false;
    case 'tags':
      return condition.tags.some((listed) => matches(listed, currentEtag));
  }
}

/** Section 8.8.3.2: both tags strong and their opaque parts identical. */
function matchesStrongly(listed: EntityTag, currentEtag: string): boolean {
  const current = asEntityTag(currentEtag);
  return !listed.weak && !current.weak && listed.opaque === current.opaque;
}

/** Section 8.8.3.2: opaque parts identical, whether or not either is weak. */
function matchesWeakly(listed: EntityTag, currentEtag: string): boolean {
  return listed.opaque === asEntityTag(currentEtag).opaque;
}

/** The file's own tag as storage reported it: `W/` marks it weak (section 8.8.3). */
function asEntityTag(etag: string): EntityTag {
  return etag.startsWith('W/') ? { weak: true, opaque: etag.slice(2) } : { weak: false, opaque: etag };
}

// ---------------------------------------------------------------------------------------------
// Range (RFC 9110 section 13.2.2 step 5, sections 13.1.5 and 14)

function decideRange(file: DownloadedFile, lastModified: number, request: DownloadRequest): DownloadDecision {
  // Section 14.2: Range is defined for GET only; a HEAD answers as its GET without Range would.
  if (request.method !== 'GET' || request.range === undefined) return FULL;
  // Section 13.1.5: when If-Range does not hold, the client's cached part is stale: send it all.
  if (request.ifRange !== undefined && !ifRangeHolds(file, lastModified, request.ifRange)) return FULL;
  const satisfiable = request.range.flatMap((spec) => resolveRangeSpec(spec, file.size) ?? []);
  if (satisfiable.length === 0) return { kind: 'rangeNotSatisfiable', size: file.size };
  return { kind: 'partial', range: coveringRange(satisfiable) };
}

/**
 * Section 13.1.5: an entity tag must match strongly (a weak tag never does); a date must equal the
 * last modification date exactly. Anything else does not hold.
 */
function ifRangeHolds(file: DownloadedFile, lastModified: number, ifRange: IfRangeCondition): boolean {
  switch (ifRange.kind) {
    case 'tag':
      return matchesStrongly(ifRange.tag, file.etag);
    case 'date':
      return ifRange.date.getTime() === lastModified;
    case 'malformed':
      return false;
  }
}

/**
 * The bytes a spec selects in a file of `size` bytes, or `undefined` when it is unsatisfiable
 * (section 14.1.1): a first position at or past the end, a zero-length suffix, or any range of an
 * empty file (which has no byte a `Content-Range` could name).
 */
function resolveRangeSpec(spec: RangeSpec, size: number): ByteRange | undefined {
  if (size === 0) return undefined;
  if (spec.kind === 'suffix') {
    // Section 14.1.3: a suffix longer than the file selects the whole file.
    return spec.length === 0 ? undefined : { start: Math.max(0, size - spec.length), end: size - 1 };
  }
  if (spec.first >= size) return undefined;
  // Section 14.1.3: an absent or too large last position means the last byte.
  return { start: spec.first, end: Math.min(spec.last ?? size - 1, size - 1) };
}

/**
 * One range from the first selected byte to the last. Section 14.2 lets a server coalesce ranges;
 * we send a single part rather than multipart/byteranges, and never only the first range.
 */
function coveringRange(ranges: readonly ByteRange[]): ByteRange {
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  for (const range of ranges) {
    start = Math.min(start, range.start);
    end = Math.max(end, range.end);
  }
  return { start, end };
}

/** Section 5.6.7: HTTP dates have whole seconds, so the file's time is compared at that precision. */
function toWholeSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000) * 1000;
}
