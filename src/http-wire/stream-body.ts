import type { Response } from 'express';
import type { BlobContent } from '../domain/ports.js';
import { flowingSourceOf, type FlowingSource } from './flowing-content.js';

/** Why a transfer ended before its last byte. */
export type TransferFailure = 'aborted' | 'reader-idle' | 'storage-idle' | 'storage-failed' | 'length-mismatch';

/** A body that could not be sent whole; the connection has been destroyed. */
export class TransferFailed extends Error {
  constructor(
    readonly reason: TransferFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * Sends storage bytes to the response with backpressure: the next chunk is asked of storage only
 * once the socket has taken the last one. Resolves with the bytes sent once the response is
 * complete. Whatever stops the transfer short destroys the connection, so the client sees an
 * incomplete transfer instead of a short body that looks complete:
 *
 * - no byte moves on the socket for `idleTimeoutMs`: a reader that stopped reading, or storage that
 *   stopped sending (told apart by whether the socket still has unsent bytes);
 * - storage failing, or sending more or fewer bytes than the announced `Content-Length`;
 * - the client going away.
 *
 * `signal` must abort the storage read (the caller aborts it when the response closes), so that a
 * pending wait for storage ends with the connection. `onBytes` is told of every chunk handed to
 * the socket (for the audit trail and metrics).
 */
export async function streamBody(
  res: Response,
  content: BlobContent,
  expectedBytes: number,
  options: { readonly idleTimeoutMs: number; readonly onBytes?: (count: number) => void },
): Promise<number> {
  const transfer: Transfer = { sent: 0, ended: undefined };
  // A client that closes once every byte was handed to the socket got the whole body (a reader may
  // close as soon as it has Content-Length bytes, before storage's stream has signalled its end).
  const onClose = (): void => {
    if (transfer.sent < expectedBytes) {
      transfer.ended ??= new TransferFailed('aborted', `the client went away after ${transfer.sent} of ${expectedBytes} bytes`);
    }
  };
  res.once('close', onClose);
  // The socket's own inactivity timer: neither reads nor writes for the whole span.
  res.setTimeout(options.idleTimeoutMs, () => {
    transfer.ended ??= res.writableNeedDrain
      ? new TransferFailed('reader-idle', `the client read nothing for ${options.idleTimeoutMs} ms`)
      : new TransferFailed('storage-idle', `storage sent nothing for ${options.idleTimeoutMs} ms`);
    res.destroy(transfer.ended);
  });
  try {
    const flowing = flowingSourceOf(content);
    if (flowing === undefined) await sendIterated(res, content, expectedBytes, transfer, options.onBytes);
    else await sendFlowing(res, flowing, expectedBytes, transfer, options.onBytes);
    if (transfer.sent !== expectedBytes) {
      throw new TransferFailed('length-mismatch', `storage ended after ${transfer.sent} of ${expectedBytes} bytes`);
    }
    // Every byte was handed to the socket; a response the client already closed has nothing left to end.
    if (!res.destroyed) await endResponse(res);
    return transfer.sent;
  } catch (error) {
    res.destroy();
    throw error;
  } finally {
    res.off('close', onClose);
    // The socket may serve the next request of a keep-alive connection.
    res.socket?.setTimeout(0);
  }
}

interface Transfer {
  sent: number;
  /** Why the transfer must stop, once something outside the loop (the client, the idle timer) said so. */
  ended: TransferFailed | undefined;
}

/** Bytes that would overflow the announced `Content-Length`. */
function overflow(expectedBytes: number): TransferFailed {
  return new TransferFailed('length-mismatch', `storage sent more than the ${expectedBytes} bytes announced`);
}

/**
 * Any content: the next chunk is asked for once the socket has taken the last one. Returning early
 * from the iteration stops the storage read (closes the file, releases the storage connection).
 */
async function sendIterated(
  res: Response,
  content: BlobContent,
  expectedBytes: number,
  transfer: Transfer,
  onBytes: ((count: number) => void) | undefined,
): Promise<void> {
  const iterator = content[Symbol.asyncIterator]();
  try {
    for (;;) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await iterator.next();
      } catch (error) {
        // The client closed after the whole body, and its close aborted the storage read: done.
        if (transfer.ended === undefined && transfer.sent === expectedBytes && res.destroyed) return;
        throw transfer.ended ?? new TransferFailed('storage-failed', `storage failed after ${transfer.sent} of ${expectedBytes} bytes`, { cause: error });
      }
      // A closed response aborts the storage read, which may then end or fail: either way, the cause is the close.
      if (transfer.ended !== undefined) throw transfer.ended;
      if (next.done === true) return;
      const chunk = next.value;
      transfer.sent += chunk.byteLength;
      if (transfer.sent > expectedBytes) throw overflow(expectedBytes);
      onBytes?.(chunk.byteLength);
      if (!res.write(chunk)) await drainedOrClosed(res);
      if (transfer.ended !== undefined) throw transfer.ended;
    }
  } catch (error) {
    res.destroy();
    await iterator.return?.().catch(() => undefined);
    throw error;
  }
}

/**
 * A batch is handed to the socket once it holds this many bytes, without waiting for the end of the
 * turn. It bounds what one download holds besides the socket's own buffer: at most this, and one
 * chunk more, on top of the socket's high-water mark (1 MiB on the gateway's server).
 */
