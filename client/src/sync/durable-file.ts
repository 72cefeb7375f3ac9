import { open, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Flushes a file (or a folder's entries) to disk. */
export async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } catch (error) {
    // Some platforms (Windows, a few network file systems) cannot fsync a folder; the rename stands.
    if ((error as NodeJS.ErrnoException).code !== 'EISDIR' && (error as NodeJS.ErrnoException).code !== 'EPERM' && (error as NodeJS.ErrnoException).code !== 'EINVAL') throw error;
  } finally {
    await handle.close();
  }
}

/**
 * Moves a finished file into place so that a reader (or a crash) sees the old file or the new
 * one, never part of it: the file's bytes are flushed, renamed over `to`, and the folder's entry flushed.
 */
export async function commitFile(from: string, to: string): Promise<void> {
  await fsyncPath(from);
  await rename(from, to);
  await fsyncPath(dirname(to));
}

/** Writes `text` to `path` atomically (temporary file, fsync, rename, fsync of the folder). */
export async function writeFileAtomically(path: string, text: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, text, { mode: 0o644 });
  await commitFile(temporary, path);
}
