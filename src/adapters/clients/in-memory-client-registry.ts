import type { ClientRecord, ClientRegistry } from '../../domain/ports.js';

/** A client registry held in memory: for tests, and for the demo client of the embedded default. */
export class InMemoryClientRegistry implements ClientRegistry {
  private readonly clients = new Map<string, ClientRecord>();

  constructor(records: Iterable<ClientRecord> = []) {
    for (const record of records) this.add(record);
  }

  /** Registers `record`, replacing any client with the same id. */
  add(record: ClientRecord): this {
    this.clients.set(record.clientId, { ...record });
    return this;
  }

  /** Unregisters the client with this id, if there is one. */
  remove(clientId: string): this {
    this.clients.delete(clientId);
    return this;
  }

  async find(clientId: string): Promise<ClientRecord | undefined> {
    return this.clients.get(clientId);
  }

  async findByAccessKey(accessKeyId: string): Promise<ClientRecord | undefined> {
    return [...this.clients.values()].find((client) => client.accessKeyIds?.includes(accessKeyId) === true);
  }

  async all(): Promise<readonly ClientRecord[]> {
    return [...this.clients.values()];
  }

  async problem(): Promise<string | undefined> {
    return undefined;
  }
}
