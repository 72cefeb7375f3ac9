import { InvalidPath } from '../../domain/errors.js';
import { validateStoragePath } from '../../domain/storage-path.js';

/**
 * Returns `prefix` when it is a safe listing prefix: `''`, or the start of some path that
 * `validateStoragePath` accepts, so its last segment may be partial (`funds/`, `funds/cv`, `..`
 * for `..hidden`). Throws `InvalidPath` otherwise (`../`, `a//`, `/`, a backslash, a `%`, ...).
 */
export function validateStoragePrefix(prefix: string): string {
  if (prefix === '') return prefix;
  try {
    // One more ordinary character completes the partial last segment into a name: if even that
    // is not a valid path, no path starts with the prefix.
    validateStoragePath(`${prefix}x`);
  } catch (error) {
    if (error instanceof InvalidPath) throw new InvalidPath(`The listing prefix is invalid: ${error.message}`);
    throw error;
  }
  return prefix;
}
