import { join, resolve, sep } from 'node:path';
import { GatewayClientError } from '../errors.js';

/** Suffixes the mirror keeps for itself beside the files it writes. */
export const PART_SUFFIX = '.part';
export const PART_STATE_SUFFIX = '.part.json';
export const MANIFEST_NAME = '.dfg-manifest.json';

// Windows reserves these device names in every folder, whatever the extension.
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$/i;

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
  }
  const name = segments[segments.length - 1] ?? '';
  if (name === MANIFEST_NAME || name.endsWith(PART_SUFFIX) || name.endsWith(PART_STATE_SUFFIX)) refuse('a name the mirror keeps for itself');
  const root = resolve(dir);
  const target = resolve(join(root, ...segments));
  if (!target.startsWith(root + sep)) refuse('outside the target folder');
  return target;
}
