import type { BlobProperties, ByteRange } from './ports.js';

/** The parts of a download request that decide its outcome: the method and the raw header values. */
export interface DownloadRequest {
  readonly method: 'GET' | 'HEAD';
  readonly ifMatch?: string;
  readonly ifNoneMatch?: string;
  readonly ifModifiedSince?: string;
  readonly ifUnmodifiedSince?: string;
  readonly range?: string;
  readonly ifRange?: string;
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

/** The validators and size of the file a request is about. */
export type DownloadedFile = Pick<BlobProperties, 'etag' | 'lastModified' | 'size'>;

/**
 * Above this many ranges the `Range` header is ignored: RFC 9110 section 14.2 lets a server ignore
 * a range set that looks like a denial-of-service attempt.
 */
export const MAX_RANGES = 100;

const FULL: DownloadDecision = { kind: 'full' };

/**
 * Decides what a GET or HEAD of `file` gets, evaluating the preconditions in the order of RFC 9110
 * section 13.2.2: 412 first, then 304, then `Range`. `now` is the server's current time; without it
 * an `If-Modified-Since` date in the future is not detected (section 13.1.3).
 */
export function decideDownload(file: DownloadedFile, request: DownloadRequest, now?: Date): DownloadDecision {
  const context: EvaluationContext = {
    file,
    currentTag: parseEntityTag(file.etag),
    lastModified: toWholeSeconds(file.lastModified),
    referenceYear: (now ?? file.lastModified).getUTCFullYear(),
  };
  const failure = preconditionFailure(context, request);
  if (failure !== undefined) return { kind: 'preconditionFailed', reason: failure };
  if (isNotModified(context, request, now)) return { kind: 'notModified' };
  return decideRange(context, request);
}

/** `decideDownload` under the name the rest of the domain uses for this decision. */
export const DownloadPolicy = { decide: decideDownload } as const;

interface EvaluationContext {
  readonly file: DownloadedFile;
  /** `undefined` when storage gave an entity tag that does not parse: then no tag matches it. */
  readonly currentTag: EntityTag | undefined;
  /** Milliseconds since the epoch, truncated to whole seconds as HTTP dates are (section 5.6.7). */
  readonly lastModified: number;
  /** For the two-digit years of obsolete RFC 850 dates (section 5.6.7). */
  readonly referenceYear: number;
}

// ---------------------------------------------------------------------------------------------
// Preconditions (RFC 9110 section 13.2.2, steps 1 to 4)

/** Why the request's preconditions fail (steps 1 and 2, answered with 412), or `undefined`. */
function preconditionFailure(context: EvaluationContext, request: DownloadRequest): string | undefined {
  const ifMatch = presentValue(request.ifMatch);
  if (ifMatch !== undefined) {
    // Section 13.1.1: strong comparison; "*" matches any current representation, and the file exists.
    return listMatches(ifMatch, context.currentTag, matchesStrongly)
      ? undefined
      : 'If-Match does not match the current entity tag';
  }
  // Section 13.1.4: If-Unmodified-Since is ignored when If-Match is present, or when it is not a date.
  const ifUnmodifiedSince = parseHttpDate(presentValue(request.ifUnmodifiedSince), context.referenceYear);
  if (ifUnmodifiedSince !== undefined && context.lastModified > ifUnmodifiedSince.getTime()) {
    return 'The file was modified after the If-Unmodified-Since date';
  }
  return undefined;
}

/** Whether a GET or HEAD gets 304 (steps 3 and 4). */
function isNotModified(context: EvaluationContext, request: DownloadRequest, now: Date | undefined): boolean {
  const ifNoneMatch = presentValue(request.ifNoneMatch);
  if (ifNoneMatch !== undefined) {
    // Section 13.1.2: weak comparison, because a cache may hold any version equivalent to this one.
    return listMatches(ifNoneMatch, context.currentTag, matchesWeakly);
  }
  // Section 13.1.3: If-Modified-Since is ignored when If-None-Match is present, when it is not a
  // date, and when the date is later than the server's current time.
  const ifModifiedSince = parseHttpDate(presentValue(request.ifModifiedSince), context.referenceYear);
  if (ifModifiedSince === undefined) return false;
  if (now !== undefined && ifModifiedSince.getTime() > now.getTime()) return false;
  return context.lastModified <= ifModifiedSince.getTime();
}

/** A header value, or `undefined` when the header is absent or blank (which we treat as absent). */
function presentValue(value: string | undefined): string | undefined {
  return value === undefined || trimOptionalWhitespace(value) === '' ? undefined : value;
}

// ---------------------------------------------------------------------------------------------
// Range (RFC 9110 section 13.2.2 step 5, sections 13.1.5 and 14)

function decideRange(context: EvaluationContext, request: DownloadRequest): DownloadDecision {
  // Section 14.2: Range is defined for GET only; a HEAD answers as its GET without Range would.
  const range = presentValue(request.range);
  if (request.method !== 'GET' || range === undefined) return FULL;
  // Section 13.1.5: when If-Range does not hold, the client's cached part is stale: send it all.
  const ifRange = presentValue(request.ifRange);
  if (ifRange !== undefined && !ifRangeHolds(context, ifRange)) return FULL;
  // Section 14.2: a server MAY ignore a Range it cannot parse or that it deems abusive.
  const specs = parseRangeSet(range);
  if (specs === undefined) return FULL;
  const satisfiable = specs.flatMap((spec) => resolveRangeSpec(spec, context.file.size) ?? []);
  if (satisfiable.length === 0) return { kind: 'rangeNotSatisfiable', size: context.file.size };
  return { kind: 'partial', range: coveringRange(satisfiable) };
}

/**
 * Section 13.1.5: an entity tag must match strongly (a weak tag never does); a date must equal the
 * last modification date exactly. Anything else does not hold.
 */
function ifRangeHolds(context: EvaluationContext, ifRange: string): boolean {
  const tag = parseEntityTag(ifRange);
  if (tag !== undefined) return context.currentTag !== undefined && matchesStrongly(tag, context.currentTag);
  const date = parseHttpDate(ifRange, context.referenceYear);
  return date !== undefined && date.getTime() === context.lastModified;
}

/** One `range-spec` of the `bytes` unit (section 14.1.1), not yet checked against the file's size. */
type RangeSpec =
  | { readonly kind: 'int'; readonly first: number; readonly last?: number }
  | { readonly kind: 'suffix'; readonly length: number };

const INT_RANGE = /^(\d+)-(\d*)$/;
const SUFFIX_RANGE = /^-(\d+)$/;

/**
 * The range specs of a `Range` value, or `undefined` when it is to be ignored: another unit than
 * `bytes`, invalid syntax, or more than `MAX_RANGES` ranges.
 *
 * Written here rather than with `range-parser`, which differs from the rules this service follows:
 * it reports `last < first` as unsatisfiable (416) where section 14.1.1 calls it invalid (ignored),
 * and silently drops such a spec from a list; it drops a suffix longer than the file where section
 * 14.1.3 says it selects the whole file; it neither checks the unit nor limits the number of ranges;
 * and its `combine` keeps disjoint ranges apart where we need one covering range.
 */
function parseRangeSet(value: string): RangeSpec[] | undefined {
  const equals = value.indexOf('=');
  if (equals === -1) return undefined;
  // Section 14.1: range unit names are case-insensitive.
  if (value.slice(0, equals).toLowerCase() !== 'bytes') return undefined;
  // Section 5.6.1: list elements are separated by commas with optional whitespace; empty elements
  // are ignored; the range set needs at least one (section 14.1.1, "1#range-spec").
  const elements = value
    .slice(equals + 1)
    .split(',')
    .map(trimOptionalWhitespace)
    .filter((element) => element !== '');
  if (elements.length === 0 || elements.length > MAX_RANGES) return undefined;
  const specs: RangeSpec[] = [];
  for (const element of elements) {
    const spec = parseRangeSpec(element);
    if (spec === undefined) return undefined;
    specs.push(spec);
  }
  return specs;
}

function parseRangeSpec(element: string): RangeSpec | undefined {
  const suffix = SUFFIX_RANGE.exec(element);
  if (suffix !== null) return { kind: 'suffix', length: Number(suffix[1]) };
  const int = INT_RANGE.exec(element);
  if (int === null) return undefined;
  const [, first = '', last = ''] = int;
  if (last === '') return { kind: 'int', first: Number(first) };
  // Section 14.1.1: "invalid if the last-pos value is present and less than the first-pos".
  // Compared as BigInt so that digits beyond Number's precision cannot hide it.
  if (BigInt(last) < BigInt(first)) return undefined;
  return { kind: 'int', first: Number(first), last: Number(last) };
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
  return {
    start: Math.min(...ranges.map((range) => range.start)),
    end: Math.max(...ranges.map((range) => range.end)),
  };
}

// ---------------------------------------------------------------------------------------------
// Entity tags (RFC 9110 section 8.8.3)

interface EntityTag {
  readonly weak: boolean;
  /** The quoted part, quotes included. */
  readonly opaque: string;
}

// entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE; etagc = %x21 / %x23-7E / obs-text. "W/" is case-sensitive.
const ENTITY_TAG_SOURCE = '(W/)?("[\\x21\\x23-\\x7E\\x80-\\xFF]*")';
const ENTITY_TAG = new RegExp(`^${ENTITY_TAG_SOURCE}$`);
const LEADING_ENTITY_TAG = new RegExp(`^${ENTITY_TAG_SOURCE}`);

/** One entity tag, surrounding whitespace allowed, or `undefined` when `value` is not one. */
function parseEntityTag(value: string): EntityTag | undefined {
  const match = ENTITY_TAG.exec(trimOptionalWhitespace(value));
  return match === null ? undefined : { weak: match[1] !== undefined, opaque: match[2] ?? '' };
}

/**
 * The value of `If-Match` or `If-None-Match`: `"*"` or a comma-separated list of entity tags
 * (sections 13.1.1 and 13.1.2), or `undefined` when malformed. A tag may itself contain commas, so
 * the list is scanned tag by tag rather than split.
 */
function parseEntityTagList(value: string): '*' | EntityTag[] | undefined {
  if (trimOptionalWhitespace(value) === '*') return '*';
  const tags: EntityTag[] = [];
  let rest = value;
  for (;;) {
    rest = rest.replace(/^[ \t,]+/, '');
    if (rest === '') return tags;
    const match = LEADING_ENTITY_TAG.exec(rest);
    if (match === null) return undefined;
    tags.push({ weak: match[1] !== undefined, opaque: match[2] ?? '' });
    rest = trimOptionalWhitespace(rest.slice(match[0].length));
    if (rest !== '' && !rest.startsWith(',')) return undefined;
  }
}

/**
 * Whether an `If-Match` or `If-None-Match` value matches the current tag. A malformed value matches
 * nothing: `If-Match` then fails (412) and `If-None-Match` lets the request through; neither can
 * serve a version the client did not ask for.
 */
function listMatches(
  value: string,
  current: EntityTag | undefined,
  matches: (listed: EntityTag, current: EntityTag) => boolean,
): boolean {
  const list = parseEntityTagList(value);
  if (list === '*') return true;
  if (list === undefined || current === undefined) return false;
  return list.some((listed) => matches(listed, current));
}

/** Section 8.8.3.2: both tags strong and their opaque parts identical. */
function matchesStrongly(a: EntityTag, b: EntityTag): boolean {
  return !a.weak && !b.weak && a.opaque === b.opaque;
}

/** Section 8.8.3.2: opaque parts identical, whether or not either is weak. */
function matchesWeakly(a: EntityTag, b: EntityTag): boolean {
  return a.opaque === b.opaque;
}

// ---------------------------------------------------------------------------------------------
// Dates (RFC 9110 section 5.6.7)

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
// Section 5.6.7: recipients must accept all three formats; HTTP-date is case-sensitive.
const IMF_FIXDATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`,
);
const ASCTIME_DATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

/**
 * An HTTP-date, or `undefined` when `value` is absent or not exactly one valid date. Stricter than
 * `new Date(string)`, which accepts almost anything (`"1"` is a date to it) and reads asctime dates
 * in local time. `referenceYear` places the two-digit years of RFC 850 dates.
 */
function parseHttpDate(value: string | undefined, referenceYear: number): Date | undefined {
  if (value === undefined) return undefined;
  const text = trimOptionalWhitespace(value);
  let match = IMF_FIXDATE.exec(text);
  if (match !== null) {
    const [, day, month, year, hour, minute, second] = match;
    return utcDate(Number(year), month, Number(day), Number(hour), Number(minute), Number(second));
  }
  match = RFC850_DATE.exec(text);
  if (match !== null) {
    const [, day, month, year, hour, minute, second] = match;
    const fullYear = expandTwoDigitYear(Number(year), referenceYear);
    return utcDate(fullYear, month, Number(day), Number(hour), Number(minute), Number(second));
  }
  match = ASCTIME_DATE.exec(text);
  if (match !== null) {
    const [, month, day, hour, minute, second, year] = match;
    return utcDate(Number(year), month, Number(day), Number(hour), Number(minute), Number(second));
  }
  return undefined;
}

/** Section 5.6.7: a two-digit year more than 50 years ahead is the most recent past one instead. */
function expandTwoDigitYear(twoDigits: number, referenceYear: number): number {
  const year = referenceYear - (referenceYear % 100) + twoDigits;
  return year > referenceYear + 50 ? year - 100 : year;
}

function utcDate(
  year: number,
  monthName: string | undefined,
  day: number,
  hour: number,
  minute: number,
  second: number,
): Date | undefined {
  const month = MONTHS.indexOf(monthName ?? '');
  // Second 60 is a leap second (section 5.6.7); Date folds it into the next minute.
  if (month === -1 || hour > 23 || minute > 59 || second > 60) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  // Refuse dates that do not exist, such as 31 Feb, which Date would roll into March.
  if (date.getUTCMonth() !== month || date.getUTCDate() !== day) return undefined;
  date.setUTCHours(hour, minute, second, 0);
  return date;
}

function toWholeSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000) * 1000;
}

/** Removes OWS (section 5.6.3: spaces and tabs only) from both ends. */
function trimOptionalWhitespace(value: string): string {
  return value.replace(/^[ \t]+|[ \t]+$/g, '');
}
