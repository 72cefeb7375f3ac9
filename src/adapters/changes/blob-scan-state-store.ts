import { RestError, type BlockBlobClient, type ContainerClient } from '@azure/storage-blob';
import { StorageUnavailable } from '../../domain/errors.js';
import type { ScanState, ScanStateStore } from '../../domain/ports.js';
import { scanStateFromJsonLines, scanStateToJsonLines } from './scan-state-json.js';

/**
 * The scan state on Azure: one blob (`scanner/state.jsonl`) in the account's system container
 * (e.g. `dfg-system`), never in the vendor's data container, where listings would show it. It is
 * read when an instance takes the scanner lease over, and replaced whole by scans that found
 * something (some 60 bytes a stored blob and 40 an index row, plus their paths).
 */
export class BlobScanStateStore implements ScanStateStore {
  readonly #container: ContainerClient;
  readonly #blob: BlockBlobClient;
  #ready: Promise<unknown> | undefined;

  constructor(container: ContainerClient, blobName = 'scanner/state.jsonl') {
    this.#container = container;
    this.#blob = container.getBlockBlobClient(blobName);
  }

  async load(): Promise<ScanState | undefined> {
    try {
      return await scanStateFromJsonLines((await this.#blob.downloadToBuffer()).toString('utf8'));
    } catch (error) {
      if (error instanceof RestError && error.statusCode === 404) return undefined;
      throw asStorageError(error, 'read the scan state');
    }
  }

  async save(state: ScanState): Promise<void> {
    try {
      this.#ready ??= this.#container.createIfNotExists().catch((error: unknown) => {
        this.#ready = undefined;
        throw error;
      });
      await this.#ready;
      const body = Buffer.from(await scanStateToJsonLines(state), 'utf8');
      await this.#blob.uploadData(body, { blobHTTPHeaders: { blobContentType: 'application/jsonl' } });
    } catch (error) {
      throw asStorageError(error, 'save the scan state');
    }
  }
}

function asStorageError(error: unknown, what: string): unknown {
  if (!(error instanceof RestError)) return error;
  return new StorageUnavailable(`Azure Storage failed to ${what} (${error.statusCode ?? 'no answer'})`, { cause: error, retryable: true });
}
