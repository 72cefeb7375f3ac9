import { mkdir, open, rename, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ChecksumStore, FileVersion } from '../../domain/ports.js';

/**
 * The SHA-256 of file versions on the local folder store: one append-only file of JSON lines
 * (`{"path","etag","sha256"}`), held in memory as one entry per stored path (a new version
 * replaces the old, so memory follows the folder's size, some 200 bytes a file). Lines another
 * process appended are read before each lookup (one `stat`). When the file holds more than twice
 * the live entries, the writer rewrites it with only them.
 */
export class FileChecksumStore implements ChecksumStore {
  readonly #file: string;
  readonly #byPath = new Map<string, { etag: string; sha256: string }>();
  #bytes = 0;
  #lines = 0;
  #ready: Promise<void> | undefined;

  /** `file`: e.g. `changes/checksums.jsonl` beside CLIENTS_FILE. */
  constructor(file: string) {
    this.#file = file;
  }

  async record(version: FileVersion, sha256: string): Promise<void> {
    await this.#refresh();
    const line = `${JSON.stringify({ path: version.path, etag: version.etag, sha256 })}\n`;
    const handle = await open(this.#file, 'a');
    try {
      await handle.appendFile(line, 'utf8');
    } finally {
      await handle.close();
    }
    this.#bytes += Buffer.byteLength(line);
    this.#lines += 1;
    this.#byPath.set(version.path, { etag: version.etag, sha256 });
    if (this.#lines > 1000 && this.#lines > 2 * this.#byPath.size) await this.#compact();
  }

  async lookup(versions: readonly FileVersion[]): Promise<ReadonlyMap<string, string>> {
    await this.#refresh();
    const found = new Map<string, string>();
    for (const version of versions) {
      const known = this.#byPath.get(version.path);
      if (known !== undefined && known.etag === version.etag) found.set(version.path, known.sha256);
    }
    return found;
  }

  async #compact(): Promise<void> {
    const temporary = `${this.#file}.${process.pid}.tmp`;
    const text = [...this.#byPath].map(([path, { etag, sha256 }]) => `${JSON.stringify({ path, etag, sha256 })}\n`).join('');
    await writeFile(temporary, text, 'utf8');
    await rename(temporary, this.#file);
    this.#bytes = Buffer.byteLength(text);
    this.#lines = this.#byPath.size;
  }

  async #refresh(): Promise<void> {
    this.#ready ??= mkdir(dirname(this.#file), { recursive: true }).then(() => undefined);
    await this.#ready;
    let size: number;
    try {
      size = (await stat(this.#file)).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    // Smaller: another process compacted it; read it again from the start.
    if (size < this.#bytes) {
      this.#bytes = 0;
      this.#lines = 0;
      this.#byPath.clear();
    }
    if (size === this.#bytes) return;
    const handle = await open(this.#file, 'r');
    try {
      const fresh = Buffer.alloc(size - this.#bytes);
      await handle.read(fresh, 0, fresh.length, this.#bytes);
      let start = 0;
      for (let end = fresh.indexOf(0x0a); end !== -1; end = fresh.indexOf(0x0a, start)) {
        try {
          const entry = JSON.parse(fresh.subarray(start, end).toString('utf8')) as { path: string; etag: string; sha256: string };
          if (typeof entry.path === 'string' && typeof entry.etag === 'string' && /^[0-9a-f]{64}$/.test(entry.sha256)) {
            this.#byPath.set(entry.path, { etag: entry.etag, sha256: entry.sha256 });
          }
        } catch {
          // A line a dead writer did not finish, followed by later ones: skipped.
        }
        this.#lines += 1;
        start = end + 1;
      }
      this.#bytes += start;
    } finally {
      await handle.close();
    }
  }
}
