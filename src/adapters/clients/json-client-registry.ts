import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { BigIntStats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { lock } from 'proper-lockfile';
import type { ClientRecord, ClientRegistry } from '../../domain/ports.js';
import { InvalidInstant, parseIsoInstant } from '../../text/iso-instant.js';

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
  /** ISO 8601 instant the subscription term starts (inclusive); unbounded when absent. */
  readonly validFrom?: string;
  /** ISO 8601 instant the subscription term ends (exclusive); unbounded when absent. */
  readonly validUntil?: string;
  /** Bytes per calendar month (UTC); unlimited when absent. */
  readonly monthlyBytes?: number;
  /**
   * Access keys the operator issued (`clients s3-key add`), keyed by access key id. Only the id
   * and when it was made are kept: the secret is derived from the server key, never stored.
   */
  readonly accessKeys?: Record<string, StoredAccessKey>;
}

export interface StoredAccessKey {
  /** ISO 8601. */
  readonly createdAt: string;
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

const ACCESS_KEY_ID = /^[A-Z0-9]{16,128}$/;

/** An access key id as `clients s3-key add` makes them: 16 to 128 upper-case letters and digits. */
export function isValidAccessKeyId(accessKeyId: string): boolean {
  return ACCESS_KEY_ID.test(accessKeyId);
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
  /** Identity of the file version last looked at; `missing` when there was no file. */
  readonly key: string;
  readonly clients: ReadonlyMap<string, ClientRecord>;
  /** Client id by access key id. */
  readonly accessKeys: ReadonlyMap<string, string>;
}

/** Whether the registry file could be read the last time it was looked at. */
export type RegistryHealth = { readonly readable: true } | { readonly readable: false; readonly problem: string };

export interface JsonClientRegistryOptions {
  /**
   * How long a look at the file stands before the file is stat'ed again (CLIENTS_FILE_RECHECK_SECONDS):
   * a stat per request is a file-system round trip, slow on network shares such as App Service's
   * `/home`. Absent: every lookup stats the file.
   */
  readonly recheckMs?: number;
  /** The time for `recheckMs`; the system clock when absent. */
  readonly now?: () => number;
  /**
   * Told once per unreadable version of the file while the last good registry keeps being served
   * (a hand-edit gone wrong, a half-copied file): the operator must fix the file.
   */
  readonly onUnreadable?: (error: Error) => void;
}

/** How long the `clients` CLI waits for another run's lock before it gives up. */
const LOCK_RETRIES = { retries: 200, factor: 1.2, minTimeout: 10, maxTimeout: 200, randomize: true };
/** A lock older than this is a crashed run's: it is taken over. */
const LOCK_STALE_MS = 10_000;

/**
 * The client registry kept in a JSON file that the `clients` CLI edits from another process (and
 * that every gateway instance reads, e.g. on App Service's shared `/home`).
 *
 * `find` stats the file at most once per `recheckMs` (CLIENTS_FILE_RECHECK_SECONDS) and parses it
 * again only when its identity (inode, size, modification and change times) moved, so a client
 * added, rotated, disabled or removed by the CLI counts within CLIENTS_FILE_RECHECK_SECONDS (not at
 * once), without reading the file each time. When a new version cannot be read
 * (not JSON, malformed, unreadable), the last good registry keeps being served and `onUnreadable`
 * is told; only a registry that was never readable fails requests.
 */
export class JsonClientRegistry implements ClientRegistry {
  readonly path: string;
  private snapshot: Snapshot | undefined;
  #health: RegistryHealth = { readable: true };
  #lookedAt = Number.NEGATIVE_INFINITY;

  constructor(
    path: string,
    private readonly options: JsonClientRegistryOptions = {},
  ) {
    this.path = path;
  }

  /** Whether the file could be read the last time it was looked at (for readiness). */
  get health(): RegistryHealth {
    return this.#health;
  }

  /** Throws an `Error` naming the file when it cannot be read and no good version was ever read. */
  async find(clientId: string): Promise<ClientRecord | undefined> {
    if (!isValidClientId(clientId)) return undefined;
    return (await this.current()).clients.get(clientId);
  }

  async findByAccessKey(accessKeyId: string): Promise<ClientRecord | undefined> {
    const snapshot = await this.current();
    const clientId = snapshot.accessKeys.get(accessKeyId);
    return clientId === undefined ? undefined : snapshot.clients.get(clientId);
  }

  async all(): Promise<readonly ClientRecord[]> {
    return [...(await this.current()).clients.values()];
  }

  /** Checks the file now (for readiness): what keeps it from being read, or `undefined`. */
  async problem(): Promise<string | undefined> {
    try {
      await this.current();
    } catch {
      // `current` has recorded the problem.
    }
    return this.#health.readable ? undefined : `client registry ${this.path}: ${this.#health.problem}`;
  }

