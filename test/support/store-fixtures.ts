import { mkdir, mkdtemp, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AzureBlobStore } from '../../src/adapters/storage/azure-blob-store.js';
import { LocalFolderBlobStore } from '../../src/adapters/storage/local-folder-blob-store.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { BlobStoreFixture } from '../contract/blob-store-contract.js';
import { createTestContainer, sharedAzurite, TEST_STORE_TIMEOUTS } from './azurite.js';

export type { BlobStoreFixture };

/** An empty in-memory store. */
export async function memoryFixture(): Promise<BlobStoreFixture> {
  const store = new MemoryBlobStore();
  return {
    store,
    put: async (path, bytes, props) => store.put(path, bytes, props),
    remove: async (path) => store.delete(path),
    cleanup: async () => {},
    capabilities: { httpMetadata: true },
  };
}

/** An empty folder under the system temp dir; writes are atomic renames, as a vendor's sync would do. */
export async function localFolderFixture(): Promise<BlobStoreFixture & { readonly root: string }> {
  // root/ is the store; outside/ holds what symlinks must not reach; staging/ makes writes atomic.
  const base = await mkdtemp(join(tmpdir(), 'local-folder-blob-store-'));
  const root = join(base, 'root');
  const outside = join(base, 'outside');
  const staging = join(base, 'staging');
  await Promise.all([root, outside, staging].map((folder) => mkdir(folder)));
  await writeFile(join(outside, 'secret.txt'), 'secret');
  let writes = 0;
  const inRoot = (path: string): string => join(root, ...path.split('/'));
  const link = async (target: string, linkPath: string): Promise<void> => {
    await mkdir(dirname(inRoot(linkPath)), { recursive: true });
    await symlink(target, inRoot(linkPath));
  };

  return {
    root,
    store: new LocalFolderBlobStore(root),
    put: async (path, bytes) => {
      writes += 1;
      const staged = join(staging, String(writes));
      await writeFile(staged, bytes);
      await mkdir(dirname(inRoot(path)), { recursive: true });
      await rename(staged, inRoot(path));
    },
    remove: (path) => unlink(inRoot(path)),
    cleanup: () => rm(base, { recursive: true, force: true }),
    capabilities: {
      httpMetadata: false,
      symlinks: {
        toFileOutsideRoot: (linkPath) => link(join(outside, 'secret.txt'), linkPath),
        toFolderOutsideRoot: (linkPath) => link(outside, linkPath),
        toFileInsideRoot: (linkPath, targetPath) => link(inRoot(targetPath), linkPath),
      },
    },
  };
}

/** A new container, unique to the caller, on the Azurite shared by the test run. */
export async function azuriteFixture(prefix: string): Promise<BlobStoreFixture & { readonly connectionString: string; readonly containerName: string }> {
  const azurite = await sharedAzurite();
  const container = await createTestContainer(azurite.connectionString, prefix);
  return {
    connectionString: azurite.connectionString,
    containerName: container.containerName,
    store: new AzureBlobStore(container, TEST_STORE_TIMEOUTS),
    put: async (path, bytes, props = {}) => {
      await container.getBlockBlobClient(path).uploadData(Buffer.from(bytes), {
        blobHTTPHeaders: {
          ...(props.contentType !== undefined && { blobContentType: props.contentType }),
          ...(props.contentDisposition !== undefined && { blobContentDisposition: props.contentDisposition }),
          ...(props.contentEncoding !== undefined && { blobContentEncoding: props.contentEncoding }),
          ...(props.contentLanguage !== undefined && { blobContentLanguage: props.contentLanguage }),
          ...(props.cacheControl !== undefined && { blobCacheControl: props.cacheControl }),
        },
        ...(props.metadata !== undefined && { metadata: { ...props.metadata } }),
      });
    },
    remove: async (path) => {
      await container.getBlobClient(path).delete();
    },
    cleanup: async () => {
      await container.delete();
    },
    capabilities: { httpMetadata: true },
  };
}

/** The three adapters every storage-facing HTTP suite runs against. */
export const storeFixtures: ReadonlyArray<{ readonly name: string; readonly create: (prefix: string) => Promise<BlobStoreFixture> }> = [
  { name: 'in-memory store', create: () => memoryFixture() },
  { name: 'local folder store', create: () => localFolderFixture() },
  { name: 'Azure Blob store on Azurite', create: (prefix) => azuriteFixture(prefix) },
];
