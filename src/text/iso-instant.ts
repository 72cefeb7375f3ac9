/**
 * ISO 8601 instants as operators write them in index cells (`AvailableFrom`, `AvailableUntil`) and
 * on the clients command line (`--valid-from`, `--valid-until`): a date (`2026-12-01`, midnight
 * UTC) or a date-time (`2026-12-01T21:00`, `...:30`, `...:30.250`) in UTC, written with `Z`, with
 * an explicit offset (`-03:00`), or with no zone at all (then UTC). Anything else is refused with a
 * message saying what was expected, never guessed: a date read wrong would open or close access.
 */

/** Longer input is refused before any matching, so that parsing stays linear and cheap. */
const MAX_LENGTH = 40;

// Anchored, no nested or overlapping quantifiers: linear in the input's length.
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?$/;

export class InvalidInstant extends Error {
  constructor(text: string) {
    const shown = text.length > MAX_LENGTH ? `${text.slice(0, MAX_LENGTH)}...` : text;
    super(`"${shown}" is not an ISO 8601 date or date-time (e.g. 2026-12-01 or 2026-12-01T21:00:00Z)`);
    this.name = 'InvalidInstant';
  }
}

/** The instant `text` names. Throws `InvalidInstant`. */
export function parseIsoInstant(text: string): Date {
  const trimmed = text.trim();
  const match = trimmed.length <= MAX_LENGTH ? INSTANT.exec(trimmed) : null;
  if (match === null) throw new InvalidInstant(text);
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', zone = 'Z'] = match;
  const [y, mo, d, h, mi, s] = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || s > 59) throw new InvalidInstant(text);
  const offsetMinutes = zone === 'Z' ? 0 : offsetOf(zone, text);
  const milliseconds = Number(fraction.padEnd(3, '0').slice(0, 3));
  // setUTCFullYear, not Date.UTC, which would read years 0-99 as 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, milliseconds);
  return new Date(date.getTime() - offsetMinutes * 60_000);
}

function offsetOf(zone: string, text: string): number {
  const hours = Number(zone.slice(1, 3));
  const minutes = Number(zone.slice(4, 6));
  if (hours > 23 || minutes > 59) throw new InvalidInstant(text);
  return (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

function daysIn(year: number, month: number): number {
  return month === 2 && isLeap(year) ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}
