import type { Response } from 'express';
import type { BlobContent } from '../../domain/ports.js';

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
  const iterator = content[Symbol.asyncIterator]();
  let sent = 0;
  let ended: TransferFailed | undefined;
  const onClose = (): void => {
    ended ??= new TransferFailed('aborted', `the client went away after ${sent} of ${expectedBytes} bytes`);
  };
  res.once('close', onClose);
  // The socket's own inactivity timer: neither reads nor writes for the whole span.
  res.setTimeout(options.idleTimeoutMs, () => {
    ended ??= res.writableNeedDrain
      ? new TransferFailed('reader-idle', `the client read nothing for ${options.idleTimeoutMs} ms`)
      : new TransferFailed('storage-idle', `storage sent nothing for ${options.idleTimeoutMs} ms`);
    res.destroy(ended);
  });
  try {
    for (;;) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await iterator.next();
      } catch (error) {
        throw ended ?? new TransferFailed('storage-failed', `storage failed after ${sent} of ${expectedBytes} bytes`, { cause: error });
      }
      // A closed response aborts the storage read, which may then end or fail: either way, the cause is the close.
      if (ended !== undefined) throw ended;
      if (next.done === true) break;
      const chunk = next.value;
      sent += chunk.byteLength;
      if (sent > expectedBytes) throw new TransferFailed('length-mismatch', `storage sent more than the ${expectedBytes} bytes announced`);
      options.onBytes?.(chunk.byteLength);
      if (!res.write(chunk)) await drainedOrClosed(res);
      if (ended !== undefined) throw ended;
    }
    if (sent !== expectedBytes) {
      throw new TransferFailed('length-mismatch', `storage ended after ${sent} of ${expectedBytes} bytes`);
    }
    await endResponse(res);
    if (!res.writableFinished) throw ended ?? new TransferFailed('aborted', 'the client went away before the end of the response');
    return sent;
  } catch (error) {
    res.destroy();
    // Stops the storage read (closes the file, releases the storage connection).
    await iterator.return?.().catch(() => undefined);
    throw error;
  } finally {
    res.off('close', onClose);
    // The socket may serve the next request of a keep-alive connection.
    res.socket?.setTimeout(0);
  }
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
