import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { RequestRefused, rawErrorResponse } from './error-responses.js';

/**
 * The HTTP server around the app. Requests Node's parser refuses before Express sees them (a raw
 * space or control character in the path, malformed or oversized headers, a request that took too
 * long to arrive) still get the contract's JSON error, from the same renderer as every other.
 */
export function createHttpServer(app: Express, logger?: Logger): Server {
  const server = createServer(app);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    socket.end(rawErrorResponse(refusalFor(error), logger));
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
