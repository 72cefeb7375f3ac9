import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomically } from './durable-file.js';
import { MANIFEST_NAME } from './local-path.js';

/** What the mirror knows about one file it wrote. */
export interface ManifestEntry {
  readonly symbol: string;
  /** The strong ETag of the version on disk, as the download's `ETag` said. */
  readonly etag: string;
  readonly size: number;
  /** Base64 MD5 of the bytes on disk (computed while they were received). */
  readonly md5: string;
  readonly lastModified?: string;
}

interface ManifestDocument {
  readonly version: 1;
  readonly files: Record<string, ManifestEntry>;
}

/**
 * `<dir>/.dfg-manifest.json`: every mirrored file by storage path. Saved after each change, atomically;
 * concurrent saves are coalesced into one write of the latest state, never two writes racing.
 */
export class Manifest {
  private saving: Promise<void> | undefined;
  private dirty = false;

  private constructor(private readonly path: string, private readonly files: Map<string, ManifestEntry>) {}

  static async load(dir: string): Promise<Manifest> {
    const path = join(dir, MANIFEST_NAME);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Manifest(path, new Map());
      throw error;
    }
    const document = JSON.parse(text) as Partial<ManifestDocument>;
    if (document.version !== 1 || typeof document.files !== 'object' || document.files === null) {
      throw new Error(`${path} is not a dfg manifest (version 1)`);
    }
    return new Manifest(path, new Map(Object.entries(document.files)));
  }

  get(storagePath: string): ManifestEntry | undefined {
    return this.files.get(storagePath);
  }

  paths(): string[] {
    return [...this.files.keys()];
  }

  set(storagePath: string, entry: ManifestEntry): Promise<void> {
    this.files.set(storagePath, entry);
    return this.save();
  }

  delete(storagePath: string): Promise<void> {
    this.files.delete(storagePath);
    return this.save();
  }

  /** Resolves once a write that includes every change made so far is on disk. */
  save(): Promise<void> {
    this.dirty = true;
    this.saving ??= this.writeWhileDirty().finally(() => {
      this.saving = undefined;
    });
    return this.saving;
  }

  private async writeWhileDirty(): Promise<void> {
    while (this.dirty) {
      this.dirty = false;
      const sorted = Object.fromEntries([...this.files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      const document: ManifestDocument = { version: 1, files: sorted };
      await writeFileAtomically(this.path, `${JSON.stringify(document, null, 2)}\n`);
    }
  }
}
