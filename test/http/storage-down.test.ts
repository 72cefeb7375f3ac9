import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { expect } from 'chai';
import { fromConnectionString, type AzureBlobStore } from '../../src/adapters/storage/azure-blob-store.js';
import { StorageUnavailable } from '../../src/domain/errors.js';
import { AZURITE_ACCOUNT, AZURITE_KEY } from '../support/azurite.js';
import { startGateway, testConfig } from '../support/gateway.js';
import { jsonOf, type ErrorBody } from '../support/json.js';
import { rejectionOf } from '../support/rejection.js';

/*
 * Storage that is down must fail fast: every storage call gives up within STORAGE_TIMEOUT_SECONDS,
 * the SDK's retries and back-off included, and /ready answers within its own 2 s budget whatever
 * storage does. Storage here is a loopback server that answers 503 to everything, or accepts
 * connections and never answers, or a port nobody listens on (Azurite stopped). Stores are built
 * as the gateway builds them: the factory with STORAGE_TIMEOUT_SECONDS as the deadline, no
 * retry options of the test's own.
 */

const acme = { clientId: 'acme', secret: 'acme-secret-acme-secret' };

function storeAt(port: number, storageTimeoutSeconds: number): AzureBlobStore {
  const connectionString =
    `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};` +
    `BlobEndpoint=http://127.0.0.1:${port}/${AZURITE_ACCOUNT};`;
  const config = testConfig({ STORAGE_TIMEOUT_SECONDS: String(storageTimeoutSeconds) });
  return fromConnectionString(connectionString, 'vendor', { responseTimeoutMs: config.storageTimeoutSeconds * 1000 });
}

/** Storage that answers every request with 503 Server Busy, counting the requests. */
async function busyStorage(): Promise<{ readonly port: number; readonly requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server: HttpServer = createHttpServer((req, res) => {
    requests += 1;
    req.resume();
    res.writeHead(503, { 'x-ms-error-code': 'ServerBusy', 'content-type': 'application/xml' });
    res.end('<?xml version="1.0" encoding="utf-8"?><Error><Code>ServerBusy</Code><Message>busy</Message></Error>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests: () => requests,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Storage that accepts connections and never answers, counting them. */
async function silentStorage(): Promise<{ readonly port: number; readonly connections: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: TcpServer = createTcpServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

/** A loopback port nobody listens on: connections are refused, as with Azurite stopped. */
async function refusingPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('storage that is down', function () {
  describe('an Azure store whose storage answers 503 to everything', function () {
    it('asks three times within STORAGE_TIMEOUT_SECONDS=1 and reports what storage answered, not the deadline', async function () {
      const storage = await busyStorage();
      try {
        const failure = await rejectionOf(storeAt(storage.port, 1).probe());
        expect(failure).to.be.instanceOf(StorageUnavailable);
        expect((failure as Error).message).to.match(/503 ServerBusy/);
        expect(storage.requests(), 'tries of the one call').to.equal(3);
      } finally {
        await storage.close();
      }
    });

    it('answers /list with 503 storage_unavailable after three tries at the index, at the default STORAGE_TIMEOUT_SECONDS', async function () {
      const storage = await busyStorage();
      const gateway = await startGateway({ store: storeAt(storage.port, 30), clients: [acme] });
      try {
        const token = await gateway.tokenFor('acme');
        const before = storage.requests();
        const response = await gateway.request('GET', '/list', { headers: { authorization: `Bearer ${token}` } });
        expect(response.status).to.equal(503);
        expect(jsonOf<ErrorBody>(response).code).to.equal('storage_unavailable');
        // The SDK's default is four tries backing off 4 s then 12 s: 16 s per call before the gateway heard.
        expect(storage.requests() - before, 'tries at the index').to.equal(3);
      } finally {
        await gateway.close();
        await storage.close();
      }
    });
  });

  describe('an Azure store whose storage accepts connections and never answers', function () {
    it('gives up when STORAGE_TIMEOUT_SECONDS=1 has passed: the deadline ends the call, retries included', async function () {
      const storage = await silentStorage();
      try {
        const failure = await rejectionOf(storeAt(storage.port, 1).getProperties('indexes/acme.csv'));
        expect(failure).to.be.instanceOf(StorageUnavailable);
        expect((failure as Error).message).to.match(/timed out/);
        expect(storage.connections(), 'no retry after the deadline').to.equal(1);
      } finally {
        await storage.close();
      }
    });

    it('leaves /ready answering 503 naming storage within its own budget, at the default STORAGE_TIMEOUT_SECONDS (30 s)', async function () {
      const storage = await silentStorage();
      const gateway = await startGateway({ store: storeAt(storage.port, 30), clients: [acme] });
      try {
        const response = await gateway.request('GET', '/ready');
        expect(response.status).to.equal(503);
        expect(jsonOf(response)).to.deep.equal({ status: 'not_ready', reasons: ['storage'] });
        expect(storage.connections()).to.equal(1);
      } finally {
        await gateway.close();
        await storage.close();
      }
    });
  });

  describe('an Azure store whose storage refuses connections (Azurite stopped)', function () {
    it('answers /ready with 503 naming storage, and /list with 503 storage_unavailable, at the default STORAGE_TIMEOUT_SECONDS', async function () {
      const gateway = await startGateway({ store: storeAt(await refusingPort(), 30), clients: [acme] });
      try {
        const ready = await gateway.request('GET', '/ready');
        expect(ready.status).to.equal(503);
        expect(jsonOf(ready)).to.deep.equal({ status: 'not_ready', reasons: ['storage'] });
        const list = await gateway.get('acme', '/list');
        expect(list.status).to.equal(503);
        expect(jsonOf<ErrorBody>(list).code).to.equal('storage_unavailable');
      } finally {
        await gateway.close();
      }
    });
  });
});
