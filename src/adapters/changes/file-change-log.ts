import { randomUUID } from 'node:crypto';
import { link, mkdir, open, readdir, readFile, rename, rm, stat, truncate, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { changeId, FILE_CHANGE_TYPES, type FileChange, type FileChangeType, type LoggedChange } from '../../domain/changes.js';
import { StorageUnavailable } from '../../domain/errors.js';
import type { ChangeLog, Clock } from '../../domain/ports.js';

export interface FileChangeLogOptions {
  /** The folder of the log (on the local folder store: `changes/` beside CLIENTS_FILE). */
  readonly dir: string;
  /** A segment file is closed for appends once it holds this many bytes (default 4 MiB). */
  readonly segmentBytes?: number;
  /** Fixes the origin of a log made in an empty folder (its time in milliseconds times 1000); default the system clock. */
  readonly clock?: Clock;
}

/**
 * The change log of the local folder store: an embedded, append-only log in segment files
 * (`changes-<first position>.jsonl`, one JSON line per change) and a `horizon.json` file, under one
 * folder. It survives restarts: the files are the log, and each instance rebuilds its index from them.
 *
 * `horizon.json` also keeps the log's origin. The first process to find the folder without a log
 * creates it exclusively (a hard link, which fails if the file exists), so processes that start
 * together agree on one origin; a log made before origins existed (segments, but no origin
 * recorded) keeps origin 0.
 *
 * A read does not scan the log: each instance keeps, per segment, where each client's lines are
 * (their positions, byte offsets and lengths: some 30 bytes per change kept, bounded by what the
 * scanner appends within the retention, never by requests), and reads only those lines. Before each
 * call the instance looks at the folder (one `readdir`, one `stat` of the last segment) and indexes
 * only what another process appended since. Pruning deletes whole segments whose every change was
 * found before the cut-off, after recording the horizon (so the head is never forgotten) and, per
 * client, the position of its last change pruned (`pruned.json`, one number per client that had
 * changes; read again only when the file changed).
 *
 * Only the scanner's lease holder appends; a line it had not finished when it died is cut off by
 * the next writer, and never read.
 */
export class FileChangeLog implements ChangeLog {
  readonly #dir: string;
  readonly #segmentBytes: number;
  readonly #clock: Clock | undefined;
  #segments: Segment[] = [];
  /** Read from `horizon.json` once it is known; fixed for the log's life. */
  #origin: number | undefined;
  #horizon = 0;
  #ready: Promise<void> | undefined;
  /** `pruned.json` as last read, and the modification time and size it had then. */
  #pruned: { readonly stamp: string; readonly clients: Readonly<Record<string, number>> } | undefined;

  constructor(options: FileChangeLogOptions) {
    this.#dir = options.dir;
    this.#segmentBytes = options.segmentBytes ?? 4 * 1024 * 1024;
    this.#clock = options.clock;
  }

  append(changes: readonly FileChange[]): Promise<readonly LoggedChange[]> {
    return folderCall(() => this.#appendNow(changes));
  }

  read(clientId: string, after: number, limit: number): Promise<readonly LoggedChange[]> {
    return folderCall(() => this.#readNow(clientId, after, limit));
  }

  head(): Promise<number> {
    return folderCall(() => this.#headNow());
  }

  horizon(): Promise<number> {
    return folderCall(() => this.#horizonNow());
  }

  prunedThrough(clientId: string): Promise<number> {
    return folderCall(() => this.#prunedThroughNow(clientId));
  }

  prune(before: Date): Promise<void> {
    return folderCall(() => this.#pruneNow(before));
  }

  async #appendNow(changes: readonly FileChange[]): Promise<readonly LoggedChange[]> {
    if (changes.length === 0) return [];
    await this.#refresh();
    let segment = this.#segments.at(-1);
    if (segment !== undefined) {
      // A line a dead writer did not finish is cut off before anything follows it.
      const size = (await stat(join(this.#dir, segment.name))).size;
      if (size > segment.bytes) await truncate(join(this.#dir, segment.name), segment.bytes);
    }
    const head = this.#head();
    const logged = changes.map((change, i) => ({ ...change, id: changeId(head + 1 + i), position: head + 1 + i }));
    if (segment === undefined || segment.bytes >= this.#segmentBytes) {
      segment = emptySegment(`changes-${(head + 1).toString().padStart(16, '0')}.jsonl`);
      this.#segments.push(segment);
    }
    const lines = logged.map((change) => `${JSON.stringify(toLine(change))}\n`).join('');
    const file = await open(join(this.#dir, segment.name), 'a');
    try {
      await file.appendFile(lines, 'utf8');
      await file.datasync();
    } finally {
      await file.close();
    }
    index(segment, Buffer.from(lines, 'utf8'), segment.bytes);
    return logged;
  }

  async #readNow(clientId: string, after: number, limit: number): Promise<readonly LoggedChange[]> {
    await this.#refresh();
    const found: LoggedChange[] = [];
    for (const segment of this.#segments) {
      if (found.length >= limit) break;
      if (segment.last <= after) continue;
      const lines = segment.clients.get(clientId);
      if (lines === undefined) continue;
      let from = firstAfter(lines.positions, after);
      const to = Math.min(lines.positions.length, from + (limit - found.length));
      if (from >= to) continue;
      let file;
      try {
        file = await open(join(this.#dir, segment.name), 'r');
      } catch (error) {
        // Pruned by the writer since the folder was looked at: its changes are past the horizon.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      try {
        while (from < to) {
          // Neighbouring lines are read in one call, up to 1 MiB at a time.
          const start = lines.offsets[from] as number;
          let end = from + 1;
          while (end < to && (lines.offsets[end] as number) + (lines.lengths[end] as number) - start <= 1024 * 1024) end += 1;
          const last = end - 1;
          const span = Buffer.alloc((lines.offsets[last] as number) + (lines.lengths[last] as number) - start);
          await file.read(span, 0, span.length, start);
          for (let i = from; i < end; i += 1) {
            const at = (lines.offsets[i] as number) - start;
            const change = fromLine(clientId, span.subarray(at, at + (lines.lengths[i] as number)).toString('utf8'));
            if (change !== undefined) found.push(change);
          }
          from = end;
        }
      } finally {
        await file.close();
      }
    }
    return found;
  }

  async #headNow(): Promise<number> {
    await this.#refresh();
    return this.#head();
  }

  async #horizonNow(): Promise<number> {
    await this.#refresh();
    return this.#horizon;
  }

  async #prunedThroughNow(clientId: string): Promise<number> {
    await this.#refresh();
    const clients = await this.#prunedClients();
    return Math.max(this.#origin ?? 0, Object.hasOwn(clients, clientId) ? (clients[clientId] as number) : 0);
  }

  /** Each client's last pruned position, from `pruned.json` (parsed again only when it changed). */
  async #prunedClients(): Promise<Readonly<Record<string, number>>> {
    const path = join(this.#dir, PRUNED_FILE);
    let stamp: string;
    try {
      const stats = await stat(path);
      // The inode too: a rename replaces the file, so a rewrite of the same size within one mtime tick is still seen.
      stamp = `${stats.ino}:${stats.mtimeMs}:${stats.size}`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
    if (this.#pruned?.stamp !== stamp) {
      const parsed = JSON.parse(await readFile(path, 'utf8')) as unknown;
      const clients: Record<string, number> = Object.create(null) as Record<string, number>;
      if (typeof parsed === 'object' && parsed !== null) {
        for (const [clientId, position] of Object.entries(parsed)) if (Number.isSafeInteger(position)) clients[clientId] = position as number;
      }
      this.#pruned = { stamp, clients };
    }
    return this.#pruned.clients;
  }

  async #pruneNow(before: Date): Promise<void> {
    await this.#refresh();
    const cutoff = before.getTime();
    const old: Segment[] = [];
    for (const segment of this.#segments) {
      if (segment.lastTime >= cutoff) break;
      old.push(segment);
    }
    const last = old.at(-1);
    if (last === undefined) return;
    const horizon = Math.max(this.#horizon, last.last);
    // Each client's last change among those going, recorded before they go (a crash in between prunes nothing twice).
    const pruned: Record<string, number> = { ...(await this.#prunedClients()) };
    for (const segment of old) {
      for (const [clientId, lines] of segment.clients) pruned[clientId] = Math.max(pruned[clientId] ?? 0, lines.positions.at(-1) ?? 0);
    }
    const prunedTemporary = join(this.#dir, `pruned.${process.pid}.tmp`);
    await writeFile(prunedTemporary, JSON.stringify(pruned), 'utf8');
    await rename(prunedTemporary, join(this.#dir, PRUNED_FILE));
    const temporary = join(this.#dir, `horizon.${process.pid}.tmp`);
    await writeFile(temporary, JSON.stringify({ origin: this.#origin ?? 0, horizon }), 'utf8');
    await rename(temporary, join(this.#dir, HORIZON_FILE));
    this.#horizon = horizon;
    for (const segment of old) await rm(join(this.#dir, segment.name), { force: true });
    this.#segments = this.#segments.filter((segment) => !old.includes(segment));
  }

  #head(): number {
    return Math.max(this.#horizon, this.#segments.at(-1)?.last ?? 0);
  }

  /** `horizon.json` as it is, `undefined` when there is none; a log that recorded no origin has origin 0. */
  async #readHorizonFile(): Promise<{ readonly origin: number; readonly horizon: number } | undefined> {
    let parsed: { origin?: unknown; horizon?: unknown };
    try {
      parsed = JSON.parse(await readFile(join(this.#dir, HORIZON_FILE), 'utf8')) as typeof parsed;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const origin = Number(parsed.origin);
    const horizon = Number(parsed.horizon);
    return { origin: Number.isSafeInteger(origin) ? origin : 0, horizon: Number.isSafeInteger(horizon) ? horizon : 0 };
  }

  /**
   * Makes the log's `horizon.json` with a new origin, unless another process made it first: then
   * theirs. Written whole under a temporary name and linked in, so no process reads it half written.
   */
  async #createHorizonFile(): Promise<{ readonly origin: number; readonly horizon: number } | undefined> {
    const origin = (this.#clock?.now().getTime() ?? Date.now()) * 1000;
    const temporary = join(this.#dir, `horizon.${process.pid}.${randomUUID()}.tmp`);
    await writeFile(temporary, JSON.stringify({ origin, horizon: origin }), 'utf8');
    try {
      await link(temporary, join(this.#dir, HORIZON_FILE));
      return { origin, horizon: origin };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      return this.#readHorizonFile();
    } finally {
      await unlink(temporary).catch(() => undefined);
    }
  }

  /** Brings the index up to the folder: new segments, what was appended to the last one, pruned ones gone. */
  async #refresh(): Promise<void> {
    this.#ready ??= mkdir(this.#dir, { recursive: true }).then(() => undefined);
    await this.#ready;
    const files = await readdir(this.#dir);
    const names = files.filter((name) => SEGMENT.test(name));
    const present = new Set(names);
    this.#segments = this.#segments.filter((segment) => present.has(segment.name));
    const known = new Set(this.#segments.map((segment) => segment.name));
    let recorded = await this.#readHorizonFile();
    if (recorded === undefined && names.length === 0 && !files.includes(PRUNED_FILE)) recorded = await this.#createHorizonFile();
    // Read at every refresh: a log made anew while this process runs (a reset) has another origin,
    // which a later prune must write back, not this process's old one. No horizon.json beside
    // segments: a log made before origins existed, which starts at 0.
    if (recorded !== undefined) this.#origin = recorded.origin;
    else this.#origin ??= 0;
    this.#horizon = Math.max(this.#horizon, this.#origin, recorded?.horizon ?? 0);
    for (const name of names) {
      if (known.has(name)) continue;
      this.#segments.push(emptySegment(name));
    }
    // By first position: names before origins were padded to 15 digits, since to 16.
    this.#segments.sort((a, b) => firstPosition(a.name) - firstPosition(b.name));
    // Only the last segment grows: an earlier one is read to its end once, and then sealed.
    for (const segment of this.#segments) {
      if (segment.sealed) continue;
      if (segment !== this.#segments.at(-1)) segment.sealed = true;
      const path = join(this.#dir, segment.name);
      let size: number;
      try {
        size = (await stat(path)).size;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      if (size <= segment.bytes) continue;
      const file = await open(path, 'r');
      try {
        const fresh = Buffer.alloc(size - segment.bytes);
        await file.read(fresh, 0, fresh.length, segment.bytes);
        index(segment, fresh, segment.bytes);
      } finally {
        await file.close();
      }
    }
  }
}

/**
 * Runs one of the log's operations, a failure of the file system (the folder gone, replaced by a
 * file, unreadable, the disk full) reported as a retryable `StorageUnavailable`: a `503` with
 * `Retry-After` to a feed's reader, as the other stores' outages are, never an unknown error.
 */
async function folderCall<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (typeof (error as NodeJS.ErrnoException | undefined)?.code !== 'string') throw error;
    throw new StorageUnavailable(`The change log's folder could not be used (${(error as NodeJS.ErrnoException).code})`, { cause: error, retryable: true });
  }
}

const HORIZON_FILE = 'horizon.json';
const PRUNED_FILE = 'pruned.json';
const SEGMENT = /^changes-\d{15,16}\.jsonl$/;

function firstPosition(segmentName: string): number {
  return Number(segmentName.slice('changes-'.length, -'.jsonl'.length));
}

interface ClientLines {
  readonly positions: number[];
  readonly offsets: number[];
  readonly lengths: number[];
}

interface Segment {
  readonly name: string;
  /** Bytes of complete lines indexed. */
  bytes: number;
  last: number;
  lastTime: number;
  /** Read to its end after a later segment was begun: it grows no more. */
  sealed: boolean;
  readonly clients: Map<string, ClientLines>;
}

function emptySegment(name: string): Segment {
  return { name, bytes: 0, last: 0, lastTime: Number.NEGATIVE_INFINITY, sealed: false, clients: new Map() };
}

/** Indexes the complete lines of `bytes`, which start at `offset` of the segment. */
function index(segment: Segment, bytes: Buffer, offset: number): void {
  let start = 0;
  for (let end = bytes.indexOf(0x0a, start); end !== -1; end = bytes.indexOf(0x0a, start)) {
    const line = parseLine(bytes.subarray(start, end).toString('utf8'));
    if (line !== undefined) {
      let lines = segment.clients.get(line.c);
      if (lines === undefined) segment.clients.set(line.c, (lines = { positions: [], offsets: [], lengths: [] }));
      lines.positions.push(line.p);
      lines.offsets.push(offset + start);
      lines.lengths.push(end - start);
      segment.last = Math.max(segment.last, line.p);
      segment.lastTime = Math.max(segment.lastTime, Date.parse(line.at));
    }
    start = end + 1;
  }
  segment.bytes = offset + start;
}

/** The first index whose position is after `after` (positions are increasing). */
function firstAfter(positions: readonly number[], after: number): number {
  let low = 0;
  let high = positions.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((positions[middle] as number) <= after) low = middle + 1;
    else high = middle;
  }
  return low;
}

interface Line {
  readonly p: number;
  readonly c: string;
  readonly t: FileChangeType;
  readonly at: string;
  readonly f: { readonly symbol: string; readonly fileName: string; readonly size: number; readonly etag: string; readonly uploaded: string; readonly sha256?: string };
}

function toLine(change: LoggedChange): Line {
  const { symbol, fileName, size, etag, uploaded, sha256 } = change.file;
  return {
    p: change.position,
    c: change.clientId,
    t: change.type,
    at: change.time.toISOString(),
    f: { symbol, fileName, size, etag, uploaded: uploaded.toISOString(), ...(sha256 !== undefined && { sha256 }) },
  };
}

function parseLine(text: string): Line | undefined {
  try {
    const line = JSON.parse(text) as Line;
    return Number.isSafeInteger(line.p) && typeof line.c === 'string' && FILE_CHANGE_TYPES.includes(line.t) ? line : undefined;
  } catch {
    return undefined;
  }
}

function fromLine(clientId: string, text: string): LoggedChange | undefined {
  const line = parseLine(text);
  if (line === undefined || line.c !== clientId) return undefined;
  return {
    clientId,
    id: changeId(line.p),
    position: line.p,
    type: line.t,
    time: new Date(line.at),
    file: {
      symbol: line.f.symbol,
      fileName: line.f.fileName,
      size: line.f.size,
      etag: line.f.etag,
      uploaded: new Date(line.f.uploaded),
      ...(line.f.sha256 !== undefined && { sha256: line.f.sha256 }),
    },
  };
}
