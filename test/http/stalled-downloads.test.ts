import { get as httpGet, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { expect } from 'chai';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { BlobContent, BlobProperties, BlobReadOptions, BlobStore, BlobSummary } from '../../src/domain/ports.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { captureLog, type CapturedLog } from '../support/log-capture.js';

/*
 * A download that makes no progress is cut after DOWNLOAD_IDLE_TIMEOUT_SECONDS (1 s here), whichever
 * side stopped: the subscriber (stopped reading) or storage (stopped sending). The client then sees
 * an incomplete transfer, and the server has released the socket and the storage read.
 */

const MiB = 1024 * 1024;
const client = { clientId: 'acme', secret: 'acme-secret-acme-secret' };

/** Wraps a store; reads can be made to freeze after their first chunk, property reads to wait. */
class ControllableStore implements BlobStore {
  freezeReads = false;
  /** Reads of data files (index reads not counted). */
  reads = 0;
  readsEnded = 0;
  propertiesGate: Promise<void> | undefined;
  #propertiesRequested: () => void = () => {};
  /** Resolves once a data file's properties have been asked for. */
  readonly propertiesRequested = new Promise<void>((resolve) => (this.#propertiesRequested = resolve));

  constructor(private readonly inner: MemoryBlobStore) {}

  async getProperties(path: string): Promise<BlobProperties | undefined> {
    if (!path.startsWith('indexes/')) {
      this.#propertiesRequested();
      await this.propertiesGate;
    }
    return this.inner.getProperties(path);
  }

  list(prefix: string): AsyncIterable<BlobSummary> {
    return this.inner.list(prefix);
  }

  existing(paths: readonly string[]): Promise<ReadonlyMap<string, BlobSummary>> {
    return this.inner.existing(paths);
  }

  probe(): Promise<void> {
    return this.inner.probe();
  }

  async read(path: string, options: BlobReadOptions): Promise<BlobContent> {
    if (!path.startsWith('indexes/')) this.reads += 1;
    const content = await this.inner.read(path, options);
    if (!this.freezeReads || path.startsWith('indexes/')) return content;
    const store = this;
    // The first chunk, then nothing: storage frozen mid-body. Ends only when the read is aborted.
    return (async function* frozen() {
      try {
        for await (const chunk of content) {
          yield chunk;
          break;
        }
        await new Promise<void>((_resolve, reject) => {
          options.signal?.addEventListener('abort', () => reject(options.signal?.reason), { once: true });
        });
      } finally {
        store.readsEnded += 1;
      }
    })();
  }
}

interface Outcome {
  readonly status: number;
  readonly received: number;
  readonly complete: boolean;
}

/**
 * GET that reads `readBytes`, then stops reading until `resumeWhen` settles; resolves when the
 * connection closes. (A reader that does not read cannot see the server's close until it reads
 * again: TCP delivers the end after the bytes already sent.)
 */
function download(port: number, token: string, readBytes = Number.POSITIVE_INFINITY, resumeWhen: Promise<unknown> = Promise.resolve()): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    let response: IncomingMessage | undefined;
    let received = 0;
    let paused = false;
    const request = httpGet({ host: '127.0.0.1', port, path: '/download/BIG', agent: false, headers: { authorization: `Bearer ${token}` } }, (incoming) => {
      response = incoming;
      incoming.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received >= readBytes && !paused) {
          paused = true;
          incoming.pause();
          void resumeWhen.then(() => incoming.resume());
        }
      });
      incoming.on('error', () => {});
    });
    request.on('error', (error) => {
      if (response === undefined) reject(error);
    });
    request.on('close', () => resolve({ status: response?.statusCode ?? 0, received, complete: response?.complete ?? false }));
  });
}

describe('downloads that make no progress (DOWNLOAD_IDLE_TIMEOUT_SECONDS)', function () {
  let store: ControllableStore;
  let gateway: TestGateway;
  let token: string;
  let log: CapturedLog;

  beforeEach(async function () {
    log = captureLog('debug');
    const memory = new MemoryBlobStore();
    memory.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'BIG', FileName: 'data/big.bin' })]));
    memory.put('data/big.bin', new Uint8Array(64 * MiB));
    store = new ControllableStore(memory);
    gateway = await startGateway({ store, clients: [client], logger: log.logger, env: { DOWNLOAD_IDLE_TIMEOUT_SECONDS: '1' } });
    token = await gateway.tokenFor(client.clientId);
  });

  afterEach(async function () {
    await gateway?.close();
  });

  describe('when the subscriber stops reading', function () {
    it('cuts the transfer: the server gives up the connection, and the client, reading again, sees it incomplete', async function () {
      const cut = log.waitFor((entry) => entry['msg'] === 'download cut: the client stopped reading');
      const outcome = await download(gateway.port, token, 1 * MiB, cut);
      expect((await cut)['reason']).to.equal('reader-idle');
      expect(outcome.status).to.equal(200);
      expect(outcome.complete).to.equal(false);
      expect(outcome.received).to.be.below(64 * MiB);
    });
  });

  describe('when storage stops sending mid-body', function () {
    it('cuts the transfer: the client sees it incomplete, and the storage read is aborted', async function () {
      store.freezeReads = true;
      const outcome = await download(gateway.port, token);
      expect(outcome.status).to.equal(200);
      expect(outcome.complete).to.equal(false);
      expect(outcome.received).to.be.below(64 * MiB);
      const line = await log.waitFor((entry) => entry['reason'] === 'storage-idle');
      expect(line['msg']).to.equal('download failed mid-stream; connection destroyed');
      expect(store.readsEnded).to.equal(1);
    });
  });

  describe('when the subscriber leaves while storage is slow to answer', function () {
    it('never starts the storage read, and logs no error', async function () {
      let release: () => void = () => {};
      store.propertiesGate = new Promise((resolve) => (release = resolve));
      const left = log.waitFor((entry) => entry['msg'] === 'client left before the download was decided');
      const socket = connect(gateway.port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(`GET /download/BIG HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`);
      // Once the gateway is waiting on storage (its property read is held), the subscriber hangs up.
      await store.propertiesRequested;
      const noticed = log.waitFor((entry) => entry['msg'] === 'request aborted');
      socket.destroy();
      // The gateway has seen the connection go (the request log writes its line on its close).
      await noticed;
      release();
      await left;
      expect(store.reads).to.equal(0);
      expect(log.lines.filter((line) => Number(line['level']) >= 50)).to.deep.equal([]);
    });
  });
});
