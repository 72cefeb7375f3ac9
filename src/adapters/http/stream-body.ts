import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import type { BlobContent } from '../../domain/ports.js';

/**
 * Pipes storage bytes to the response with backpressure. Storage sending more or fewer bytes than
 * the announced `Content-Length` is an error too: the response is destroyed, so the client sees an
 * incomplete transfer instead of a short body that looks complete.
 */
export async function streamBody(res: Response, content: BlobContent, expectedBytes: number): Promise<void> {
  let sent = 0;
  const lengthGuard = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      sent += chunk.length;
      if (sent > expectedBytes) callback(new Error(`storage sent more than the ${expectedBytes} bytes announced`));
      else callback(null, chunk);
    },
    flush(callback) {
      if (sent === expectedBytes) callback();
      else callback(new Error(`storage ended after ${sent} of ${expectedBytes} bytes`));
    },
  });
  await pipeline(content, lengthGuard, res);
}
