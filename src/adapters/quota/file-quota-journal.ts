import { randomBytes } from 'node:crypto';
import { appendFile, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { QuotaJournal, QuotaJournalEntry } from '../../domain/ports.js';

export interface FileQuotaJournalOptions {
  /** The folder every instance of the fleet shares (on App Service, a folder under `/home`). */
  readonly dir: string;
  /**
   * This writer's name in its file names: unique among the writers sharing `dir` (one file per
   * writer and period, so no two processes ever append to, or rewrite, the same file).
   */
  readonly writerName: string;
  /** A period's file is rewritten as one total per client once it holds this many lines, or twice as many as it has clients. */
  readonly compactAfterLines?: number;
  /** Told of what fails without losing a record (a compaction, the removal of an old period's files). */
  readonly onMaintenanceError?: (error: unknown, action: string) => void;
}

const DEFAULT_COMPACT_AFTER_LINES = 1000;
const PERIOD = /^\d{4}-\d{2}$/;
const WRITER_NAME = /^[A-Za-z0-9-]{1,80}$/;
/** `<period>.<writer>.jsonl`. */
const FILE_NAME = /^(\d{4}-\d{2})\.([A-Za-z0-9-]{1,80})\.jsonl$/;

interface Pending {
  readonly entry: QuotaJournalEntry;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** This writer's file of one period, and what it holds (only this writer changes it). */
interface PeriodFile {
  readonly period: string;
  readonly path: string;
  /** The file as it was before this journal first wrote to it has been read into `totals` and `lines`. */
  loaded: boolean;
  /** The sum per client of the lines in the file, so that a compaction need not read it again. */
  readonly totals: Map<string, number>;
  lines: number;
  compactAt: number;
  /** A write failed part-way: the next one starts on a line of its own. */
  torn: boolean;
  readonly pending: Pending[];
  flushing: Promise<void> | undefined;
}

/**
 * The quota journal as JSON lines in a shared folder: each writer appends
 * `{"clientId","period","delta"}` to `<period>.<writer>.jsonl`, and a reader sums every writer's
 * file of the period. Records that arrive while a write is under way go in the next write,
 * together (one append per batch, not per download). A file is rewritten as one line per client
 * when it grows past its bound, and only the current and the previous period are kept, so the
 * folder holds at most two periods × writers × clients lines, whatever the number of downloads.
 */
export class FileQuotaJournal implements QuotaJournal {
  readonly #dir: string;
  readonly #writerName: string;
  readonly #compactAfterLines: number;
  readonly #onMaintenanceError: (error: unknown, action: string) => void;
  readonly #files = new Map<string, PeriodFile>();
  #newestPeriod: string | undefined;
  #closed = false;

  constructor(options: FileQuotaJournalOptions) {
    if (!WRITER_NAME.test(options.writerName)) throw new RangeError(`A journal writer's name is 1-80 of A-Z a-z 0-9 -, not "${options.writerName}"`);
    this.#dir = options.dir;
    this.#writerName = options.writerName;
    this.#compactAfterLines = Math.max(1, options.compactAfterLines ?? DEFAULT_COMPACT_AFTER_LINES);
    this.#onMaintenanceError = options.onMaintenanceError ?? (() => undefined);
  }

  record(entry: QuotaJournalEntry): Promise<void> {
    if (!PERIOD.test(entry.period)) return Promise.reject(new RangeError(`A quota period is YYYY-MM, not "${entry.period}"`));
    if (!Number.isSafeInteger(entry.delta)) return Promise.reject(new RangeError(`A quota change is a whole number of bytes, not ${entry.delta}`));
    if (this.#closed) return Promise.reject(new Error(`The quota journal in ${this.#dir} is closed`));
    if (entry.delta === 0) return Promise.resolve();
    this.#notePeriod(entry.period);
    const file = this.#fileOf(entry.period);
    const recorded = new Promise<void>((resolve, reject) => file.pending.push({ entry, resolve, reject }));
    file.flushing ??= this.#flush(file);
    return recorded;
  }

  async totals(period: string): Promise<ReadonlyMap<string, number>> {
    if (!PERIOD.test(period)) throw new RangeError(`A quota period is YYYY-MM, not "${period}"`);
    const totals = new Map<string, number>();
    for (const name of await this.#names()) {
      if (FILE_NAME.exec(name)?.[1] !== period) continue;
      let text: string;
      try {
        text = await readFile(join(this.#dir, name), 'utf8');
      } catch (error) {
        // Removed between the listing and the read: a period being forgotten.
        if (isMissing(error)) continue;
        throw error;
      }
      for (const line of text.split('\n')) {
        const entry = parseLine(line, period);
        if (entry !== undefined) totals.set(entry.clientId, (totals.get(entry.clientId) ?? 0) + entry.delta);
      }
    }
    for (const [clientId, total] of totals) if (total <= 0) totals.delete(clientId);
    return totals;
  }

  /** Waits for the records under way, then closes the files. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const file of this.#files.values()) await file.flushing;
    this.#files.clear();
  }

  /** Writes the pending records batch by batch until none is left; it says so in the same step as it finds none, so no record is left behind. */
  async #flush(file: PeriodFile): Promise<void> {
    for (;;) {
      if (file.pending.length === 0) {
        file.flushing = undefined;
        return;
      }
      const batch = file.pending.splice(0);
      const text = batch.map(({ entry }) => `${JSON.stringify({ clientId: entry.clientId, period: entry.period, delta: entry.delta })}\n`).join('');
      try {
        if (!file.loaded) await this.#load(file);
        await this.#append(file.path, file.torn ? `\n${text}` : text);
        file.torn = false;
      } catch (error) {
        file.torn = true;
        for (const pending of batch) pending.reject(error);
        continue;
      }
      for (const { entry } of batch) file.totals.set(entry.clientId, (file.totals.get(entry.clientId) ?? 0) + entry.delta);
      file.lines += batch.length;
      for (const pending of batch) pending.resolve();
      if (file.lines >= Math.max(file.compactAt, 2 * file.totals.size)) await this.#compact(file);
    }
  }

  /** Rewrites the file as one line per client (its total), by a rename, so a reader sees the old file or the new one. */
  async #compact(file: PeriodFile): Promise<void> {
    const lines = [...file.totals]
      .filter(([, total]) => total !== 0)
      .map(([clientId, total]) => `${JSON.stringify({ clientId, period: file.period, delta: total })}\n`);
    const temporary = `${file.path}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await writeFile(temporary, lines.join(''));
      await rename(temporary, file.path);
      file.lines = lines.length;
      file.torn = false;
      file.compactAt = file.lines + this.#compactAfterLines;
    } catch (error) {
      await rm(temporary, { force: true }).catch(() => undefined);
      // The file still holds every record: try again once it has grown by another bound.
      file.compactAt = file.lines + this.#compactAfterLines;
      this.#onMaintenanceError(error, `compacting ${file.path}`);
    }
  }

  /**
   * Reads what the file already holds (a writer of the same name before this one), so that a
   * compaction keeps it: the file is rewritten from `totals`, never from what this journal wrote alone.
   */
  async #load(file: PeriodFile): Promise<void> {
    let text = '';
    try {
      text = await readFile(file.path, 'utf8');
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    for (const line of text.split('\n')) {
      const entry = parseLine(line, file.period);
      if (entry === undefined) continue;
      file.totals.set(entry.clientId, (file.totals.get(entry.clientId) ?? 0) + entry.delta);
      file.lines += 1;
    }
    // A last line without its end of line: the next write starts a line of its own.
    file.torn = text !== '' && !text.endsWith('\n');
    file.loaded = true;
  }

  /**
   * Opens, appends and closes for each batch rather than keeping the file open: a folder removed
   * or replaced under a long-lived handle would take the records into a file nobody can read.
   */
  async #append(path: string, text: string): Promise<void> {
    try {
      await appendFile(path, text);
    } catch (error) {
      if (!isMissing(error)) throw error;
      await mkdir(this.#dir, { recursive: true });
      await appendFile(path, text);
    }
  }

  #fileOf(period: string): PeriodFile {
    let file = this.#files.get(period);
    if (file === undefined) {
      file = {
        period,
        path: join(this.#dir, `${period}.${this.#writerName}.jsonl`),
        loaded: false,
        totals: new Map(),
        lines: 0,
        compactAt: this.#compactAfterLines,
        torn: false,
        pending: [],
        flushing: undefined,
      };
      this.#files.set(period, file);
    }
    return file;
  }

  /** A record of a newer period than any before: the periods before the previous one are forgotten, by every writer's files. */
  #notePeriod(period: string): void {
    if (this.#newestPeriod !== undefined && period <= this.#newestPeriod) return;
    this.#newestPeriod = period;
    const oldest = previousPeriod(period);
    // A write under way still finishes: its loop holds its file.
    for (const kept of [...this.#files.keys()]) if (kept < oldest) this.#files.delete(kept);
    void this.#forgetBefore(oldest).catch((error: unknown) => this.#onMaintenanceError(error, `removing quota journal files before ${oldest} from ${this.#dir}`));
  }

  async #forgetBefore(oldest: string): Promise<void> {
    for (const name of await this.#names()) {
      // A period's files, and the temporary file of a compaction a crash interrupted.
      const period = /^(\d{4}-\d{2})\.[A-Za-z0-9-]{1,80}\.jsonl(\.[0-9a-f]{8}\.tmp)?$/.exec(name)?.[1];
      if (period !== undefined && period < oldest) await rm(join(this.#dir, name), { force: true });
    }
  }

  async #names(): Promise<string[]> {
    try {
      return await readdir(this.#dir);
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
  }
}

/** `YYYY-MM` of the month before `period`. */
function previousPeriod(period: string): string {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return month === 1 ? `${String(year - 1).padStart(4, '0')}-12` : `${String(year).padStart(4, '0')}-${String(month - 1).padStart(2, '0')}`;
}

/** A record of `period`, or `undefined` for a blank line, a line cut short by a failed or unfinished write, or another period's. */
function parseLine(line: string, period: string): QuotaJournalEntry | undefined {
  if (line.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { clientId, period: linePeriod, delta } = value as Record<string, unknown>;
  if (typeof clientId !== 'string' || linePeriod !== period || typeof delta !== 'number' || !Number.isSafeInteger(delta)) return undefined;
  return { clientId, period, delta };
}

function isMissing(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'ENOENT';
}
