import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { RequestRefused, rawErrorResponse } from './error-responses.js';

export interface HttpServerOptions {
  readonly logger?: Logger;
  /** How long a client may take to send a request's headers (then 408). */
  readonly headersTimeoutMs: number;
  /** How long a client may take to send a whole request, body included (then 408). */
  readonly requestTimeoutMs: number;
  /** Connections open at once; Node drops any beyond. */
  readonly maxConnections: number;
}

/** Node's own bound on a request's header section: larger ones get 431. */
export const MAX_HEADER_BYTES = 16 * 1024;

/**
 * The HTTP server around the app, with every wait bounded: headers and whole requests must arrive
 * in time, and the number of open connections is capped. Requests Node's parser refuses before
 * Express sees them (a raw space or control character in the path, malformed or oversized headers,
 * a request that took too long to arrive) still get the contract's JSON error, from the same
 * renderer as every other.
 */
export function createHttpServer(app: Express, options: HttpServerOptions): Server {
  const { logger } = options;
  const server = createServer(
    {
      headersTimeout: options.headersTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      // How often Node looks for requests past those deadlines (30 s by default).
      connectionsCheckingInterval: Math.min(1000, options.headersTimeoutMs),
      maxHeaderSize: MAX_HEADER_BYTES,
      highWaterMark: 1024 * 1024,
    },
    app,
  );
  server.maxConnections = options.maxConnections;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    // Written, then the connection is destroyed: ending only our side would leave a peer that never
    // closes its own holding a MAX_CONNECTIONS slot (Node's server allows half-open connections).
    // A peer that does not even read the answer loses the connection after the headers' deadline.
    socket.setTimeout(options.headersTimeoutMs, () => socket.destroy());
    socket.end(rawErrorResponse(refusalFor(error), logger), () => socket.destroy());
  });
  return server;
}

function refusalFor(error: NodeJS.ErrnoException): RequestRefused {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new RequestRefused('headers_too_large', 'The request headers are too large', { cause: error });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new RequestRefused('request_timeout', 'The request was not received in time', { cause: error });
    default:
      return new RequestRefused('invalid_request', 'The request could not be parsed as HTTP', { cause: error });
  }
}
