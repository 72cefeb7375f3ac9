import { randomUUID } from 'node:crypto';
import { RestError, type BlockBlobClient, type ContainerClient } from '@azure/storage-blob';
import { StorageUnavailable } from '../../domain/errors.js';
import type { Clock, ScannerLease } from '../../domain/ports.js';

export interface BlobScannerLeaseOptions {
  /** The system container of the account (e.g. `dfg-system`), never the vendor's data container. */
  readonly container: ContainerClient;
  readonly blobName?: string;
  readonly clock: Clock;
  /** How long a holder that stopped renewing keeps the lease (default and most 45 s: Azure's lease is 15–60 s). */
  readonly expiryMs?: number;
}

/**
 * The scanner lease on Azure: a blob lease on `scanner.lease` in the account's system container.
 * The holder renews it (and writes its heartbeat, a time of the gateway's clock, into the blob's
 * metadata) at each call of `acquire`; the storage lease itself lasts `expiryMs`, so a holder that
 * died loses it then. A holder whose heartbeat is older than `expiryMs` by the caller's clock has
 * its lease broken at once (a hung process, or a clock moved by tests).
 */
export class BlobScannerLease implements ScannerLease {
  readonly #blob: BlockBlobClient;
  readonly #container: ContainerClient;
  readonly #clock: Clock;
  readonly #expiryMs: number;
  readonly #holder = randomUUID();
  #leaseId: string | undefined;
  #ready: Promise<void> | undefined;

  constructor(options: BlobScannerLeaseOptions) {
    this.#container = options.container;
    this.#blob = options.container.getBlockBlobClient(options.blobName ?? 'scanner.lease');
    this.#clock = options.clock;
    this.#expiryMs = Math.min(options.expiryMs ?? 45_000, 60_000);
  }

  async acquire(): Promise<boolean> {
    try {
      await this.#ensure();
      if (this.#leaseId !== undefined) {
        try {
          await this.#blob.getBlobLeaseClient(this.#leaseId).renewLease();
          await this.#heartbeat();
          return true;
        } catch (error) {
          if (!isStatus(error, 409, 412)) throw error;
          this.#leaseId = undefined;
        }
      }
      if (await this.#take()) return true;
      const properties = await this.#blob.getProperties();
      const heartbeat = Number(properties.metadata?.['heartbeat']);
      if (!(this.#clock.now().getTime() - heartbeat > this.#expiryMs)) return false;
      // A holder that stopped renewing: its lease is broken, unless it renewed since it was read.
      try {
        await this.#blob.getBlobLeaseClient().breakLease(0, properties.etag === undefined ? {} : { conditions: { ifMatch: properties.etag } });
      } catch (error) {
        if (isStatus(error, 409, 412)) return false;
        throw error;
      }
      return await this.#take();
    } catch (error) {
      this.#leaseId = undefined;
      throw asStorageError(error, 'take the scanner lease');
    }
  }

  async release(): Promise<void> {
    const leaseId = this.#leaseId;
    if (leaseId === undefined) return;
    this.#leaseId = undefined;
    try {
      await this.#blob.getBlobLeaseClient(leaseId).releaseLease();
    } catch (error) {
      // Lost already: nothing to give up.
      if (!isStatus(error, 409, 412)) throw asStorageError(error, 'release the scanner lease');
    }
  }

  async #take(): Promise<boolean> {
    const proposed = randomUUID();
    try {
      await this.#blob.getBlobLeaseClient(proposed).acquireLease(Math.round(this.#expiryMs / 1000));
    } catch (error) {
      if (isStatus(error, 409, 412)) return false;
      throw error;
    }
    this.#leaseId = proposed;
    await this.#heartbeat();
    return true;
  }

  async #heartbeat(): Promise<void> {
    await this.#blob.setMetadata(
      { heartbeat: String(this.#clock.now().getTime()), holder: this.#holder },
      { conditions: { leaseId: this.#leaseId as string } },
    );
  }

  #ensure(): Promise<void> {
    this.#ready ??= (async () => {
      await this.#container.createIfNotExists();
      try {
        await this.#blob.upload('', 0, { conditions: { ifNoneMatch: '*' } });
      } catch (error) {
        if (!isStatus(error, 409, 412)) throw error;
      }
    })().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }
}

function isStatus(error: unknown, ...statuses: number[]): boolean {
  return error instanceof RestError && error.statusCode !== undefined && statuses.includes(error.statusCode);
}

function asStorageError(error: unknown, what: string): unknown {
  if (!(error instanceof RestError)) return error;
  return new StorageUnavailable(`Azure Storage failed to ${what} (${error.statusCode ?? 'no answer'})`, { cause: error, retryable: true });
}
