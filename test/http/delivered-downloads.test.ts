import { request as httpRequest } from 'node:http';
import { expect } from 'chai';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { BlobContent, BlobReadOptions } from '../../src/domain/ports.js';
import { capturedAudit } from '../support/audit-capture.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';

/*
 * A reader may close its connection as soon as it has Content-Length bytes, before storage's stream
 * has signalled its end (the race behind a flaky audit of "aborted" for a whole download). Every
 * byte was handed to the connection: the download is complete, and the audit trail says so.
 */

const BODY = Buffer.alloc(256 * 1024, 7);

/** Storage that sends the whole body, then keeps its stream open until the read is aborted. */
class LingeringStore extends MemoryBlobStore {
  override async read(path: string, options: BlobReadOptions): Promise<BlobContent> {
    const content = await super.read(path, options);
    if (path.startsWith('indexes/')) return content;
    const signal = options.signal;
    return (async function* lingering() {
      yield* content;
      // No end until the gateway aborts the read (when the response closes).
      await new Promise<void>((resolve) => {
        if (signal === undefined || signal.aborted) resolve();
        else signal.addEventListener('abort', () => resolve(), { once: true });
      });
      throw new Error('read aborted');
    })();
  }
}

/** GETs `path` and destroys the connection the moment Content-Length bytes have arrived. */
function readAllThenClose(gateway: TestGateway, path: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, gateway.baseUrl);
    const req = httpRequest(url, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      const expected = Number(res.headers['content-length']);
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.byteLength;
        if (received >= expected) {
          res.socket.destroy();
          resolve(received);
        }
      });
      res.on('error', () => undefined);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a download whose reader closes once it has every byte', function () {
  let gateway: TestGateway;
  const audited = capturedAudit();

  before(async function () {
    const store = new LingeringStore();
    store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'FILE', FileName: 'data/file.bin' })]));
    store.put('data/file.bin', BODY);
    gateway = await startGateway({ store, clients: [{ clientId: 'acme', secret: 'acme-secret-acme-secret' }], audit: audited.audit });
  });

  after(async function () {
    await gateway?.close();
  });

  it('is audited as completed with every byte sent, though storage had not signalled its end', async function () {
    const received = await readAllThenClose(gateway, '/download/FILE', await gateway.tokenFor('acme'));
    expect(received).to.equal(BODY.length);
    // The record is written when the response closes; wait for that event's effect, bounded.
    for (let turn = 0; audited.downloads().length === 0 && turn < 400; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    const [record] = audited.downloads();
    expect(record).to.include({ symbol: 'FILE', outcome: 'completed', bytesSent: BODY.length, status: 200 });
  });
});