export const MAX_BATCH_BYTES = 512 * 1024;

/**
 * A Node stream, in flowing mode: the chunks storage delivers in one turn of the event loop (a read
 * of its socket takes 64 KiB, and one turn reads it several times when storage is ahead) are handed
 * to the socket together, in one `writev`, once that turn's reads are done (`setImmediate`). One
 * write per chunk cost a system call per 64 KiB, the larger part of the kernel's time per GiB.
 * A batch that reaches `MAX_BATCH_BYTES` goes at once. Storage is paused only while the socket
 * holds bytes it did not take over its high-water mark (what `stream.pipe` does), with no promise
 * per chunk. Bytes are counted (`transfer.sent`, `onBytes`) as a batch is handed to an open
 * socket; a batch the client did not stay for is dropped uncounted. Settles once the stream has
 * ended and its last batch is handed over, or failed (what it delivered before is handed over
 * first), or the transfer had to stop; the stream is destroyed on every way out but its end.
 */
function sendFlowing(
  res: Response,
  source: FlowingSource,
  expectedBytes: number,
  transfer: Transfer,
  onBytes: ((count: number) => void) | undefined,
): Promise<void> {
  const { stream } = source;
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    /** Chunks received and not yet handed to the socket, and their bytes. */
    let batch: Buffer[] = [];
    let batchBytes = 0;
    let scheduledFlush: NodeJS.Immediate | undefined;
    const cleanUp = (): void => {
      settled = true;
      if (scheduledFlush !== undefined) clearImmediate(scheduledFlush);
      scheduledFlush = undefined;
      batch = [];
      batchBytes = 0;
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onStreamClose);
      res.off('drain', onDrain);
      res.off('close', onResponseClose);
    };
    const fail = (failure: Error): void => {
      if (settled) return;
      cleanUp();
      stream.destroy();
      reject(failure);
    };
    /**
     * Hands the batch to the socket, corked: one `writev`. A client reset is seen by the socket in
     * the turn's poll phase and by the response only at its 'close', after this turn's flush: a
     * destroyed socket, or none, takes nothing, and its bytes are not counted.
     */
    const handOverBatch = (): void => {
      const chunks = batch;
      batch = [];
      batchBytes = 0;
      if (chunks.length === 0 || res.destroyed || res.socket === null || res.socket.destroyed) return;
      res.cork();
      for (const chunk of chunks) {
        transfer.sent += chunk.byteLength;
        onBytes?.(chunk.byteLength);
        res.write(chunk);
      }
      res.uncork();
    };
    const flush = (): void => {
      if (scheduledFlush !== undefined) clearImmediate(scheduledFlush);
      scheduledFlush = undefined;
      if (settled) return;
      handOverBatch();
      // Pausing until the 'drain' of bytes the socket already took would stop and start reading
      // storage's socket for every batch.
      if (res.writableNeedDrain && res.writableLength > 0) stream.pause();
    };
    const onData = (chunk: Buffer): void => {
      if (transfer.sent + batchBytes + chunk.byteLength > expectedBytes) {
        // The bytes within the announced length go first; the chunk past it never does.
        handOverBatch();
        return fail(overflow(expectedBytes));
      }
      batch.push(chunk);
      batchBytes += chunk.byteLength;
      if (batchBytes >= MAX_BATCH_BYTES) flush();
      else scheduledFlush ??= setImmediate(flush);
    };
    const onDrain = (): void => {
      stream.resume();
    };
    const onEnd = (): void => {
      if (settled) return;
      handOverBatch();
      cleanUp();
      if (transfer.ended !== undefined) reject(transfer.ended);
      else resolve();
    };
    const onError = (error: unknown): void => {
      if (settled) return;
      handOverBatch();
      fail(transfer.ended ?? new TransferFailed('storage-failed', `storage failed after ${transfer.sent} of ${expectedBytes} bytes`, { cause: source.translate(error) }));
    };
    // The client closed after the whole body was handed to the socket: done, storage's end or not.
    const deliveredBeforeClose = (): boolean => {
      if (transfer.ended !== undefined || transfer.sent !== expectedBytes || !res.destroyed) return false;
      cleanUp();
      stream.destroy();
      resolve();
      return true;
    };
    // Destroyed without an error or an end (its request aborted): as a failure, unless the client left first.
    const onStreamClose = (): void => {
      if (settled) return;
      handOverBatch();
      if (deliveredBeforeClose()) return;
      fail(transfer.ended ?? new TransferFailed('storage-failed', `storage closed the body after ${transfer.sent} of ${expectedBytes} bytes`));
    };
    // The client left, or the idle timer destroyed the response: `transfer.ended` says which.
    const onResponseClose = (): void => {
      if (deliveredBeforeClose()) return;
      fail(transfer.ended ?? new TransferFailed('aborted', `the client went away after ${transfer.sent} of ${expectedBytes} bytes`));
    };
    if (res.destroyed) return onResponseClose();
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
    stream.once('close', onStreamClose);
    res.on('drain', onDrain);
    res.once('close', onResponseClose);
  });
}

/** Waits for the socket to take the buffered bytes, or for the response to close; no listener is left behind. */
function drainedOrClosed(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Ends the response and waits until it is handed to the socket, or closed. */
function endResponse(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('finish', done);
      res.off('close', done);
      resolve();
    };
    res.on('finish', done);
    res.on('close', done);
    res.end();
  });
}
