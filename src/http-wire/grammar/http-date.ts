import { trimOptionalWhitespace } from './optional-whitespace.js';

/**
 * HTTP dates (RFC 9110 section 5.6.7). Recipients must accept all three formats; HTTP-date is
 * case-sensitive. Stricter than `new Date(string)`, which accepts almost anything (`"1"` is a date
 * to it) and reads asctime dates in local time.
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
// Anchored, fixed-shape patterns without nested or adjacent overlapping quantifiers: a match attempt
// is linear in the input, and the input is bounded below before any pattern runs.
const IMF_FIXDATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`,
);
const ASCTIME_DATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

/** The longest valid HTTP-date ("Wednesday, 09-Nov-94 08:49:37 GMT") has 33 characters. */
const MAX_DATE_LENGTH = 40;

/**
 * An HTTP-date, or `undefined` when `value` is not exactly one valid date. `referenceYear` (the
 * server's current year) places the two-digit years of obsolete RFC 850 dates.
 */
export function parseHttpDate(value: string, referenceYear: number): Date | undefined {
  const text = trimOptionalWhitespace(value);
  if (text.length > MAX_DATE_LENGTH) return undefined;
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
