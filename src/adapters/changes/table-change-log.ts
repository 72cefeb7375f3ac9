import { odata, type TableClient, type TransactionAction } from '@azure/data-tables';
import { changeId, FILE_CHANGE_TYPES, type FileChange, type FileChangeType, type LoggedChange } from '../../domain/changes.js';
import { StorageUnavailable } from '../../domain/errors.js';
import type { ChangeLog, Clock } from '../../domain/ports.js';
import { ensureTable, isStatus, positionKey, queryEntities, safeKey, submitInBatches, tableCall } from './table-storage.js';

/**
 * The change log on Azure Table Storage, in the storage account that holds the files.
 *
 * - One partition per client (`c_<client id>`), row key the zero-padded position: a client's read is
 *   one range query of its own partition, never a scan of other clients' changes.
 * - One meta entity (`meta`/`log`) holds `head` (the last position committed), `horizon` (the
 *   last position pruned) and `origin`. Only rows at or below `head` are read, so a batch being
 *   written is invisible until the meta entity commits it, and every instance reads the same order.
 * - The first instance to find the table without a meta entity creates it (`createEntity`, which
 *   fails with 409 for all but one), its origin the time then, so instances that start together
 *   agree on one origin. A meta entity written before origins existed has origin 0.
 * - The single writer (the scanner's lease holder) writes each client's rows in batch
 *   transactions (100 rows each), then moves `head` with an ETag condition, so a second writer
 *   that lost its lease fails instead of interleaving.
 * - A writer that died between writing rows and moving `head` leaves rows above `head`. Every
 *   writer therefore starts a new *epoch* (recorded in the meta entity before it writes any row,
 *   and again after any failed append) and tags its rows with it; a row counts only when its epoch
 *   is the one in force at its position, so leftovers of a dead writer never surface, even where
 *   the next writer does not overwrite them.
 * - `clients`/`<client id>` entities name the partitions there are, so `prune` can visit each
 *   (pruning deletes rows found before the cut-off, and moves `horizon` to the last one deleted),
 *   and keep `prunedThrough`, the position of that client's last row deleted.
 */
export class TableChangeLog implements ChangeLog {
  readonly #table: TableClient;
  #ready: Promise<void> | undefined;
  /** Whether this instance's epoch is recorded and its last append succeeded. */
  #clean = false;
  #epoch = 0;
  #knownClients: Set<string> | undefined;
  readonly #clock: Clock | undefined;
  /** The origin as last read from the meta entity (it never changes). */
  #origin: number | undefined;

  /** `clock` fixes the origin of a log made in an empty table (its time in milliseconds times 1000); default the system clock. */
  constructor(table: TableClient, options: { readonly clock?: Clock } = {}) {
    this.#table = table;
    this.#clock = options.clock;
  }

