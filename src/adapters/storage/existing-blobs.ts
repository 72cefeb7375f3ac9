import pLimit from 'p-limit';
import type { BlobStore, BlobSummary } from '../../domain/ports.js';

export interface ExistenceCheckOptions {
  /** Storage calls in flight at once. */
  readonly concurrency: number;
  /** A folder holding at least this many wanted files is listed (one call per few thousand blobs) instead of probed file by file. */
  readonly listThreshold: number;
  /** Blobs one listing call returns at most (Azure's List Blobs: up to 5000 per page). */
  readonly blobsPerListCall: number;
  /**
   * Blobs a folder's listing may read per wanted file before the rest are probed: a listing is worth
   * it where at least one blob in this many is wanted, and reads at most this many blobs' worth of
   * bytes (about 600 bytes of XML each on Azure) per wanted file.
   */
  readonly blobsListedPerWantedFile: number;
}

/** What `findExistingBlobs` needs of a store: property reads, and listings in pages of a size it picks. */
export interface ListingStore {
  getProperties: BlobStore['getProperties'];
  /** Blobs under `prefix`, read in pages of at most `pageSize` (the store's own size when absent). */
  list(prefix: string, pageSize?: number): AsyncIterable<BlobSummary>;
}

/**
 * What the stores use: 16 calls in flight keep a few hundred files within a handful of round trips
 * without flooding storage; a folder with 8 or more wanted files may be cheaper to list (one call
 * per 5000 blobs) than to probe.
 */
export const EXISTENCE_CHECK: ExistenceCheckOptions = { concurrency: 16, listThreshold: 8, blobsPerListCall: 5000, blobsListedPerWantedFile: 4 };

/**
 * Which of `paths` exist in `store`, with their sizes. Folders with many wanted files are listed by
 * prefix; the rest are probed with property reads; all calls share one concurrency bound, so a
 * catalog of hundreds of files costs a handful of round trips' worth of time, not hundreds.
 *
 * The cost follows the catalog, not the container, in calls and in bytes: a folder's listing is
 * narrowed to the longest prefix its wanted names share, read in pages no bigger than its budget,
 * and stops once it has read `blobsListedPerWantedFile` blobs per wanted file (a few wanted files
 * among hundreds of thousands of blobs: one small page); the files it did not reach are then
 * probed. A folder therefore costs at most one page more than probing it, and exactly its listing
 * when its wanted files are dense in it (the daily files of a market).
 */
export async function findExistingBlobs(
  store: ListingStore,
  paths: readonly string[],
  options: ExistenceCheckOptions,
): Promise<Map<string, BlobSummary>> {
  const limit = pLimit(options.concurrency);
  const found = new Map<string, BlobSummary>();
  const tasks: Promise<void>[] = [];

  for (const [folder, wanted] of groupByFolder(paths)) {
    const probe = (path: string): Promise<void> =>
      limit(async () => {
        const properties = await store.getProperties(path);
        if (properties !== undefined) found.set(path, properties);
      });
    if (folder !== '' && wanted.size >= options.listThreshold) {
      tasks.push(
        limit(async () => {
          const budget = wanted.size * options.blobsListedPerWantedFile;
          let seen = 0;
          let complete = true;
          for await (const blob of store.list(sharedPrefix(wanted), Math.min(options.blobsPerListCall, budget))) {
            if (wanted.has(blob.path)) found.set(blob.path, blob);
            seen += 1;
            if (seen >= budget) {
              complete = false;
              break;
            }
          }
          return complete ? [] : [...wanted].filter((path) => !found.has(path));
        }).then((unreached) => Promise.all(unreached.map(probe))).then(() => undefined),
      );
      continue;
    }
    for (const path of wanted) tasks.push(probe(path));
  }
  await Promise.all(tasks);
  return found;
}

/** The longest prefix all of `paths` share (they share at least their folder and its slash). */
function sharedPrefix(paths: ReadonlySet<string>): string {
  let prefix: string | undefined;
  for (const path of paths) {
    if (prefix === undefined) {
      prefix = path;
      continue;
    }
    let length = 0;
    const most = Math.min(prefix.length, path.length);
    while (length < most && prefix.charCodeAt(length) === path.charCodeAt(length)) length += 1;
    prefix = prefix.slice(0, length);
  }
  return prefix ?? '';
}

/** `paths` by folder (the part before the last `/`, `''` at the top), each path once. */
export function groupByFolder(paths: readonly string[]): Map<string, Set<string>> {
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
