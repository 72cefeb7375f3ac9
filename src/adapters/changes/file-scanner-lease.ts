import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Clock, ScannerLease } from '../../domain/ports.js';

export interface FileScannerLeaseOptions {
  /** The lock file, e.g. `changes/scanner.lock` beside CLIENTS_FILE. */
  readonly file: string;
  readonly clock: Clock;
  /** How long a holder that stopped renewing keeps the lock (default 45 s). */
  readonly expiryMs?: number;
}

/**
 * The scanner lease on the local folder store: a lock file naming its holder and its last
 * heartbeat (the gateway's clock). The holder rewrites the heartbeat at each `acquire`; another
 * process takes the file over once the heartbeat is older than `expiryMs`. Every write replaces
 * the file whole (a rename), and a takeover reads it back to see that it won.
 */
export class FileScannerLease implements ScannerLease {
  readonly #file: string;
  readonly #clock: Clock;
  readonly #expiryMs: number;
  readonly #holder = randomUUID();
  #held = false;

  constructor(options: FileScannerLeaseOptions) {
    this.#file = options.file;
    this.#clock = options.clock;
    this.#expiryMs = options.expiryMs ?? 45_000;
  }

  async acquire(): Promise<boolean> {
    const now = this.#clock.now().getTime();
    const current = await this.#read();
    if (current !== undefined && current.holder !== this.#holder && !(now - current.heartbeat > this.#expiryMs)) {
      this.#held = false;
      return false;
    }
    await this.#write(now);
    this.#held = (await this.#read())?.holder === this.#holder;
    return this.#held;
  }

  async release(): Promise<void> {
    if (!this.#held) return;
    this.#held = false;
    if ((await this.#read())?.holder === this.#holder) await rm(this.#file, { force: true });
  }

  async #read(): Promise<{ holder: string; heartbeat: number } | undefined> {
    try {
      const lock = JSON.parse(await readFile(this.#file, 'utf8')) as { holder: unknown; heartbeat: unknown };
      return typeof lock.holder === 'string' && typeof lock.heartbeat === 'number' ? { holder: lock.holder, heartbeat: lock.heartbeat } : undefined;
    } catch (error) {
      // Absent, or half written by a process that died: free.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || error instanceof SyntaxError) return undefined;
      throw error;
    }
  }

  async #write(now: number): Promise<void> {
    await mkdir(dirname(this.#file), { recursive: true });
    const temporary = `${this.#file}.${this.#holder}.tmp`;
    await writeFile(temporary, JSON.stringify({ holder: this.#holder, heartbeat: now, pid: process.pid }), 'utf8');
    await rename(temporary, this.#file);
  }
}
