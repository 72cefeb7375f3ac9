import pLimit from 'p-limit';
import type { BlobStore, BlobSummary } from '../../domain/ports.js';

export interface ExistenceCheckOptions {
  /** Storage calls in flight at once. */
  readonly concurrency: number;
  /** A folder holding at least this many wanted files is listed (one call per few thousand blobs) instead of probed file by file. */
  readonly listThreshold: number;
}

/**
 * What the stores use: 16 calls in flight keep a few hundred files within a handful of round trips
 * without flooding storage; a folder with 8 or more wanted files is cheaper to list (one call per
 * 5000 blobs) than to probe.
 */
export const EXISTENCE_CHECK: ExistenceCheckOptions = { concurrency: 16, listThreshold: 8 };

/**
 * Which of `paths` exist in `store`, with their sizes. Folders with many wanted files are listed by
 * prefix; the rest are probed with property reads; all calls share one concurrency bound, so a
 * catalog of hundreds of files costs a handful of round trips' worth of time, not hundreds.
 */
export async function findExistingBlobs(
  store: Pick<BlobStore, 'getProperties' | 'list'>,
  paths: readonly string[],
  options: ExistenceCheckOptions,
): Promise<Map<string, BlobSummary>> {
  const limit = pLimit(options.concurrency);
  const found = new Map<string, BlobSummary>();
  const tasks: Promise<void>[] = [];

  for (const [folder, wanted] of groupByFolder(paths)) {
    if (folder !== '' && wanted.size >= options.listThreshold) {
      tasks.push(
        limit(async () => {
          for await (const blob of store.list(`${folder}/`)) {
            if (wanted.has(blob.path)) found.set(blob.path, blob);
          }
        }),
      );
      continue;
    }
    for (const path of wanted) {
      tasks.push(
        limit(async () => {
          const properties = await store.getProperties(path);
          if (properties !== undefined) found.set(path, properties);
        }),
      );
    }
  }
  await Promise.all(tasks);
  return found;
}

function groupByFolder(paths: readonly string[]): Map<string, Set<string>> {
  const folders = new Map<string, Set<string>>();
  for (const path of paths) {
    const slash = path.lastIndexOf('/');
    const folder = slash === -1 ? '' : path.slice(0, slash);
    let wanted = folders.get(folder);
    if (wanted === undefined) {
      wanted = new Set();
      folders.set(folder, wanted);
    }
    wanted.add(path);
  }
  return folders;
}
