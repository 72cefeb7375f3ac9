import { join } from 'node:path';
import { DefaultAzureCredential } from '@azure/identity';
import { TableClient } from '@azure/data-tables';
import { ContainerClient } from '@azure/storage-blob';
import type { ChangeLog, ChecksumStore, Clock, ScannerLease, ScanStateStore } from '../../domain/ports.js';
import { BlobScanStateStore } from './blob-scan-state-store.js';
import { BlobScannerLease } from './blob-scanner-lease.js';
import { FileChangeLog } from './file-change-log.js';
import { FileChecksumStore } from './file-checksum-store.js';
import { FileScanStateStore } from './file-scan-state-store.js';
import { FileScannerLease } from './file-scanner-lease.js';
import { MemoryChangeLog } from './memory-change-log.js';
import { MemoryChecksumStore } from './memory-checksum-store.js';
import { MemoryScanStateStore } from './memory-scan-state-store.js';
import { SoleInstanceLease } from './sole-instance-lease.js';
import { TableChangeLog } from './table-change-log.js';
import { TableChecksumStore } from './table-checksum-store.js';
import { tablesFromConnectionString, type TableClientFactory } from './table-storage.js';

/** Where the change feed keeps what the scanner finds, and the lease that lets one instance scan. */
export interface ChangeStores {
  readonly log: ChangeLog;
  readonly checksums: ChecksumStore;
  readonly state: ScanStateStore;
  readonly lease: ScannerLease;
}

/** The account's container for the gateway's own blobs (the lease, the scan state): never the data container. */
export const SYSTEM_CONTAINER = 'dfg-system';
/** The tables of the change log and of the checksums. */
export const CHANGE_LOG_TABLE = 'dfgchanges';
export const CHECKSUM_TABLE = 'dfgchecksums';

/** How long a scanner that stopped renewing keeps the lease: with a renewal every 15 s, a dead one is replaced within a minute. */
export const SCANNER_LEASE_EXPIRY_MS = 45_000;

export interface AzureChangeStoresOptions {
  readonly tables: TableClientFactory;
  /** The system container, on the same account and credential as the data. */
  readonly systemContainer: ContainerClient;
  readonly clock: Clock;
}

/** On Azure: the log and checksums in Table Storage, the state and lease in the system container. */
export function azureChangeStores(options: AzureChangeStoresOptions): ChangeStores {
  return {
    log: new TableChangeLog(options.tables(CHANGE_LOG_TABLE), { clock: options.clock }),
    checksums: new TableChecksumStore(options.tables(CHECKSUM_TABLE), { clock: options.clock }),
    state: new BlobScanStateStore(options.systemContainer),
    lease: new BlobScannerLease({ container: options.systemContainer, clock: options.clock, expiryMs: SCANNER_LEASE_EXPIRY_MS }),
  };
}

/** With a connection string that names (or lets the SDK derive) a table endpoint. */
export function azureChangeStoresFromConnectionString(connectionString: string, tableConnectionString: string, clock: Clock, responseTimeoutMs: number): ChangeStores {
  return azureChangeStores({
    tables: tablesFromConnectionString(tableConnectionString, { responseTimeoutMs }),
    systemContainer: new ContainerClient(connectionString, SYSTEM_CONTAINER, { retryOptions: { maxTries: 3, tryTimeoutInMs: responseTimeoutMs } }),
    clock,
  });
}

/** With `DefaultAzureCredential` (the managed identity): the account URL and its table endpoint. */
export function azureChangeStoresFromAccountUrl(accountUrl: string, tableUrl: string, clock: Clock, responseTimeoutMs: number): ChangeStores {
  const credential = new DefaultAzureCredential();
  return azureChangeStores({
    tables: (tableName) => new TableClient(tableUrl, tableName, credential, { retryOptions: { maxRetries: 2 } }),
    systemContainer: new ContainerClient(`${accountUrl.replace(/\/+$/, '')}/${SYSTEM_CONTAINER}`, credential, {
      retryOptions: { maxTries: 3, tryTimeoutInMs: responseTimeoutMs },
    }),
    clock,
  });
}

/** On the local folder store: everything in one folder (`changes/` beside CLIENTS_FILE). */
export function folderChangeStores(dir: string, clock: Clock): ChangeStores {
  return {
    log: new FileChangeLog({ dir: join(dir, 'log'), clock }),
    checksums: new FileChecksumStore(join(dir, 'checksums.jsonl')),
    state: new FileScanStateStore(join(dir, 'scan-state.jsonl')),
    lease: new FileScannerLease({ file: join(dir, 'scanner.lock'), clock, expiryMs: SCANNER_LEASE_EXPIRY_MS }),
  };
}

/** One process alone (the embedded default): memory, no lease. `clock` fixes the log's origin (default the system clock). */
export function memoryChangeStores(clock?: Clock): ChangeStores {
  return { log: new MemoryChangeLog(clock === undefined ? {} : { clock }), checksums: new MemoryChecksumStore(), state: new MemoryScanStateStore(), lease: new SoleInstanceLease() };
}
