import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { BigIntStats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { ClientRecord, ClientRegistry } from '../../domain/ports.js';

/** One client as stored in the registry file. */
export interface StoredClient {
  /** Self-describing hash from `hashSecret`; never the secret. */
  readonly secretHash: string;
  readonly indexPath: string;
  readonly enabled: boolean;
  /** ISO 8601. */
  readonly createdAt: string;
  /** ISO 8601. */
  readonly updatedAt: string;
}

/** The registry file: `{ "version": 1, "clients": { "<client_id>": { ... } } }`. */
export interface ClientRegistryFile {
  readonly version: 1;
  /** Keyed by client id. Objects from `load()` have no prototype, so any valid id is a safe key. */
  readonly clients: Record<string, StoredClient>;
}

const CLIENT_ID = /^(?!\.)[A-Za-z0-9._-]{1,64}$/;

/** 1 to 64 of `A-Z a-z 0-9 . _ -`, not starting with `.`: safe as a file name and in `indexes/<client_id>.csv`. */
export function isValidClientId(clientId: string): boolean {
  return CLIENT_ID.test(clientId);
}

/** Where a client's index lives unless the operator says otherwise. */
export function defaultIndexPath(clientId: string): string {
  return `indexes/${clientId}.csv`;
}

/** A registry file with no clients, as a missing file reads. */
export function emptyRegistryFile(): ClientRegistryFile {
  return { version: 1, clients: Object.create(null) as Record<string, StoredClient> };
}

interface Snapshot {
  /** Identity of the file version the clients were read from; `missing` when there was no file. */
  readonly key: string;
  readonly clients: ReadonlyMap<string, ClientRecord>;
}

/**
 * The client registry kept in a JSON file that the `clients` CLI edits from another process.
 *
 * `find` stats the file on every call and parses it again only when its identity (inode, size,
 * modification and change times) moved, so a client added, rotated or disabled by the CLI counts
 * from the next request on, without reading the file each time.
 */
export class JsonClientRegistry implements ClientRegistry {
  readonly path: string;
  private snapshot: Snapshot | undefined;

  constructor(path: string) {
    this.path = path;
  }

  /** Throws an `Error` naming the file when it exists but is not a valid registry. */
  async find(clientId: string): Promise<ClientRecord | undefined> {
    if (!isValidClientId(clientId)) return undefined;
    const stats = await this.stat();
    const key = stats === undefined ? 'missing' : fileKey(stats);
    if (this.snapshot?.key !== key) {
      // The key is taken before the read: if the file changes in between, the next call reads it again.
      const file = stats === undefined ? emptyRegistryFile() : await this.load();
      this.snapshot = { key, clients: toRecords(file) };
    }
    return this.snapshot.clients.get(clientId);
  }

  /** The whole file, read now; an empty registry when the file does not exist yet. */
  async load(): Promise<ClientRegistryFile> {
    try {
      return await this.read();
    } catch (error) {
      if (isNotFound(error)) return emptyRegistryFile();
      throw error;
    }
  }

  /**
   * Replaces the file atomically: a temporary file in the same directory is written, flushed to
   * disk and renamed over the registry, so a reader sees the old file or the new one, never a part.
   * The file is readable by its owner only (0600): it holds the secret hashes.
   */
  async save(data: ClientRegistryFile): Promise<void> {
    const directory = dirname(this.path);
    await fs.mkdir(directory, { recursive: true, mode: 0o700 });
    const temporary = join(directory, `.${basename(this.path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    const text = `${JSON.stringify({ version: 1, clients: data.clients }, null, 2)}\n`;
    const handle = await fs.open(temporary, 'wx', 0o600);
    try {
      try {
        // `open`'s mode is filtered by the umask; this makes it exactly 0600 whatever the umask.
        await handle.chmod(0o600);
        await handle.writeFile(text, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fs.rename(temporary, this.path);
    } catch (error) {
      await fs.rm(temporary, { force: true });
      throw error;
    }
    await syncDirectory(directory);
  }

  private async stat(): Promise<BigIntStats | undefined> {
    try {
      return await fs.stat(this.path, { bigint: true });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw new Error(`Client registry ${this.path} cannot be read: ${describe(error)}`, { cause: error });
    }
  }

  private async read(): Promise<ClientRegistryFile> {
    let text: string;
    try {
      text = await fs.readFile(this.path, 'utf8');
    } catch (error) {
      if (isNotFound(error)) throw error;
      throw new Error(`Client registry ${this.path} cannot be read: ${describe(error)}`, { cause: error });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new Error(`Client registry ${this.path} is not valid JSON: ${describe(error)}`, { cause: error });
    }
    const problem = findProblem(json);
    if (problem !== undefined) throw new Error(`Client registry ${this.path} is malformed: ${problem}`);
    const file = json as ClientRegistryFile;
    // A prototype-less copy: `clients["constructor"]` or a `__proto__` id then mean that client and nothing else.
    return { version: 1, clients: Object.assign(Object.create(null) as Record<string, StoredClient>, file.clients) };
  }
}

function fileKey(stats: BigIntStats): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

function toRecords(file: ClientRegistryFile): Map<string, ClientRecord> {
  const records = new Map<string, ClientRecord>();
  for (const [clientId, stored] of Object.entries(file.clients)) {
    records.set(clientId, {
      clientId,
      secretHash: stored.secretHash,
      indexPath: stored.indexPath,
      enabled: stored.enabled,
    });
  }
  return records;
}

/** What is wrong with a parsed registry file, or `undefined` when it is valid. */
function findProblem(json: unknown): string | undefined {
  if (!isObject(json)) return 'the top level must be an object';
  if (json['version'] !== 1) return `"version" must be 1, found ${JSON.stringify(json['version'])}`;
  const clients = json['clients'];
  if (!isObject(clients)) return '"clients" must be an object';
  for (const [clientId, stored] of Object.entries(clients)) {
    const where = `clients[${JSON.stringify(clientId)}]`;
    if (!isValidClientId(clientId)) return `${where}: invalid client id`;
    if (!isObject(stored)) return `${where} must be an object`;
    for (const field of ['secretHash', 'indexPath', 'createdAt', 'updatedAt'] as const) {
      const value = stored[field];
      if (typeof value !== 'string' || value === '') return `${where}.${field} must be a non-empty string`;
    }
    if (typeof stored['enabled'] !== 'boolean') return `${where}.enabled must be true or false`;
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNotFound(error: unknown): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === 'ENOENT';
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Makes the rename itself durable. Not every platform can open a directory, hence best effort. */
async function syncDirectory(directory: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await fs.open(directory, 'r');
    await handle.sync();
  } catch {
    // The file is already in place; only durability across a power cut is at stake.
  } finally {
    await handle?.close();
  }
}
