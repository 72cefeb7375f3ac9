import { expect } from 'chai';
import { createServer, get, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import type { Response } from 'express';
import { flowingContent } from '../../src/http-wire/flowing-content.js';
import { MAX_BATCH_BYTES, streamBody, TransferFailed } from '../../src/http-wire/stream-body.js';

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
  /** The last handler's run: a failed assertion in it fails the test (awaited by `handled`). */
  let lastRun: Promise<unknown> = Promise.resolve();
  const handled = async (): Promise<void> => {
    const outcome = await lastRun;
    if (outcome instanceof Error) throw outcome;
  };

  before(async function () {
    server = createServer((_req, res) => {
      lastRun = handle(res).catch((error: unknown) => error);
    });
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

  /** GETs the body; resolves with its bytes, or with those received before the connection broke. */
  const fetchBody = (): Promise<Buffer> =>
    new Promise((resolve) => {
      const parts: Buffer[] = [];
      get({ host: '127.0.0.1', port, path: '/', agent: false }, (response) => {
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('close', () => resolve(Buffer.concat(parts)));
      }).on('error', () => resolve(Buffer.concat(parts)));
    });

  /** Starts `streamBody` on `res` from a storage stream of the test's own; `metered` sums `onBytes`. */
  const startStreaming = (res: ServerResponse, expectedBytes: number) => {
    res.setHeader('content-length', expectedBytes);
    res.flushHeaders();
    const counts = countWrites(res);
    const storage = new PassThrough();
    const metering = { bytes: 0 };
    const sent = streamBody(res as unknown as Response, flowingContent(storage, (error) => error as Error), expectedBytes, {
      idleTimeoutMs: 10_000,
      onBytes: (count) => (metering.bytes += count),
    });
    return { storage, sent, counts, metering };
  };

  it('writes 33 chunks that storage delivers in one turn in a few writev calls (the last after its end), and every byte once, in order', async function () {
    const chunks = Array.from({ length: 33 }, (_, index) => Buffer.alloc(CHUNK, index));
    const expected = Buffer.concat(chunks);
    let outcome = { sent: 0, writes: 0, metered: 0 };
    handle = async (res) => {
      const { storage, sent, counts, metering } = startStreaming(res, expected.length);
      // All of storage's chunks in one turn, as reads of a socket that is ahead of the client.
      for (const chunk of chunks) storage.write(chunk);
      storage.end();
      outcome = { sent: await sent, writes: counts.writes, metered: metering.bytes };
    };
    const body = await fetchBody();
    await handled();
    expect(outcome.sent).to.equal(expected.length);
    expect(body.equals(expected)).to.equal(true);
    expect(outcome.metered).to.equal(expected.length);
    // One write per 64 KiB chunk before: 33. Now one per batch of at most MAX_BATCH_BYTES.
    expect(outcome.writes).to.be.at.most(Math.ceil(expected.length / MAX_BATCH_BYTES) + 1);
    expect(outcome.writes).to.be.below(chunks.length / 4);
  });

  it('writes a chunk that arrives alone in the next turn, before storage delivers another', async function () {
    const expected = Buffer.alloc(3 * CHUNK, 7);
    handle = async (res) => {
      const { storage, sent, counts } = startStreaming(res, expected.length);
      for (let index = 0; index < 3; index += 1) {
        storage.write(expected.subarray(index * CHUNK, (index + 1) * CHUNK));
        const before = counts.chunksWritten;
        await new Promise((resolve) => setImmediate(resolve));
        await new Promise((resolve) => setImmediate(resolve));
        expect(counts.chunksWritten).to.equal(before + 1);
      }
      storage.end();
      expect(await sent).to.equal(expected.length);
    };
    const body = await fetchBody();
    await handled();
    expect(body.equals(expected)).to.equal(true);
  });

  it('counts nothing of a batch whose client reset the connection before the batch was handed over', async function () {
    let outcome: { failure: unknown; metered: number; chunksWritten: number } | undefined;
    handle = async (res) => {
      const { storage, sent, counts, metering } = startStreaming(res, 8 * CHUNK);
      for (let index = 0; index < 3; index += 1) storage.write(Buffer.alloc(CHUNK, index));
      // The socket is gone before this turn's flush; the response learns it only at its 'close'.
      res.socket?.destroy();
      const failure = await sent.then(
        () => undefined,
        (error: unknown) => error,
      );
      outcome = { failure, metered: metering.bytes, chunksWritten: counts.chunksWritten };
    };
    await fetchBody();
    await handled();
    expect(outcome?.failure).to.be.instanceOf(TransferFailed).with.property('reason', 'aborted');
    expect(outcome?.metered).to.equal(0);
    expect(outcome?.chunksWritten).to.equal(0);
  });

  it('hands over what storage delivered before it failed, counted, and fails the transfer as storage-failed', async function () {
    let outcome: { failure: unknown; metered: number } | undefined;
    handle = async (res) => {
      const { storage, sent, metering } = startStreaming(res, 8 * CHUNK);
      storage.write(Buffer.alloc(CHUNK, 1));
      storage.write(Buffer.alloc(CHUNK, 2));
      storage.destroy(new Error('storage broke off'));
      const failure = await sent.then(
        () => undefined,
        (error: unknown) => error,
      );
      outcome = { failure, metered: metering.bytes };
    };
    const body = await fetchBody();
    await handled();
    expect(outcome?.failure).to.be.instanceOf(TransferFailed).with.property('reason', 'storage-failed');
    expect(outcome?.metered).to.equal(2 * CHUNK);
    expect(body.length).to.be.at.most(2 * CHUNK);
  });
});
