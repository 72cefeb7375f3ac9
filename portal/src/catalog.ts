/**
 * The portal's view of a subscriber's files: what `/list` answered (each file with its storage
 * path), filtered, sorted and grouped into folders for the table, or shown flat. Pure functions of
 * their inputs (no DOM, no fetch), so that the gateway's test suite runs them as they are.
 */

/** A file's release window (ISO 8601 UTC), as far as the index gives one: either end may be open. */
export interface ReleaseWindow {
  readonly from?: string;
  readonly until?: string;
}

/** The window fields of a `/list` item or an `/info` answer (openapi.yaml `ListedFile`, `FileInfo`): each only where the index has that bound. */
export interface WindowFields {
  readonly availableFrom?: string;
  readonly availableUntil?: string;
}

export interface PortalFile {
  readonly symbol: string;
  readonly description: string;
  /** The storage path (the index's `FileName`). */
  readonly path: string;
  readonly size: number;
  /** ISO 8601. */
  readonly uploaded: string;
  readonly etag: string;
  readonly md5: string | undefined;
  /** Absent for a file without a release window (the column stays empty). */
  readonly window: ReleaseWindow | undefined;
  /** Symbol, description and path in lower case: what search looks in. */
  readonly haystack: string;
}

/** One `GET /list` answer (a page, once cursors exist), as far as the portal reads it. */
export interface ListAnswer {
  readonly files: readonly ListedItem[];
  readonly count: number;
  readonly truncated: boolean;
  /** Where the next page starts, while there is one. */
  readonly nextCursor?: string;
}

/** One file of a `/list` answer (openapi.yaml `ListedFile`), as far as the portal reads it. */
export interface ListedItem extends WindowFields {
  readonly symbol: string;
  readonly description: string;
  /** The storage path (the index's `FileName`). */
  readonly fileName: string;
  readonly size: number;
  readonly uploaded: string;
  readonly etag: string;
  readonly md5?: string;
}

/** The listed files as the table shows them. */
export function portalFilesOf(listed: readonly ListedItem[]): PortalFile[] {
  return listed.map((item) => ({
    symbol: item.symbol,
    description: item.description,
    path: item.fileName,
    size: item.size,
    uploaded: item.uploaded,
    etag: item.etag,
    md5: item.md5,
    window: releaseWindowOf(item),
    haystack: `${item.symbol}\n${item.description}\n${item.fileName}`.toLowerCase(),
  }));
}

export interface CatalogTotals {
  readonly files: number;
  readonly bytes: number;
}

/** How many files there are and their bytes in all: the top of the files view. */
export function catalogTotals(files: readonly PortalFile[]): CatalogTotals {
  return { files: files.length, bytes: files.reduce((sum, file) => sum + file.size, 0) };
}

/** The window `/list` or `/info` sends, or `undefined` for a file without one. */
export function releaseWindowOf(fields: WindowFields): ReleaseWindow | undefined {
  const { availableFrom: from, availableUntil: until } = fields;
  if (from === undefined && until === undefined) return undefined;
  return { ...(from !== undefined && { from }), ...(until !== undefined && { until }) };
}

export type SortKey = 'name' | 'description' | 'path' | 'size' | 'uploaded' | 'window';

export interface SortOrder {
  readonly key: SortKey;
  readonly descending: boolean;
}

export interface FolderRow {
  readonly kind: 'folder';
  /** The folder's own name (one segment). */
  readonly name: string;
  /** Its full prefix, ending in `/`. */
  readonly prefix: string;
  readonly files: number;
  readonly size: number;
}

export interface FileRow {
  readonly kind: 'file';
  readonly file: PortalFile;
}

export type TableRow = FolderRow | FileRow;

export interface TableView {
  /** The folder shown: `''` for the top, otherwise a prefix ending in `/`. */
  readonly folder: string;
  readonly query: string;
  readonly sort: SortOrder;
  /** Every file under the folder, in no subfolders (the flat view). */
  readonly flat: boolean;
}

/**
 * The rows of the table: by folder with no search, the folder's subfolders and its own files; flat
 * or with a search, every file under the folder (whose symbol, description or path contains the
 * search, in any case). Folders come first, then files in the sort order.
 */
export function tableRows(files: readonly PortalFile[], view: TableView): TableRow[] {
  const query = view.query.trim().toLowerCase();
  const folders = new Map<string, { files: number; size: number }>();
  const shown: PortalFile[] = [];
  for (const file of files) {
    if (!file.path.startsWith(view.folder)) continue;
    if (query !== '' || view.flat) {
      if (file.haystack.includes(query)) shown.push(file);
      continue;
    }
    const rest = file.path.slice(view.folder.length);
    const slash = rest.indexOf('/');
    if (slash === -1) {
      shown.push(file);
      continue;
    }
    const name = rest.slice(0, slash);
    const folder = folders.get(name) ?? { files: 0, size: 0 };
    folder.files += 1;
    folder.size += file.size;
    folders.set(name, folder);
  }
  const direction = view.sort.descending ? -1 : 1;
  const fileKey = sortKeyOf(view.sort.key);
  shown.sort((a, b) => direction * compare(fileKey(a), fileKey(b)) || compare(a.symbol, b.symbol));
  const folderRows: FolderRow[] = [...folders].map(([name, folder]) => ({ kind: 'folder', name, prefix: `${view.folder}${name}/`, ...folder }));
  folderRows.sort((a, b) => (view.sort.key === 'size' ? direction * (a.size - b.size) : 0) || direction * compare(a.name, b.name));
  return [...folderRows, ...shown.map((file): FileRow => ({ kind: 'file', file }))];
}

function sortKeyOf(key: SortKey): (file: PortalFile) => string | number {
  switch (key) {
    case 'name':
      return (file) => file.symbol;
    case 'description':
      return (file) => file.description.toLowerCase();
    case 'path':
      return (file) => file.path;
    case 'size':
      return (file) => file.size;
    case 'uploaded':
      return (file) => file.uploaded;
    case 'window':
      // By when the file was (or will be) released; a window open at the start, by when it closes.
      // Files without a window have the empty key: first going up, last going down.
      return (file) => file.window?.from ?? file.window?.until ?? '';
  }
}

/** Code-unit order, not the locale's: a sort of 100,000 rows stays fast and the same everywhere. */
function compare(a: string | number, b: string | number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The folders from the top down to `folder`, for the breadcrumb: `[{ name: 'rates', prefix: 'rates/' }, ...]`. */
export function breadcrumbOf(folder: string): { readonly name: string; readonly prefix: string }[] {
  const names = folder.split('/').filter((name) => name !== '');
  return names.map((name, index) => ({ name, prefix: `${names.slice(0, index + 1).join('/')}/` }));
}

/** `1.5 MiB`: binary units, as download managers show them. */
export function formatSize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** `2024-01-02 10:30 UTC`. */
export function formatTime(iso: string): string {
  const time = new Date(iso);
  return Number.isNaN(time.getTime()) ? iso : `${time.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** `from 2024-01-02 10:30 UTC until ...`, or `''` without a window. */
export function formatWindow(window: ReleaseWindow | undefined): string {
  if (window === undefined) return '';
  return [window.from === undefined ? '' : `from ${formatTime(window.from)}`, window.until === undefined ? '' : `until ${formatTime(window.until)}`]
    .filter((part) => part !== '')
    .join(' ');
}
