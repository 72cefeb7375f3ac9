/**
 * What subscribers are told is new: a file entering, changing in or leaving a client's view
 * (stored, listed in its index, inside its release window). The scanner finds these changes, the
 * change log keeps them in one order for the fleet, and the feed and webhooks hand them out.
 */

/** The kinds of change, as the feed and webhooks name them. */
export const FILE_CHANGE_TYPES = ['file.released', 'file.updated', 'file.withdrawn'] as const;
export type FileChangeType = (typeof FILE_CHANGE_TYPES)[number];

/** The file a change is about, as the client's entitlement sees it when the change was found. */
export interface ChangedFile {
  readonly symbol: string;
  /** Storage path. */
  readonly fileName: string;
  readonly size: number;
  /** Strong entity tag with its quotes, as `/list` gives it. */
  readonly etag: string;
  /** When storage last wrote the file. */
  readonly uploaded: Date;
  /** SHA-256 of the content as 64 lowercase hex digits, once computed. */
  readonly sha256?: string;
}

/** One change of one client's view, before the log gives it a position. */
export interface FileChange {
  readonly clientId: string;
  readonly type: FileChangeType;
  /** When the change was found. */
  readonly time: Date;
  readonly file: ChangedFile;
}

/** A change the log keeps: a position in the fleet-wide order and an id that never changes. */
export interface LoggedChange extends FileChange {
  /** Unique and stable (the feed's `id`, the webhook's `webhook-id` on every retry). */
  readonly id: string;
  /** Increasing across the fleet's whole log: every instance reads the same order. */
  readonly position: number;
}

/** The id of the change at `position`: stable, the same on every instance and in every adapter. */
export function changeId(position: number): string {
  return `chg_${position.toString().padStart(12, '0')}`;
}

/** What the feed and webhooks say of a changed file, as JSON: the same fields, by the same names, everywhere. */
export function changedFileFields(file: ChangedFile): Record<string, string | number> {
  return {
    symbol: file.symbol,
    fileName: file.fileName,
    size: file.size,
    etag: file.etag,
    uploaded: file.uploaded.toISOString(),
    ...(file.sha256 !== undefined && { sha256: file.sha256 }),
  };
}

/**
 * How soon something kept without the change log's position it should have (the log could not be
 * read when it was checked: a catalog, which files exist) is checked again, the position with it.
 */
export const CHANGES_POSITION_RETRY_MS = 1000;