  async append(changes: readonly FileChange[]): Promise<readonly LoggedChange[]> {
    if (changes.length === 0) return [];
    await this.#ensure();
    try {
      let meta = await this.#meta();
      if (!this.#clean) {
        this.#epoch = meta.epoch + 1;
        const epochs = [...meta.epochs, [meta.head + 1, this.#epoch] as const];
        meta = await this.#writeMeta({ ...meta, epoch: this.#epoch, epochs });
        this.#clean = true;
      }
      const logged = changes.map((change, i) => ({ ...change, id: changeId(meta.head + 1 + i), position: meta.head + 1 + i }));
      const known = await this.#clients();
      const byPartition = new Map<string, TransactionAction[]>();
      const newClients: TransactionAction[] = [];
      for (const change of logged) {
        const partition = partitionOf(change.clientId);
        let actions = byPartition.get(partition);
        if (actions === undefined) byPartition.set(partition, (actions = []));
        actions.push(['upsert', toEntity(change, this.#epoch), 'Replace']);
        if (!known.has(change.clientId)) {
          known.add(change.clientId);
          // Merged: never wipes the prunedThrough a prune recorded.
          newClients.push(['upsert', { partitionKey: CLIENTS_PARTITION, rowKey: safeKey(change.clientId), clientId: change.clientId }, 'Merge']);
        }
      }
      await submitInBatches(this.#table, newClients);
      for (const actions of byPartition.values()) await submitInBatches(this.#table, actions);
      await this.#writeMeta({ ...meta, head: meta.head + logged.length });
      return logged;
    } catch (error) {
      this.#clean = false;
      this.#knownClients = undefined;
      throw error;
    }
  }

  async read(clientId: string, after: number, limit: number): Promise<readonly LoggedChange[]> {
    await this.#ensure();
    const meta = await this.#meta();
    if (after >= meta.head || limit <= 0) return [];
    const partition = partitionOf(clientId);
    // From the origin at least: every key compared has as many digits as this log's rows.
    const filter = odata`PartitionKey eq ${partition} and RowKey gt ${positionKey(Math.max(meta.origin, after))} and RowKey le ${positionKey(meta.head)}`;
    const found: LoggedChange[] = [];
    for await (const entity of queryEntities<ChangeEntity>(this.#table, filter, undefined, Math.min(1000, limit))) {
      const change = fromEntity(clientId, entity);
      if (change === undefined || entity.epoch !== epochAt(meta.epochs, change.position)) continue;
      found.push(change);
      if (found.length >= limit) break;
    }
    return found;
  }

  async head(): Promise<number> {
    await this.#ensure();
    return (await this.#meta()).head;
  }

  async horizon(): Promise<number> {
    await this.#ensure();
    return (await this.#meta()).horizon;
  }

  async prunedThrough(clientId: string): Promise<number> {
    await this.#ensure();
    const origin = this.#origin ?? (await this.#meta()).origin;
    const pruned = await tableCall('read what the change log pruned', async () => {
      try {
        const entity = await this.#table.getEntity<{ prunedThrough?: number }>(CLIENTS_PARTITION, safeKey(clientId), { queryOptions: { select: ['prunedThrough'] } });
        const position = Number(entity.prunedThrough ?? 0);
        return Number.isSafeInteger(position) ? position : 0;
      } catch (error) {
        if (isStatus(error, 404)) return 0;
        throw error;
      }
    });
    return Math.max(origin, pruned);
  }

  async prune(before: Date): Promise<void> {
    await this.#ensure();
    const meta = await this.#meta();
    let cut = meta.horizon;
    // First what goes, then the horizon, then per client what it lost, then the rows: a reader
    // never finds a row gone without the horizon and its client's prunedThrough saying so.
    const going: Array<{ readonly clientId: string; readonly last: number; readonly rows: TransactionAction[] }> = [];
    for await (const client of queryEntities<{ clientId: string }>(this.#table, odata`PartitionKey eq ${CLIENTS_PARTITION}`, ['clientId'])) {
      const partition = partitionOf(client.clientId);
      const rows: TransactionAction[] = [];
      let last = 0;
      const filter = odata`PartitionKey eq ${partition} and time lt ${before}`;
      for await (const row of queryEntities<object>(this.#table, filter, ['RowKey'])) {
        const rowKey = row.rowKey ?? '';
        const position = Number(rowKey);
        if (!(position <= meta.head)) continue;
        cut = Math.max(cut, position);
        last = Math.max(last, position);
        rows.push(['delete', { partitionKey: partition, rowKey }]);
      }
      if (rows.length > 0) going.push({ clientId: client.clientId, last, rows });
    }
    if (cut !== meta.horizon) {
      // Epochs wholly below the horizon can no longer be read: only the one in force there is kept.
      const epochs = meta.epochs.filter((entry, i) => (meta.epochs[i + 1]?.[0] ?? Infinity) > cut + 1 || entry === meta.epochs.at(-1));
      await this.#writeMeta({ ...meta, horizon: cut, epochs });
    }
    for (const { clientId, last, rows } of going) {
      const recorded = await this.prunedThrough(clientId);
      if (last > recorded) {
        await tableCall('record what the change log pruned', () =>
          this.#table.upsertEntity({ partitionKey: CLIENTS_PARTITION, rowKey: safeKey(clientId), clientId, prunedThrough: last }, 'Merge'),
        );
      }
      await submitInBatches(this.#table, rows);
    }
  }

  #ensure(): Promise<void> {
    this.#ready ??= (async () => {
      await ensureTable(this.#table);
      await this.#meta();
    })().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  async #clients(): Promise<Set<string>> {
    if (this.#knownClients !== undefined) return this.#knownClients;
    const known = new Set<string>();
    for await (const client of queryEntities<{ clientId: string }>(this.#table, odata`PartitionKey eq ${CLIENTS_PARTITION}`, ['clientId'])) {
      known.add(client.clientId);
    }
    this.#knownClients = known;
    return known;
  }

  /** The meta entity; made, with a new origin, when the table has none (or the one another instance made just then). */
  async #meta(): Promise<Meta> {
    const read = (): Promise<Meta | undefined> =>
      tableCall('read the change log head', async () => {
        try {
          return fromMetaEntity(await this.#table.getEntity<MetaEntity>(META_PARTITION, META_ROW));
        } catch (error) {
          if (isStatus(error, 404)) return undefined;
          throw error;
        }
      });
    let meta = await read();
    if (meta === undefined) {
      const origin = (this.#clock?.now().getTime() ?? Date.now()) * 1000;
      await tableCall('create the change log head', async () => {
        try {
          await this.#table.createEntity({ partitionKey: META_PARTITION, rowKey: META_ROW, ...toMetaEntity({ head: origin, horizon: origin, epoch: 0, epochs: [], origin }) });
        } catch (error) {
          // 409: another instance made it first; its origin is the log's.
          if (!isStatus(error, 409)) throw error;
        }
      });
      meta = await read();
      if (meta === undefined) throw new StorageUnavailable('The change log head was created but cannot be read: retry', { retryable: true });
    }
    this.#origin = meta.origin;
    return meta;
  }

  /** Writes the meta entity unless another writer changed it since it was read. */
  async #writeMeta(meta: Meta): Promise<Meta> {
    const entity = { partitionKey: META_PARTITION, rowKey: META_ROW, ...toMetaEntity(meta) };
    try {
      const answer = await this.#table.updateEntity(entity, 'Replace', { etag: meta.etag });
      // Without a new ETag the old one stays: the next write fails its condition, never overwrites.
      return { ...meta, etag: answer.etag ?? meta.etag };
    } catch (error) {
      if (isStatus(error, 409, 412)) {
        throw new StorageUnavailable('Another writer changed the change log: this instance no longer holds the scanner lease', { cause: error, retryable: true });
      }
      return tableCall('write the change log head', () => Promise.reject(error));
    }
  }
}

const META_PARTITION = 'meta';
const META_ROW = 'log';
const CLIENTS_PARTITION = 'clients';

interface Meta {
  readonly etag: string;
  readonly head: number;
  readonly horizon: number;
  readonly epoch: number;
  /** `[first position, epoch]`, by position: the epoch in force from each position on. */
  readonly epochs: readonly (readonly [number, number])[];
  /** Fixed when the meta entity was made: positions start after it. */
  readonly origin: number;
}

interface MetaEntity {
  head: number;
  horizon: number;
  epoch: number;
  epochs: string;
  /** Absent in a meta entity written before origins existed. */
  origin?: number;
}

function fromMetaEntity(entity: MetaEntity & { etag: string }): Meta {
  const origin = Number(entity.origin ?? 0);
  return {
    etag: entity.etag,
    head: Number(entity.head),
    horizon: Number(entity.horizon),
    epoch: Number(entity.epoch),
    epochs: JSON.parse(entity.epochs) as [number, number][],
    origin: Number.isSafeInteger(origin) ? origin : 0,
  };
}

function toMetaEntity(meta: Omit<Meta, 'etag'>): MetaEntity {
  return { head: meta.head, horizon: meta.horizon, epoch: meta.epoch, epochs: JSON.stringify(meta.epochs), origin: meta.origin };
}

interface ChangeEntity {
  type: string;
  time: Date;
  symbol: string;
  fileName: string;
  size: number;
  fileEtag: string;
  uploaded: Date;
  sha256?: string;
  epoch: number;
}

function partitionOf(clientId: string): string {
  return `c_${safeKey(clientId)}`;
}

function epochAt(epochs: readonly (readonly [number, number])[], position: number): number | undefined {
  let found: number | undefined;
  for (const [start, epoch] of epochs) {
    if (start > position) break;
    found = epoch;
  }
  return found;
}

function toEntity(change: LoggedChange, epoch: number): Record<string, unknown> & { partitionKey: string; rowKey: string } {
  return {
    partitionKey: partitionOf(change.clientId),
    rowKey: positionKey(change.position),
    type: change.type,
    time: change.time,
    symbol: change.file.symbol,
    fileName: change.file.fileName,
    size: change.file.size,
    // An entity's own `etag` is the table's; the file's is kept under another name.
    fileEtag: change.file.etag,
    uploaded: change.file.uploaded,
    ...(change.file.sha256 !== undefined && { sha256: change.file.sha256 }),
    epoch,
  };
}

function fromEntity(clientId: string, entity: Partial<ChangeEntity> & { rowKey?: string }): LoggedChange | undefined {
  const position = Number(entity.rowKey);
  const type = entity.type as FileChangeType;
  if (!Number.isSafeInteger(position) || !FILE_CHANGE_TYPES.includes(type) || entity.time === undefined || entity.uploaded === undefined) return undefined;
  const sha256 = entity.sha256;
  return {
    clientId,
    id: changeId(position),
    position,
    type,
    time: asDate(entity.time),
    file: {
      symbol: String(entity.symbol),
      fileName: String(entity.fileName),
      size: Number(entity.size),
      etag: String(entity.fileEtag ?? ''),
      uploaded: asDate(entity.uploaded),
      ...(typeof sha256 === 'string' && { sha256 }),
    },
  };
}

function asDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}
