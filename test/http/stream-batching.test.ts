import { expect } from 'chai';
import { createServer, get, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import type { Response } from 'express';
import { flowingContent } from '../../src/http-wire/flowing-content.js';
import { MAX_BATCH_BYTES, streamBody } from '../../src/http-wire/stream-body.js';

const KiB = 1024;
const CHUNK = 64 * KiB;

/**
 * How storage's chunks reach the client's socket (src/http-wire/stream-body.ts): the chunks storage
 * delivers in one turn of the event loop go out together, in one `writev`, not one write per 64 KiB
 * chunk (a system call each). Counted on the socket itself: the calls of its `_write` and `_writev`.
 */
describe('streamBody: storage chunks handed to the socket in batches', function () {
  let server: Server;
  let port: number;
  /** What the next request's handler does with its response. */
  let handle: (res: ServerResponse) => Promise<void>;

  before(async function () {
    server = createServer((_req, res) => void handle(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async function () {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** Counts the socket's write operations while `res` is written. */
  const countWrites = (res: ServerResponse): { writes: number; chunksWritten: number } => {
    const socket = res.socket as Socket & { _write: (...args: unknown[]) => void; _writev: (chunks: unknown[], callback: unknown) => void };
    const counts = { writes: 0, chunksWritten: 0 };
    const write = socket._write.bind(socket);
    const writev = socket._writev.bind(socket);
    socket._write = (...args: unknown[]) => {
      counts.writes += 1;
      counts.chunksWritten += 1;
      write(...args);
    };
    socket._writev = (chunks: unknown[], callback: unknown) => {
      counts.writes += 1;
      counts.chunksWritten += chunks.length;
      writev(chunks, callback);
    };
    return counts;
  };

  /** GETs the body; resolves with its bytes. */
  const fetchBody = (): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      get({ host: '127.0.0.1', port, path: '/', agent: false }, (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => resolve(Buffer.concat(parts)));
        response.on('error', reject);
      }).on('error', reject);
    });

  it('writes 33 chunks that storage delivers in one turn in a few writev calls (the last after its end), and every byte once, in order', async function () {
    const chunks = Array.from({ length: 33 }, (_, index) => Buffer.alloc(CHUNK, index));
    const expected = Buffer.concat(chunks);
    let counts = { writes: 0, chunksWritten: 0 };
    let metered = 0;
    let sent: Promise<number> = Promise.resolve(0);
    handle = async (res) => {
      res.setHeader('content-length', expected.length);
      res.flushHeaders();
      counts = countWrites(res);
      const storage = new PassThrough();
      sent = streamBody(res as unknown as Response, flowingContent(storage, (error) => error as Error), expected.length, {
        idleTimeoutMs: 10_000,
        onBytes: (count) => (metered += count),
      });
      // All of storage's chunks in one turn, as reads of a socket that is ahead of the client.
      for (const chunk of chunks) storage.write(chunk);
      storage.end();
      await sent;
    };
    const body = await fetchBody();
    expect(await sent).to.equal(expected.length);
    expect(body.equals(expected)).to.equal(true);
    expect(metered).to.equal(expected.length);
    // One write per 64 KiB chunk before: 33. Now one per batch of at most MAX_BATCH_BYTES.
    expect(counts.writes).to.be.at.most(Math.ceil(expected.length / MAX_BATCH_BYTES) + 1);
    expect(counts.writes).to.be.below(chunks.length / 4);
  });

  it('still writes a chunk that arrives alone at once, in the turn after it arrived', async function () {
    const expected = Buffer.alloc(3 * CHUNK, 7);
    let counts = { writes: 0, chunksWritten: 0 };
    let sent: Promise<number> = Promise.resolve(0);
    handle = async (res) => {
      res.setHeader('content-length', expected.length);
      res.flushHeaders();
      counts = countWrites(res);
      const storage = new PassThrough();
      sent = streamBody(res as unknown as Response, flowingContent(storage, (error) => error as Error), expected.length, { idleTimeoutMs: 10_000 });
      // One chunk per turn: each is its own batch, written before the next arrives.
      for (let index = 0; index < 3; index += 1) {
        storage.write(expected.subarray(index * CHUNK, (index + 1) * CHUNK));
        const before = counts.chunksWritten;
        await new Promise((resolve) => setImmediate(resolve));
        await new Promise((resolve) => setImmediate(resolve));
        expect(counts.chunksWritten).to.equal(before + 1);
      }
      storage.end();
      await sent;
    };
    const body = await fetchBody();
    expect(await sent).to.equal(expected.length);
    expect(body.equals(expected)).to.equal(true);
  });
});
