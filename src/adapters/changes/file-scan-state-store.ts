import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ScanState, ScanStateStore } from '../../domain/ports.js';
import { scanStateFromJsonLines, scanStateToJsonLines } from './scan-state-json.js';

/** The scan state of the local folder store: one file of JSON lines (e.g. `changes/scan-state.jsonl` beside CLIENTS_FILE), replaced atomically. */
export class FileScanStateStore implements ScanStateStore {
  constructor(private readonly file: string) {}

  async load(): Promise<ScanState | undefined> {
    try {
      return await scanStateFromJsonLines(await readFile(this.file, 'utf8'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async save(state: ScanState): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true });
    const temporary = `${this.file}.${process.pid}.tmp`;
    await writeFile(temporary, await scanStateToJsonLines(state), 'utf8');
    await rename(temporary, this.file);
  }
}
