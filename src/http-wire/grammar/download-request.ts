import type { DownloadRequest, IfRangeCondition } from '../../domain/download-policy.js';
import { parseEntityTag, parseEntityTagCondition } from './entity-tags.js';
import { parseHttpDate } from './http-date.js';
import { trimOptionalWhitespace } from './optional-whitespace.js';
import { parseRangeHeader } from './range-header.js';

/**
 * The longest conditional or `Range` header value the gateway reads: about 100 entity tags or 100
 * ranges. A longer value is refused with 431 (RFC 6585 section 5) instead of being parsed.
 */
export const MAX_CONDITIONAL_HEADER_LENGTH = 8192;

/** A header too long to be read: each door answers it as its protocol does (431, S3's RequestHeaderSectionTooLarge). */
export class HeaderTooLarge extends Error {
  readonly code = 'headers_too_large';

  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The headers a download reads, by lower-case name. */
export type HeaderLookup = (name: string) => string | undefined;

/**
 * Turns a download's method and headers into the parsed `DownloadRequest` the domain decides on.
 * `now` places the two-digit years of obsolete RFC 850 dates. Blank headers count as absent;
 * invalid dates and invalid `Range` values are left out, as RFC 9110 says to ignore them.
 */
export function parseDownloadRequest(method: string, header: HeaderLookup, now: Date): DownloadRequest {
  const value = (name: string): string | undefined => {
    const raw = header(name);
    if (raw === undefined) return undefined;
    if (raw.length > MAX_CONDITIONAL_HEADER_LENGTH) {
      throw new HeaderTooLarge(`The ${name} header is longer than ${MAX_CONDITIONAL_HEADER_LENGTH} characters`);
    }
    return trimOptionalWhitespace(raw) === '' ? undefined : raw;
  };
  const year = now.getUTCFullYear();
  const date = (name: string): Date | undefined => {
    const raw = value(name);
    return raw === undefined ? undefined : parseHttpDate(raw, year);
  };
  const ifMatch = value('if-match');
  const ifNoneMatch = value('if-none-match');
  const range = value('range');
  const ifRange = value('if-range');
  const conditions = {
    ifMatch: ifMatch === undefined ? undefined : parseEntityTagCondition(ifMatch),
    ifNoneMatch: ifNoneMatch === undefined ? undefined : parseEntityTagCondition(ifNoneMatch),
    ifModifiedSince: date('if-modified-since'),
    ifUnmodifiedSince: date('if-unmodified-since'),
    range: range === undefined ? undefined : parseRangeHeader(range),
    ifRange: ifRange === undefined ? undefined : parseIfRange(ifRange, year),
  };
  return {
    method: method === 'HEAD' ? 'HEAD' : 'GET',
    ...definedOnly(conditions),
  };
}

/** The properties whose value is not `undefined` (the domain reads absent as "header absent"). */
function definedOnly<T extends object>(values: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

/** RFC 9110 section 13.1.5: `If-Range = entity-tag / HTTP-date`. */
function parseIfRange(value: string, referenceYear: number): IfRangeCondition {
  const tag = parseEntityTag(value);
  if (tag !== undefined) return { kind: 'tag', tag };
  const date = parseHttpDate(value, referenceYear);
  return date === undefined ? { kind: 'malformed' } : { kind: 'date', date };
}
