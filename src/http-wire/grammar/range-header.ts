import type { RangeSpec } from '../../domain/download-policy.js';
import { trimOptionalWhitespace } from './optional-whitespace.js';

/**
 * Above this many ranges the `Range` header is ignored: RFC 9110 section 14.2 lets a server ignore
 * a range set that looks like a denial-of-service attempt.
 */
export const MAX_RANGES = 100;

/**
 * The range specs of a `Range` value (RFC 9110 section 14.1), or `undefined` when it is to be
 * ignored: blank, another unit than `bytes`, invalid syntax, or more than `MAX_RANGES` ranges.
 * One pass over the value, so the time is linear in its length.
 *
 * Written here rather than with `range-parser`, which differs from the rules this service follows:
 * it reports `last < first` as unsatisfiable (416) where section 14.1.1 calls it invalid (ignored),
 * and silently drops such a spec from a list; it drops a suffix longer than the file where section
 * 14.1.3 says it selects the whole file; it neither checks the unit nor limits the number of ranges;
 * and its `combine` keeps disjoint ranges apart where we need one covering range.
 */
export function parseRangeHeader(value: string): RangeSpec[] | undefined {
  const equals = value.indexOf('=');
  if (equals === -1) return undefined;
  // Section 14.1: range unit names are case-insensitive; the grammar has no whitespace around "=".
  if (value.slice(0, equals).toLowerCase() !== 'bytes') return undefined;
  const specs: RangeSpec[] = [];
  // Section 5.6.1: list elements are separated by commas with optional whitespace; empty elements
  // are ignored; the range set needs at least one (section 14.1.1, "1#range-spec").
  let start = equals + 1;
  while (start <= value.length) {
    let end = value.indexOf(',', start);
    if (end === -1) end = value.length;
    const element = trimOptionalWhitespace(value.slice(start, end));
    if (element !== '') {
      if (specs.length === MAX_RANGES) return undefined;
      const spec = parseRangeSpec(element);
      if (spec === undefined) return undefined;
      specs.push(spec);
    }
    start = end + 1;
  }
  return specs.length === 0 ? undefined : specs;
}

/** `first-pos "-" [ last-pos ]` or `"-" suffix-length`, digits only, no inner whitespace. */
function parseRangeSpec(element: string): RangeSpec | undefined {
  const dash = element.indexOf('-');
  if (dash === -1) return undefined;
  const first = element.slice(0, dash);
  const last = element.slice(dash + 1);
  if (first === '') return isDigits(last) ? { kind: 'suffix', length: Number(last) } : undefined;
  if (!isDigits(first)) return undefined;
  if (last === '') return { kind: 'int', first: Number(first) };
  if (!isDigits(last)) return undefined;
  // Section 14.1.1: "invalid if the last-pos value is present and less than the first-pos".
  // Compared as digit strings, so that digits beyond Number's precision cannot hide it.
  if (compareDecimal(last, first) < 0) return undefined;
  return { kind: 'int', first: Number(first), last: Number(last) };
}

function isDigits(text: string): boolean {
  if (text === '') return false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x30 || code > 0x39) return false;
  }
  return true;
}

/** Compares two non-negative decimal integers given as digit strings, in linear time. */
function compareDecimal(a: string, b: string): number {
  const x = stripLeadingZeros(a);
  const y = stripLeadingZeros(b);
  if (x.length !== y.length) return x.length - y.length;
  return x < y ? -1 : x > y ? 1 : 0;
}

function stripLeadingZeros(digits: string): string {
  let index = 0;
  while (index < digits.length - 1 && digits[index] === '0') index += 1;
  return digits.slice(index);
}
