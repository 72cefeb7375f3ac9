import { lstat, mkdir } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { GatewayClientError } from '../errors.js';

/** Suffixes the mirror keeps for itself beside the files it writes. */
export const PART_SUFFIX = '.part';
export const PART_STATE_SUFFIX = '.part.json';
export const MANIFEST_NAME = '.dfg-manifest.json';

// Windows reserves these device names in every folder, whatever the extension.
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$/i;

/**
 * A file or folder name that could be one of the mirror's own: a part or its state (a folder
 * `x.part` would stand where the part of `x` goes), the manifest or its temporary file. Compared
 * without case, as macOS and Windows file systems compare names.
 */
function isMirrorName(segment: string): boolean {
  const name = segment.toLowerCase();
  return name.startsWith(MANIFEST_NAME) || name.endsWith(PART_SUFFIX) || name.endsWith(PART_STATE_SUFFIX);
}

/**
 * Where the file at storage path `storagePath` goes inside `dir`. The path comes from the server,
 * so it is treated as hostile: absolute paths, drive letters, backslashes, empty, `.` or `..`
 * segments, control characters, and names the mirror uses itself are refused with `unsafe_path`,
 * and the result is checked to be inside `dir` once more after resolution.
 */
export function localPathFor(dir: string, storagePath: string): string {
  const refuse = (why: string): never => {
    throw new GatewayClientError('unsafe_path', `refusing storage path ${JSON.stringify(storagePath)}: ${why}`);
  };
  if (storagePath.length === 0 || storagePath.length > 1024) refuse('empty or over 1024 characters');
  if (storagePath.startsWith('/')) refuse('absolute');
  if (storagePath.includes('\\')) refuse('backslash');
  if (/[\u0000-\u001f\u007f]/.test(storagePath)) refuse('control character');
  if (/^[A-Za-z]:/.test(storagePath)) refuse('drive letter');
  const segments = storagePath.split('/');
  for (const segment of segments) {
    if (segment === '' || segment === '.' || segment === '..') refuse('empty, "." or ".." segment');
    if (segment.length > 255) refuse('segment over 255 characters');
    if (WINDOWS_DEVICE.test(segment) || segment.includes(':')) refuse('a name Windows reserves');
    if (isMirrorName(segment)) refuse('a name the mirror keeps for itself');
  }
  const root = resolve(dir);
  const target = resolve(join(root, ...segments));
  if (!target.startsWith(root + sep)) refuse('outside the target folder');
  return target;
}

/**
 * Makes sure every folder between `dir` and `target` (a path `localPathFor` gave) is a real folder
 * inside the mirror, never a symbolic link that would take a write or a delete somewhere else:
 * a link is refused with `unsafe_path`. Missing folders are created when `create` is set; without
 * it, resolves false when one is missing (there is nothing below it to touch).
 */
export async function checkFoldersInside(dir: string, target: string, create: boolean): Promise<boolean> {
  const root = resolve(dir);
  const parts = relative(root, dirname(target)).split(sep).filter((part) => part !== '');
  let folder = root;
  for (const part of parts) {
    folder = join(folder, part);
    let stats = await lstat(folder).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (stats === undefined) {
      if (!create) return false;
      await mkdir(folder).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      });
      stats = await lstat(folder);
    }
    if (stats.isSymbolicLink()) {
      throw new GatewayClientError('unsafe_path', `refusing ${relative(root, target)}: ${relative(root, folder)} is a symbolic link, and the mirror never writes through one`);
    }
    // A local failure (like a file where a folder should be), not a hostile path.
    if (!stats.isDirectory()) throw new Error(`cannot write ${relative(root, target)}: ${relative(root, folder)} is not a folder`);
  }
  return true;
}
