/**
 * RFC 9110 section 5.6.3: optional whitespace (OWS) is spaces and horizontal tabs.
 *
 * Written as index scans rather than regular expressions: `/[ \t]+$/` is tried at every position of
 * a long run of inner spaces, which makes it quadratic, and header values come from the client.
 */
function isOptionalWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

/** The index of the first character at or after `from` that is not OWS (`value.length` if none). */
export function skipOptionalWhitespace(value: string, from: number): number {
  let index = from;
  while (index < value.length && isOptionalWhitespace(value.charCodeAt(index))) index += 1;
  return index;
}

/** `value` without OWS at either end, in time linear in its length. */
export function trimOptionalWhitespace(value: string): string {
  const start = skipOptionalWhitespace(value, 0);
  let end = value.length;
  while (end > start && isOptionalWhitespace(value.charCodeAt(end - 1))) end -= 1;
  return value.slice(start, end);
}
