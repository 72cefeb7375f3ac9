import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable, Transform, type TransformCallback } from 'node:stream';

/** One request that went through the proxy, and the status the gateway answered. */
export interface ProxiedExchange {
  readonly method: string;
  readonly path: string;
  readonly requestHeaders: IncomingHttpHeaders;
  readonly status: number;
  readonly responseHeaders: IncomingHttpHeaders;
}

/**
 * How to tamper with one answer: a transform for its body (and headers to change), or undefined to
 * pass it through. `index` counts the exchanges so far, from 0.
 */
export type Tamper = (exchange: ProxiedExchange, index: number) => Tampering | undefined;

export interface Tampering {
  /** Passes the body through this transform. */
  readonly body?: Transform;
  /** Headers to set; a header given as `undefined` is removed. */
  readonly headers?: OutgoingHttpHeaders;
  /** Sends this instead of the gateway's body (with no `Content-Length` unless `headers` sets one). */
  readonly replaceBody?: Readable;
  /** Sends the gateway's whole body rewritten by this function, with its `Content-Length` set to match. */
  readonly rewrite?: (body: Buffer) => Buffer | string;
  /** Sends this many bytes of the body, then closes the connection (the client sees a broken transfer). */
  readonly cutAfter?: number;
}

export interface TamperingProxy {
  readonly url: string;
  readonly exchanges: ProxiedExchange[];
  /** The exchanges whose path starts with `/download/`. */
  downloads(): ProxiedExchange[];
  close(): Promise<void>;
}

/**
 * An HTTP proxy in front of the real gateway that records every exchange and lets a test corrupt,
 * stall or cut answers: the faults a network (or a broken middlebox) causes and the gateway cannot.
 */
export async function startTamperingProxy(targetPort: number, tamper: Tamper = () => undefined): Promise<TamperingProxy> {
  const exchanges: ProxiedExchange[] = [];
  const server: Server = createServer((req, res) => {
    const upstream = httpRequest(
      { host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: req.headers, agent: false },
      (answer) => {
        const exchange: ProxiedExchange = {
          method: req.method ?? '',
          path: req.url ?? '',
          requestHeaders: req.headers,
          status: answer.statusCode ?? 0,
          responseHeaders: answer.headers,
        };
        const index = exchanges.length;
        exchanges.push(exchange);
        const change = tamper(exchange, index);
        const headers: OutgoingHttpHeaders = { ...answer.headers };
        if (change?.replaceBody !== undefined || change?.rewrite !== undefined) delete headers['content-length'];
        for (const [name, value] of Object.entries(change?.headers ?? {})) {
          if (value === undefined) delete headers[name];
          else headers[name] = value;
        }
        if (change?.rewrite !== undefined) {
          const rewrite = change.rewrite;
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.once('end', () => {
            const body = Buffer.from(rewrite(Buffer.concat(chunks)));
            res.writeHead(answer.statusCode ?? 502, { ...headers, 'content-length': String(body.length) });
            res.end(body);
          });
          return;
        }
        res.writeHead(answer.statusCode ?? 502, headers);
        if (change?.replaceBody !== undefined) {
          const replacement = change.replaceBody;
          answer.destroy();
          replacement.pipe(res);
          res.once('close', () => replacement.destroy());
          return;
        }
        if (change?.cutAfter !== undefined) sendThenClose(answer, res, change.cutAfter);
        else if (change?.body === undefined) answer.pipe(res);
        else answer.pipe(change.body).pipe(res);
        const cut = (): void => {
          answer.destroy();
          res.destroy();
        };
        change?.body?.once('error', cut);
        res.once('close', () => answer.destroy());
      },
    );
    upstream.once('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    downloads: () => exchanges.filter((exchange) => exchange.path.startsWith('/download/')),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Changes nothing, and keeps each answer's body, chunk by chunk, at `bodies[index]` (for the contract check). */
export function recordingBodies(bodies: Buffer[][]): Tamper {
  return (_exchange, index) => {
    const chunks: Buffer[] = [];
    bodies[index] = chunks;
    return {
      body: new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          chunks.push(chunk);
          callback(null, chunk);
        },
      }),
    };
  };
}

/** Flips one bit of the byte at `offset` of the body. */
export function flipByteAt(offset: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      if (offset >= seen && offset < seen + chunk.length) {
        const copy = Buffer.from(chunk);
        copy[offset - seen] = (copy[offset - seen] ?? 0) ^ 0x01;
        chunk = copy;
      }
      seen += chunk.length;
      callback(null, chunk);
    },
  });
}

/** Writes the first `bytes` bytes of `source` to `res`, then ends the connection once they are on their way. */
function sendThenClose(source: IncomingMessage, res: ServerResponse, bytes: number): void {
  let sent = 0;
  source.on('data', (chunk: Buffer) => {
    const room = bytes - sent;
    if (room <= 0) return;
    if (chunk.length < room) {
      sent += chunk.length;
      res.write(chunk);
      return;
    }
    sent = bytes;
    source.destroy();
    // A FIN after the bytes, not a reset that could discard them.
    res.write(chunk.subarray(0, room), () => res.socket?.end());
  });
}

/** Passes the first `bytes` bytes of the body, then holds the rest until the client goes away. */
export function stallAfter(bytes: number): Transform {
  let sent = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      const room = bytes - sent;
      if (room <= 0) return; // never calls back: the transfer stalls here
      sent += Math.min(room, chunk.length);
      if (chunk.length > room) {
        this.push(chunk.subarray(0, room));
        return;
      }
      callback(null, chunk);
    },
  });
}

/** Passes only the first `length` bytes of the body (send it with a matching `Content-Length`). */
export function truncateTo(length: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      const room = Math.max(0, length - seen);
      seen += chunk.length;
      callback(null, chunk.subarray(0, room));
    },
  });
}

/**
 * A body that never ends on its own: zero bytes in 64 KiB chunks for as long as the client reads,
 * counting what it produced (`produced()`, `onChunk` after each chunk), so a test can bound what a
 * client took after a moment.
 */
export function endlessBody(onChunk?: () => void): { readonly stream: Readable; produced(): number } {
  let produced = 0;
  const chunk = Buffer.alloc(64 * 1024);
  const stream = new Readable({
    read() {
      produced += chunk.length;
      this.push(chunk);
      onChunk?.();
    },
  });
  return { stream, produced: () => produced };
}
