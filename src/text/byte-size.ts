/**
 * Byte counts as operators write them (`--monthly-bytes 500GiB`, `10 MiB`, `1048576`): a number,
 * optionally with a binary unit (`B`, `KiB`, `MiB`, `GiB`, `TiB`; IEC 80000-13). Decimal units
 * (`MB`, `GB`) are refused rather than guessed: a quota off by 7 % is a billing dispute.
 */

const UNITS: Readonly<Record<string, number>> = {
  B: 1,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
  TiB: 1024 ** 4,
};

const MAX_LENGTH = 32;
// Anchored, no overlapping quantifiers: linear in the input's length.
const SIZE = /^(\d{1,16})(?:\.(\d{1,12}))?\s?([A-Za-z]{1,3})?$/;

export class InvalidByteSize extends Error {
  constructor(text: string, reason = 'a whole number of bytes with an optional unit B, KiB, MiB, GiB or TiB (e.g. 500GiB)') {
    const shown = text.length > MAX_LENGTH ? `${text.slice(0, MAX_LENGTH)}...` : text;
    super(`"${shown}" is not ${reason}`);
    this.name = 'InvalidByteSize';
  }
}

/** The number of bytes `text` names. Throws `InvalidByteSize`. */
export function parseByteSize(text: string): number {
  const trimmed = text.trim();
  const match = trimmed.length <= MAX_LENGTH ? SIZE.exec(trimmed) : null;
  if (match === null) throw new InvalidByteSize(text);
  const [, whole = '', fraction = '', unit = 'B'] = match;
  const factor = UNITS[unit];
  if (factor === undefined || !Object.hasOwn(UNITS, unit)) throw new InvalidByteSize(text);
  // Exact arithmetic: 1.5GiB is 1610612736 bytes, 0.1KiB is no whole number of bytes.
  const scale = 10n ** BigInt(fraction.length);
  const scaled = (BigInt(whole) * scale + BigInt(fraction === '' ? '0' : fraction)) * BigInt(factor);
  if (scaled % scale !== 0n) throw new InvalidByteSize(text, 'a whole number of bytes');
  const bytes = scaled / scale;
  if (bytes > BigInt(Number.MAX_SAFE_INTEGER)) throw new InvalidByteSize(text, `at most ${Number.MAX_SAFE_INTEGER} bytes`);
  return Number(bytes);
}

/** `bytes` in the largest binary unit that keeps it readable, e.g. `9.5 GiB`; exact below 1 KiB. */
export function formatByteSize(bytes: number): string {
  const units = ['TiB', 'GiB', 'MiB', 'KiB'] as const;
  for (const unit of units) {
    const factor = UNITS[unit] ?? 1;
    if (bytes >= factor) return `${Number((bytes / factor).toFixed(2))} ${unit}`;
  }
  return `${bytes} B`;
}
