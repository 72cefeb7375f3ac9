import { InvalidPath } from '../../domain/errors.js';
import { validateStoragePath } from '../../domain/storage-path.js';

const ENCODED_SEPARATOR = /%(?:2f|5c)/i;

/**
 * Percent-decodes the part of a request path after the route's `/` exactly once (RFC 3986 section
 * 2.1, UTF-8) and returns it when the domain's `validateStoragePath` accepts it. Throws
 * `InvalidPath` for a malformed escape (`%zz`, `%e`, invalid UTF-8 such as the overlong `%c0%ae`)
 * and for an encoded `/` or `\` (`%2F`, `%5C`), which would otherwise become a separator that the
 * router never saw.
 */
export function decodeRequestPath(rawPathAfterSlash: string): string {
  if (ENCODED_SEPARATOR.test(rawPathAfterSlash)) {
    throw new InvalidPath('The request path contains an encoded "/" or "\\" (%2F or %5C)');
  }
  const decoded = percentDecode(rawPathAfterSlash);
  if (decoded === undefined) {
    throw new InvalidPath('The request path has a malformed percent-encoding or is not valid UTF-8');
  }
  return validateStoragePath(decoded);
}

/** `text` percent-decoded once as UTF-8, or `undefined` when an escape or the UTF-8 is malformed. */
export function percentDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** The first segment of a raw request path (`/a%20b/c` gives `a%20b`), still encoded. */
export function firstSegmentOf(rawPath: string): string {
  const slash = rawPath.indexOf('/', 1);
  return rawPath.slice(1, slash === -1 ? rawPath.length : slash);
}
