import type { PipelinePolicy } from '@azure/core-rest-pipeline';
import { RestError, TableClient, type TableEntityResult, type TransactionAction } from '@azure/data-tables';
import { StorageUnavailable } from '../../domain/errors.js';

/**
 * What the change adapters share on Azure Table Storage: how a table is reached, how a key is made
 * safe, and how the SDK's errors become domain errors (no `RestError` leaves this folder).
 */

/** Per-call options of every table client: a few tries, each bounded, so no wait is unbounded. */
export interface TableClientOptions {
  readonly responseTimeoutMs?: number;
  readonly maxTries?: number;
  /** Called once per HTTP request sent (tests count storage calls with it). */
  readonly onRequest?: () => void;
}

/** Makes the client of one table; the wiring decides the endpoint and the credential. */
export type TableClientFactory = (tableName: string) => TableClient;

/** Client factory over a connection string that names a `TableEndpoint` (or `UseDevelopmentStorage`). */
export function tablesFromConnectionString(connectionString: string, options: TableClientOptions = {}): TableClientFactory {
  return (tableName) =>
    TableClient.fromConnectionString(connectionString, tableName, {
      allowInsecureConnection: /DefaultEndpointsProtocol=http;|TableEndpoint=http:/i.test(connectionString),
      retryOptions: { maxRetries: Math.max(0, (options.maxTries ?? 3) - 1) },
      ...(options.onRequest !== undefined && { additionalPolicies: [{ policy: countingPolicy(options.onRequest), position: 'perRetry' as const }] }),
    });
}

function countingPolicy(onRequest: () => void): PipelinePolicy {
  return {
    name: 'dfgCountRequests',
    sendRequest: (request, next) => {
      onRequest();
      return next(request);
    },
  };
}

/** The key characters Table Storage refuses (`/ \ # ?`, controls) and `%` are percent-encoded. */
export function safeKey(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    out += code < 0x20 || (code >= 0x7f && code < 0xa0) || char === '/' || char === '\\' || char === '#' || char === '?' || char === '%'
      ? encodeURIComponent(char) || `%${code.toString(16).padStart(2, '0')}`
      : char;
  }
  return out;
}

export function fromSafeKey(key: string): string {
  return decodeURIComponent(key);
}

/**
 * Row keys of positions, zero-padded so that their text order is their number order. The logs made
 * before origins existed have positions of at most 15 digits; a log's origin (milliseconds since
 * 1970 times 1000) has 16 digits, as have all its positions: the keys of one log compare alike.
 */
export function positionKey(position: number): string {
  return position.toString().padStart(15, '0');
}

export function isStatus(error: unknown, ...statuses: number[]): boolean {
  return error instanceof RestError && error.statusCode !== undefined && statuses.includes(error.statusCode);
}

/** Runs a table call, turning the SDK's failures into `StorageUnavailable`. */
export async function tableCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof StorageUnavailable) throw error;
    const status = error instanceof RestError ? error.statusCode : undefined;
    const retryable = status === undefined || status >= 500 || status === 408 || status === 429 || status === 412 || status === 409;
    throw new StorageUnavailable(`Table Storage failed to ${what}${status === undefined ? '' : ` (${status})`}`, { cause: error, retryable });
  }
}

/** Creates the table unless it exists. */
export async function ensureTable(client: TableClient): Promise<void> {
  await tableCall('create a table', async () => {
    try {
      await client.createTable();
    } catch (error) {
      if (!isStatus(error, 409)) throw error;
    }
  });
}

/** Submits `actions` of one partition, at most 100 (Table Storage's bound on a transaction) at a time. */
export async function submitInBatches(client: TableClient, actions: readonly TransactionAction[]): Promise<void> {
  for (let start = 0; start < actions.length; start += 100) {
    const chunk = actions.slice(start, start + 100);
    await tableCall('write a batch', () => client.submitTransaction(chunk));
  }
}

/** Every entity matching `filter`, page by page (`select`: only those properties). */
export async function* queryEntities<T extends object>(
  client: TableClient,
  filter: string,
  select?: string[],
  pageSize = 1000,
): AsyncIterable<TableEntityResult<T>> {
  const pages = client.listEntities<T>({ queryOptions: { filter, ...(select !== undefined && { select }) } }).byPage({ maxPageSize: pageSize });
  for (;;) {
    const page = await tableCall('query', () => pages.next());
    if (page.done === true) return;
    for (const entity of page.value) yield entity;
  }
}
