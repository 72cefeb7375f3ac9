import { createServer, connect, type Server, type Socket } from 'node:net';
import { RestError, type ContainerClient } from '@azure/storage-blob';
import { expect } from 'chai';
import { AzureBlobStore, fromConnectionString } from '../../src/adapters/storage/azure-blob-store.js';
import { ContentChanged, GatewayError, FileNotFound, StorageUnavailable } from '../../src/domain/errors.js';
import {
  createTestContainer,
  FAST_FAILING_PIPELINE,
  sharedAzurite,
  TEST_STORE_TIMEOUTS,
  type RunningAzurite,
} from '../support/azurite.js';
import { rejectionOf } from '../support/rejection.js';

describe('AzureBlobStore on Azurite', () => {
  let azurite: RunningAzurite;
  let container: ContainerClient;
  let store: AzureBlobStore;

  before(async () => {
    azurite = await sharedAzurite();
    container = await createTestContainer(azurite.connectionString, 'azure-blob-store');
    store = new AzureBlobStore(container, TEST_STORE_TIMEOUTS);
  });

  after(async () => {
    await container.delete();
  });

  const put = async (path: string, bytes: Uint8Array | string): Promise<string> => {
    await container.getBlockBlobClient(path).uploadData(Buffer.from(bytes));
    const properties = await store.getProperties(path);
    if (properties === undefined) throw new Error(`Test setup: ${path} was not stored`);
    return properties.etag;
  };

  describe('read', () => {
    it('throws ContentChanged, not a RestError, when If-Match no longer holds (412)', async () => {
      const stale = await put('stale.csv', 'v1');
      await put('stale.csv', 'version 2');

      const error = await rejectionOf(store.read('stale.csv', { ifMatch: stale }));

      expectDomainError(error, ContentChanged);
    });

    it('throws FileNotFound when the blob is deleted between getProperties and read', async () => {
      const etag = await put('deleted.csv', 'x');
      await container.getBlobClient('deleted.csv').delete();

      const error = await rejectionOf(store.read('deleted.csv', { ifMatch: etag }));

      expectDomainError(error, FileNotFound);
    });

    it('throws ContentChanged when the range starts past the end of the blob (416)', async () => {
      const etag = await put('short.csv', 'abc');

      const range = { start: 10, end: 20 };

      const error = await rejectionOf(store.read('short.csv', { ifMatch: etag, range }));

      expectDomainError(error, ContentChanged);
    });
  });

  describe('when the container does not exist', () => {
    const missing = (): AzureBlobStore =>
      fromConnectionString(azurite.connectionString, 'no-such-container', FAST_FAILING_PIPELINE);

    it('getProperties throws a non-retryable StorageUnavailable instead of answering undefined', async () => {
      const error = await rejectionOf(missing().getProperties('a.csv'));

      expectDomainError(error, StorageUnavailable);
      expect(error).to.have.property('retryable', false);
    });

    it('list throws a non-retryable StorageUnavailable', async () => {
      const error = await rejectionOf(drain(missing().list('')));

      expectDomainError(error, StorageUnavailable);
      expect(error).to.have.property('retryable', false);
    });

    it('read throws a non-retryable StorageUnavailable', async () => {
      const error = await rejectionOf(missing().read('a.csv', { ifMatch: '"0x1"' }));

      expectDomainError(error, StorageUnavailable);
      expect(error).to.have.property('retryable', false);
    });
  });

  describe('when nothing listens at the endpoint', () => {
    it('throws a retryable StorageUnavailable from every method', async () => {
      const port = await unusedPort();
      const unreachable = fromConnectionString(
        withPort(azurite.connectionString, port),
        'any-container',
        FAST_FAILING_PIPELINE,
      );

      for (const attempt of [
        () => unreachable.getProperties('a.csv'),
        () => drain(unreachable.list('')),
        () => unreachable.read('a.csv', { ifMatch: '"0x1"' }),
      ]) {
        const error = await rejectionOf(attempt());
        expectDomainError(error, StorageUnavailable);
        expect(error).to.have.property('retryable', true);
      }
    });
  });

  describe('when the connection breaks mid-stream', () => {
    let proxy: CuttableProxy;

    beforeEach(async () => {
      proxy = await startCuttableProxy(new URL(azurite.blobEndpoint).port);
    });

    afterEach(async () => {
      await proxy.close();
    });

    it('rejects the iteration with a retryable StorageUnavailable instead of ending it early', async () => {
      const size = 8 * 1024 * 1024;
      const etag = await put('large.bin', new Uint8Array(size));
      const throughProxy = fromConnectionString(
        withPort(azurite.connectionString, proxy.port),
        container.containerName,
        FAST_FAILING_PIPELINE,
      );
      const content = await throughProxy.read('large.bin', { ifMatch: etag });

      let received = 0;
      const error = await rejectionOf(
        (async () => {
          for await (const chunk of content) {
            received += chunk.byteLength;
            proxy.cutAll();
          }
        })(),
      );

      expectDomainError(error, StorageUnavailable);
      expect(error).to.have.property('retryable', true);
      expect(received).to.be.below(size);
    });
  });
});

function expectDomainError(error: unknown, type: new (...args: never[]) => GatewayError): void {
  expect(error).to.be.instanceOf(type);
  expect(error).to.be.instanceOf(GatewayError);
  expect(error).to.not.be.instanceOf(RestError);
}

/** The same account, reached through another port on the loopback interface. */
function withPort(connectionString: string, port: number): string {
  return connectionString.replace(/BlobEndpoint=http:\/\/[^/]+/, `BlobEndpoint=http://127.0.0.1:${port}`);
}

async function drain(content: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of content) {
    // only the failure matters
  }
}

function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

interface CuttableProxy {
  readonly port: number;
  /** Resets every proxied connection, as a network failure would. */
  cutAll(): void;
  close(): Promise<void>;
}

/** A TCP proxy to Azurite whose connections the test can break at the moment it chooses. */
async function startCuttableProxy(targetPort: string): Promise<CuttableProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  };
  const server: Server = createServer((client) => {
    const upstream = connect(Number(targetPort), '127.0.0.1');
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    cutAll: () => {
      for (const socket of sockets) socket.resetAndDestroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
