import { open } from 'node:fs/promises';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { expect } from 'chai';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { localFolderFixture } from '../support/store-fixtures.js';

/*
 * The local folder store pins a download to the version its headers announced: a file rewritten in
 * place while it is being sent (same name, same size, new bytes) ends the transfer incomplete, and
 * never sends a single byte of the new version under the old ETag.
 */

const MiB = 1024 * 1024;
const size = 32 * MiB;

describe('a local file rewritten in place during its download', function () {
  this.timeout(60_000);
  let fixture: Awaited<ReturnType<typeof localFolderFixture>>;
  let gateway: TestGateway;

  before(async function () {
    fixture = await localFolderFixture();
    await fixture.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'BIG', FileName: 'data/big.bin' })]));
    await fixture.put('data/big.bin', Buffer.alloc(size, 0x61));
    gateway = await startGateway({ store: fixture.store, clients: [{ clientId: 'acme', secret: 'acme-secret-acme-secret' }] });
  });

  after(async function () {
    await gateway?.close();
    await fixture?.cleanup();
  });

  it('never completes with mixed bytes: the transfer is cut, and no byte of the new version was sent', async function () {
    const token = await gateway.tokenFor('acme');
    const received: Buffer[] = [];
    let total = 0;
    const outcome = await new Promise<{ status: number; complete: boolean }>((resolve, reject) => {
      let response: IncomingMessage | undefined;
      let rewritten = false;
      const request = httpGet({ host: '127.0.0.1', port: gateway.port, path: '/download/BIG', agent: false, headers: { authorization: `Bearer ${token}` } }, (incoming) => {
        response = incoming;
        incoming.on('data', (chunk: Buffer) => {
          received.push(chunk);
          total += chunk.length;
          if (total >= 4 * MiB && !rewritten) {
            rewritten = true;
            // Stop reading, rewrite the whole file in place with other bytes, then read on.
            incoming.pause();
            void rewriteInPlace(join(fixture.root, 'data', 'big.bin')).then(() => incoming.resume(), reject);
          }
        });
        incoming.on('error', () => {});
      });
      request.on('error', (error) => {
        if (response === undefined) reject(error);
      });
      request.on('close', () => resolve({ status: response?.statusCode ?? 0, complete: response?.complete ?? false }));
    });

    const body = Buffer.concat(received);
    expect(outcome.status).to.equal(200);
    expect(body.includes(0x62), 'a byte of the new version was sent').to.equal(false);
    expect(outcome.complete && body.length === size, 'a complete response after the file changed').to.equal(false);
  });
});

async function rewriteInPlace(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.write(Buffer.alloc(size, 0x62), 0, size, 0);
  } finally {
    await handle.close();
  }
}
