import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { lock } from 'proper-lockfile';
import type { WebhookEndpointUpdate, WebhookRegistry } from '../../domain/ports.js';
import { isWebhookId, MAX_WEBHOOKS_PER_CLIENT, type NewWebhookEndpoint, type WebhookEndpoint } from '../../domain/webhooks.js';
import { limitReached } from './memory-webhook-registry.js';
import { byCreation, endpointOf, newWebhookId, storedOf, storedProblem, updated, type StoredEndpoint } from './stored-endpoints.js';

/** The file: `{ "version": 1, "endpoints": { "<id>": { ... } } }`. */
interface RegistryFile {
  readonly version: 1;
  /** Keyed by endpoint id; prototype-less once read. */
  readonly endpoints: Record<string, StoredEndpoint>;
}

/** The name of the file beside CLIENTS_FILE. */
export const WEBHOOKS_FILE_NAME = 'webhooks.json';

/** How long a change waits for another process's lock before it gives up. */
const LOCK_RETRIES = { retries: 200, factor: 1.2, minTimeout: 10, maxTimeout: 200, randomize: true };
/** A lock older than this is a crashed process's: it is taken over. */
const LOCK_STALE_MS = 10_000;

/**
 * The webhook registry in a JSON file beside CLIENTS_FILE (the local folder store), shared by the
 * gateway's instances and the `clients` CLI: every change is made under an exclusive lock
 * (`<file>.lock`) and written whole by an atomic rename, so readers see the old file or the new.
 * At most MAX_WEBHOOKS_PER_CLIENT per client, so the file grows with the registered clients only.
 */
export class FileWebhookRegistry implements WebhookRegistry {
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  async add(endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint> {
    return this.#modify((file) => {
      const owned = Object.values(file.endpoints).filter((stored) => stored.clientId === endpoint.clientId).length;
      if (owned >= MAX_WEBHOOKS_PER_CLIENT) throw limitReached();
      const { id, stored } = storedOf(newWebhookId(), endpoint);
      file.endpoints[id] = stored;
      return { result: endpointOf(id, stored), write: true };
    });
  }

  async list(clientId: string): Promise<readonly WebhookEndpoint[]> {
    return (await this.#all()).filter((endpoint) => endpoint.clientId === clientId);
  }

  async enabled(): Promise<readonly WebhookEndpoint[]> {
    return (await this.#all()).filter((endpoint) => endpoint.enabled);
  }

  async remove(clientId: string, id: string): Promise<boolean> {
    return this.#modify((file) => {
      if (!Object.hasOwn(file.endpoints, id) || file.endpoints[id]?.clientId !== clientId) return { result: false, write: false };
      delete file.endpoints[id];
      return { result: true, write: true };
    });
  }

  async update(clientId: string, id: string, update: WebhookEndpointUpdate): Promise<boolean> {
    return this.#modify((file) => {
      const stored = Object.hasOwn(file.endpoints, id) ? file.endpoints[id] : undefined;
      if (stored?.clientId !== clientId) return { result: false, write: false };
      file.endpoints[id] = updated(stored, update);
      return { result: true, write: true };
    });
  }

  async #all(): Promise<WebhookEndpoint[]> {
    const file = await this.#load();
    return Object.entries(file.endpoints).map(([id, stored]) => endpointOf(id, stored)).sort(byCreation);
  }

  async #modify<T>(change: (file: RegistryFile) => { readonly result: T; readonly write: boolean }): Promise<T> {
    await fs.mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
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
      const file = await this.#load();
      const { result, write } = change(file);
      if (compromised !== undefined) throw new Error(`Lost the lock on ${this.path}: ${compromised.message}`);
      if (write) await this.#save(file);
      return result;
    } finally {
      await release().catch(() => undefined);
    }
  }

  async #load(): Promise<RegistryFile> {
    let text: string;
    try {
      text = await fs.readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, endpoints: Object.create(null) as Record<string, StoredEndpoint> };
      throw error;
    }
    const json = JSON.parse(text) as unknown;
    const problem = fileProblem(json);
    if (problem !== undefined) throw new Error(`Webhook registry ${this.path} is malformed: ${problem}`);
    return { version: 1, endpoints: Object.assign(Object.create(null) as Record<string, StoredEndpoint>, (json as RegistryFile).endpoints) };
  }

  /** Written to a temporary file in the same folder, flushed, and renamed over the registry (mode 0600). */
  async #save(file: RegistryFile): Promise<void> {
    const directory = dirname(this.path);
    const temporary = join(directory, `.${basename(this.path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    const handle = await fs.open(temporary, 'wx', 0o600);
    try {
      try {
        await handle.chmod(0o600);
        await handle.writeFile(`${JSON.stringify({ version: 1, endpoints: file.endpoints }, null, 2)}\n`, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fs.rename(temporary, this.path);
    } catch (error) {
      await fs.rm(temporary, { force: true });
      throw error;
    }
  }
}

function fileProblem(json: unknown): string | undefined {
  if (typeof json !== 'object' || json === null) return 'the top level must be an object';
  const { version, endpoints } = json as Record<string, unknown>;
  if (version !== 1) return `"version" must be 1, found ${JSON.stringify(version)}`;
  if (typeof endpoints !== 'object' || endpoints === null) return '"endpoints" must be an object';
  for (const [id, stored] of Object.entries(endpoints)) {
    if (!isWebhookId(id)) return `invalid endpoint id ${JSON.stringify(id)}`;
    const problem = storedProblem(stored);
    if (problem !== undefined) return `endpoints[${JSON.stringify(id)}].${problem}`;
  }
  return undefined;
}