  private async current(): Promise<Snapshot> {
    const now = (this.options.now ?? Date.now)();
    if (this.snapshot !== undefined && now - this.#lookedAt < (this.options.recheckMs ?? 0)) return this.snapshot;
    this.#lookedAt = now;
    let key = 'unstatable';
    try {
      const stats = await this.stat();
      key = stats === undefined ? 'missing' : fileKey(stats);
      // A version already read, or already known to be broken, is not read again.
      if (this.snapshot !== undefined && (this.snapshot.key === key || this.snapshot.key === `broken:${key}`)) return this.snapshot;
      const file = stats === undefined ? emptyRegistryFile() : await this.load();
      this.#health = { readable: true };
      this.snapshot = { key, ...toRecords(file) };
      return this.snapshot;
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      this.#health = { readable: false, problem: failure.message };
      if (this.snapshot === undefined) throw failure;
      // Keep serving the last good clients; tell the operator once per broken version.
      if (this.snapshot.key !== `broken:${key}`) {
        this.options.onUnreadable?.(failure);
        this.snapshot = { key: `broken:${key}`, clients: this.snapshot.clients, accessKeys: this.snapshot.accessKeys };
      }
      return this.snapshot;
    }
  }

  /**
   * Reads, changes and writes the registry under an exclusive lock (a `<file>.lock` directory,
   * taken over when a crashed run left it for more than 10 s), so that concurrent `clients` runs,
   * on one machine or over a shared file system, never lose each other's changes. `change` edits
   * the file it is given and returns whether to write it.
   */
  async modify<T>(change: (file: ClientRegistryFile) => { readonly result: T; readonly write: boolean }): Promise<T> {
    const directory = dirname(this.path);
    await fs.mkdir(directory, { recursive: true, mode: 0o700 });
    let compromised: Error | undefined;
    const release = await lock(this.path, {
      realpath: false,
      stale: LOCK_STALE_MS,
      retries: LOCK_RETRIES,
      onCompromised: (error) => {
        compromised = error;
      },
    });
    try {
      const file = await this.load();
      const { result, write } = change(file);
      if (compromised !== undefined) throw new Error(`Lost the lock on ${this.path}: ${compromised.message}`);
      if (write) await this.save(file);
      return result;
    } finally {
      await release().catch(() => undefined);
    }
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

function toRecords(file: ClientRegistryFile): Pick<Snapshot, 'clients' | 'accessKeys'> {
  const clients = new Map<string, ClientRecord>();
  const accessKeys = new Map<string, string>();
  for (const [clientId, stored] of Object.entries(file.clients)) {
    const accessKeyIds = Object.keys(stored.accessKeys ?? {});
    clients.set(clientId, {
      clientId,
      secretHash: stored.secretHash,
      indexPath: stored.indexPath,
      enabled: stored.enabled,
      ...(accessKeyIds.length > 0 && { accessKeyIds }),
      ...(stored.validFrom !== undefined && { validFrom: parseIsoInstant(stored.validFrom) }),
      ...(stored.validUntil !== undefined && { validUntil: parseIsoInstant(stored.validUntil) }),
      ...(stored.monthlyBytes !== undefined && { monthlyBytes: stored.monthlyBytes }),
    });
    for (const accessKeyId of accessKeyIds) accessKeys.set(accessKeyId, clientId);
  }
  return { clients, accessKeys };
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
    const accessKeys = stored['accessKeys'];
    if (accessKeys !== undefined) {
      if (!isObject(accessKeys)) return `${where}.accessKeys must be an object`;
      for (const [accessKeyId, key] of Object.entries(accessKeys)) {
        if (!isValidAccessKeyId(accessKeyId)) return `${where}.accessKeys: invalid access key id ${JSON.stringify(accessKeyId)}`;
        if (!isObject(key) || typeof key['createdAt'] !== 'string') return `${where}.accessKeys[${JSON.stringify(accessKeyId)}].createdAt must be a string`;
      }
    }
    for (const field of ['validFrom', 'validUntil'] as const) {
      const value = stored[field];
      if (value !== undefined && !isInstant(value)) return `${where}.${field} must be an ISO 8601 date or date-time`;
    }
    const { validFrom, validUntil, monthlyBytes } = stored;
    if (typeof validFrom === 'string' && typeof validUntil === 'string' && parseIsoInstant(validFrom) >= parseIsoInstant(validUntil)) {
      return `${where}.validFrom must come before validUntil`;
    }
    if (monthlyBytes !== undefined && !(Number.isSafeInteger(monthlyBytes) && (monthlyBytes as number) >= 0)) {
      return `${where}.monthlyBytes must be a whole number of bytes`;
    }
  }
  return undefined;
}

function isInstant(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    parseIsoInstant(value);
    return true;
  } catch (error) {
    if (error instanceof InvalidInstant) return false;
    throw error;
  }
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
