import { randomBytes } from 'node:crypto';
import type { ContainerClient } from '@azure/storage-blob';
import { AzureBlobStore } from '../../src/adapters/storage/azure-blob-store.js';
import type { Clock } from '../../src/domain/ports.js';
import { createTestContainer, sharedAzurite, TEST_STORE_TIMEOUTS } from './azurite.js';
import { startGateway, type TestGateway } from './gateway.js';
import { buildIndexCsv, buildIndexRow } from './index-csv-builder.js';

/** One file of a subscriber's catalog, as the vendor publishes it. */
export interface PublishedFile {
  readonly symbol: string;
  readonly path: string;
  readonly bytes: Buffer;
}

export interface MirrorGateway {
  readonly gateway: TestGateway;
  readonly container: ContainerClient;
  readonly clientId: string;
  readonly secret: string;
  /** Writes (or overwrites) a data file in storage. */
  publish(path: string, bytes: Buffer): Promise<void>;
  /** Replaces the subscriber's index. */
  setIndex(files: readonly Pick<PublishedFile, 'symbol' | 'path'>[]): Promise<void>;
  close(): Promise<void>;
}

/** `count` files of random bytes (sizes vary so that no two files are alike), under `prefix/`. */
export function publishedFiles(count: number, options: { readonly prefix?: string; readonly size?: number } = {}): PublishedFile[] {
  return Array.from({ length: count }, (_, index) => ({
    symbol: `SYM${index}`,
    path: `${options.prefix ?? 'data'}/${index % 2 === 0 ? 'even' : 'odd'}/file-${index}.bin`,
    bytes: randomBytes((options.size ?? 40_000) + index * 997),
  }));
}

/**
 * The real gateway (createApp, in this process) over a fresh Azurite container holding `files` and
 * an index listing them for one subscriber. Listings are never cached (`LIST_CACHE_SECONDS=0`), so a
 * file changed by a test is seen by the next sync.
 */
export async function startMirrorGateway(
  files: readonly PublishedFile[],
  options: { readonly env?: Readonly<Record<string, string>>; readonly clock?: Clock; readonly clientId?: string } = {},
): Promise<MirrorGateway> {
  const azurite = await sharedAzurite();
  const container = await createTestContainer(azurite.connectionString, 'client-mirror');
  const clientId = options.clientId ?? 'mirror';
  const secret = `secret-${randomBytes(12).toString('hex')}`;
  const publish = async (path: string, bytes: Buffer): Promise<void> => {
    await container.getBlockBlobClient(path).uploadData(bytes);
  };
  const setIndex = async (entries: readonly Pick<PublishedFile, 'symbol' | 'path'>[]): Promise<void> => {
    const csv = buildIndexCsv(entries.map((file) => buildIndexRow({ Symbol: file.symbol, FileName: file.path })));
    await publish(`indexes/${clientId}.csv`, Buffer.from(csv));
  };
  await Promise.all(files.map((file) => publish(file.path, file.bytes)));
  await setIndex(files);
  const gateway = await startGateway({
    store: new AzureBlobStore(container, TEST_STORE_TIMEOUTS),
    clients: [{ clientId, secret }],
    env: { LIST_CACHE_SECONDS: '0', INDEX_REFRESH_SECONDS: '0', ...options.env },
    ...(options.clock !== undefined && { clock: options.clock }),
  });
  return {
    gateway,
    container,
    clientId,
    secret,
    publish,
    setIndex,
    close: async () => {
      await gateway.close();
      await container.delete().catch(() => undefined);
    },
  };
}
