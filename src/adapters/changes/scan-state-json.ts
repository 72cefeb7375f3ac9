import type { FileChange } from '../../domain/changes.js';
import type { ScannedBlob, ScannedRow, ScanState } from '../../domain/ports.js';

/**
 * The scan state as JSON lines, the same for every store: a header, then one short line per
 * client, blob, index, row and backlog entry. Written and read a slice of lines at a time with a
 * turn of the event loop between slices, so that a state of a few hundred thousand blobs and rows
 * (some 95 bytes a blob and 60 a row) never holds the thread the way one `JSON.stringify` would.
 */

const LINES_PER_SLICE = 5_000;

function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

type Line =
  | { t: 'h'; v: 2; scannedAt: string; pending?: StoredPending }
  | { t: 'c'; id: string; index: string }
  | { t: 'b'; p: string; e: string; s: number; m: number }
  | { t: 'i'; p: string; v: string | null }
  | { t: 'r'; s: string; f: string; a: number | null; u: number | null }
  | { t: 'k'; p: string };

interface StoredPending {
  after: number;
  changes: (Omit<FileChange, 'time' | 'file'> & { time: string; file: Omit<FileChange['file'], 'uploaded'> & { uploaded: string } })[];
}

export async function scanStateToJsonLines(state: ScanState): Promise<string> {
  const lines: string[] = [];
  let count = 0;
  const push = async (line: Line): Promise<void> => {
    lines.push(JSON.stringify(line));
    count += 1;
    if (count % LINES_PER_SLICE === 0) await turn();
  };
  await push({
    t: 'h',
    v: 2,
    scannedAt: state.scannedAt.toISOString(),
    ...(state.pending !== undefined && {
      pending: {
        after: state.pending.after,
        changes: state.pending.changes.map((c) => ({ ...c, time: c.time.toISOString(), file: { ...c.file, uploaded: c.file.uploaded.toISOString() } })),
      },
    }),
  });
  for (const [id, index] of state.clients) await push({ t: 'c', id, index });
  for (const [p, b] of state.blobs) await push({ t: 'b', p, e: b.etag, s: b.size, m: b.lastModified.getTime() });
  for (const [p, index] of state.indexes) {
    await push({ t: 'i', p, v: index.version ?? null });
    for (const row of index.rows) await push({ t: 'r', s: row.symbol, f: row.fileName, a: row.from, u: row.until });
  }
  for (const p of state.backlog) await push({ t: 'k', p });
  return `${lines.join('\n')}\n`;
}

/** Throws when the text is not a scan state of this version. */
export async function scanStateFromJsonLines(text: string): Promise<ScanState> {
  const lines = text.split('\n');
  const header = JSON.parse(lines[0] ?? '') as Line;
  if (header.t !== 'h' || header.v !== 2) throw new Error('not a scan state of version 2');
  const clients = new Map<string, string>();
  const blobs = new Map<string, ScannedBlob>();
  const indexes = new Map<string, { version: string | undefined; rows: ScannedRow[] }>();
  const backlog: string[] = [];
  let rows: ScannedRow[] | undefined;
  for (let i = 1; i < lines.length; i += 1) {
    if (i % LINES_PER_SLICE === 0) await turn();
    const text = lines[i] as string;
    if (text === '') continue;
    const line = JSON.parse(text) as Line;
    switch (line.t) {
      case 'c':
        clients.set(line.id, line.index);
        break;
      case 'b':
        blobs.set(line.p, { etag: line.e, size: line.s, lastModified: new Date(line.m) });
        break;
      case 'i':
        rows = [];
        indexes.set(line.p, { version: line.v ?? undefined, rows });
        break;
      case 'r':
        if (rows === undefined) throw new Error(`scan state line ${i + 1}: a row before any index`);
        rows.push({ symbol: line.s, fileName: line.f, from: line.a, until: line.u });
        break;
      case 'k':
        backlog.push(line.p);
        break;
      default:
        throw new Error(`scan state line ${i + 1}: unexpected`);
    }
  }
  const pending = header.pending;
  return {
    scannedAt: new Date(header.scannedAt),
    blobs,
    indexes,
    clients,
    backlog,
    ...(pending !== undefined && {
      pending: {
        after: pending.after,
        changes: pending.changes.map((c) => ({ ...c, time: new Date(c.time), file: { ...c.file, uploaded: new Date(c.file.uploaded) } })),
      },
    }),
  };
}
