import type { FileChange } from '../../domain/changes.js';
import type { ScannedBlob, ScannedRow, ScanState } from '../../domain/ports.js';

/**
 * The scan state as one JSON document, the same for every store: compact arrays rather than
 * objects per blob and row (a blob costs its path and some 40 bytes; a row its symbol and path).
 */
export function scanStateToJson(state: ScanState): string {
  return JSON.stringify({
    v: 1,
    scannedAt: state.scannedAt.toISOString(),
    blobs: [...state.blobs].map(([path, b]) => [path, b.etag, b.size, b.lastModified.getTime()]),
    indexes: [...state.indexes].map(([path, index]) => [path, index.version ?? null, index.rows.map((r) => [r.symbol, r.fileName, r.from, r.until])]),
    clients: [...state.clients],
    backlog: state.backlog,
    ...(state.pending !== undefined && {
      pending: {
        after: state.pending.after,
        changes: state.pending.changes.map((c) => ({ ...c, time: c.time.toISOString(), file: { ...c.file, uploaded: c.file.uploaded.toISOString() } })),
      },
    }),
  });
}

type Stored = {
  v: 1;
  scannedAt: string;
  blobs: [string, string, number, number][];
  indexes: [string, string | null, [string, string, number | null, number | null][]][];
  clients: [string, string][];
  backlog: string[];
  pending?: { after: number; changes: (Omit<FileChange, 'time' | 'file'> & { time: string; file: FileChange['file'] & { uploaded: string } })[] };
};

/** Throws when the document is not a scan state of this version. */
export function scanStateFromJson(text: string): ScanState {
  const stored = JSON.parse(text) as Stored;
  if (stored.v !== 1) throw new Error(`unknown scan state version ${String(stored.v)}`);
  return {
    scannedAt: new Date(stored.scannedAt),
    blobs: new Map(stored.blobs.map(([path, etag, size, at]): [string, ScannedBlob] => [path, { etag, size, lastModified: new Date(at) }])),
    indexes: new Map(
      stored.indexes.map(([path, version, rows]) => [
        path,
        { version: version ?? undefined, rows: rows.map(([symbol, fileName, from, until]): ScannedRow => ({ symbol, fileName, from, until })) },
      ]),
    ),
    clients: new Map(stored.clients),
    backlog: stored.backlog,
    ...(stored.pending !== undefined && {
      pending: {
        after: stored.pending.after,
        changes: stored.pending.changes.map((c) => ({ ...c, time: new Date(c.time), file: { ...c.file, uploaded: new Date(c.file.uploaded) } })),
      },
    }),
  };
}
