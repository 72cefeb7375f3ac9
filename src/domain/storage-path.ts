import { InvalidPath } from './errors.js';

/** Azure's limit on a blob name, counted in UTF-16 code units like the storage adapters do. */
export const MAX_STORAGE_PATH_LENGTH = 1024;
/** The longest segment (the part between two `/`) a path may have. */
export const MAX_SEGMENT_LENGTH = 255;
/** Azure's limit on the number of segments of a blob name. */
export const MAX_SEGMENTS = 254;

const CONTROL_CHARACTER = /\p{Cc}/u;
// With the `u` flag a well-formed surrogate pair is one code point, so only a lone half matches.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The one rule of what a safe storage path is, applied alike to request paths (once decoded), index
 * rows and the index paths the clients CLI registers.
 *
 * Returns `raw`, a decoded storage path without a leading slash (`funds/cvm/inf diario.csv`), when
 * it cannot leave its container or folder nor mean different things to different readers. Throws
 * `InvalidPath`, saying what is wrong, when it is empty or too long, has a leading or trailing `/`,
 * an empty segment, a segment made only of dots and spaces (`.`, `..`, `...`, `.. `), a
 * backslash, a control character, a `%`, a lone surrogate or U+FFFD.
 */
export function validateStoragePath(raw: string): string {
  if (raw === '') throw new InvalidPath('The storage path is empty');
  if (raw.length > MAX_STORAGE_PATH_LENGTH) {
    throw new InvalidPath(`The storage path is longer than ${MAX_STORAGE_PATH_LENGTH} characters`);
  }
  // NUL truncates paths in C APIs and file systems; other controls (C0, DEL, C1) split log lines
  // and headers.
  const control = CONTROL_CHARACTER.exec(raw);
  if (control !== null) {
    throw new InvalidPath(`The storage path contains a control character (${codePoint(control[0])})`);
  }
  // A lone surrogate cannot be encoded in UTF-8 and U+FFFD is what a failed decode leaves behind:
  // either way two different requests could reach the same blob.
  if (LONE_SURROGATE.test(raw)) throw new InvalidPath('The storage path contains a lone UTF-16 surrogate');
  if (raw.includes('\uFFFD')) {
    throw new InvalidPath('The storage path contains U+FFFD, the mark of an invalid UTF-8 sequence');
  }
  // Windows and some file system APIs read a backslash as a separator, so `..\x` could climb out.
  if (raw.includes('\\')) throw new InvalidPath('The storage path contains a backslash');
  // The path has been percent-decoded once already. A `%` left in it is either a second encoded
  // layer (`%2e%2e` for `..`) or a literal percent sign, and a later reader cannot tell which:
  // refused, so that nothing is ever decoded twice.
  if (raw.includes('%')) {
    throw new InvalidPath('The storage path contains "%" after decoding (a doubly encoded path?)');
  }
  if (raw.startsWith('/')) throw new InvalidPath('The storage path starts with "/"');
  if (raw.endsWith('/')) throw new InvalidPath('The storage path ends with "/"');
  const segments = raw.split('/');
  if (segments.length > MAX_SEGMENTS) {
    throw new InvalidPath(`The storage path has more than ${MAX_SEGMENTS} segments`);
  }
  segments.forEach(checkSegment);
  return raw;
}

function checkSegment(segment: string, index: number): void {
  const position = index + 1;
  if (segment === '') throw new InvalidPath(`Segment ${position} of the storage path is empty ("//")`);
  if (segment.length > MAX_SEGMENT_LENGTH) {
    throw new InvalidPath(`Segment ${position} of the storage path is longer than ${MAX_SEGMENT_LENGTH} characters`);
  }
  // `.` and `..` move through directories wherever a path is resolved. Longer runs of dots and any
  // mix of dots and spaces are refused too: Windows trims trailing dots and spaces from names (so
  // `.. ` could become `..`, and `   ` nothing), and no data file needs such a name.
  if (/^[. ]+$/.test(segment)) {
    throw new InvalidPath(
      `Segment ${position} of the storage path is ${JSON.stringify(segment)}, made only of dots and spaces`,
    );
  }
}

function codePoint(character: string): string {
  return `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}
