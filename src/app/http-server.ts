import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

/**
 * The HTTP server around the app. Requests Node's parser refuses before Express sees them (a raw
 * space or control character in the path, malformed headers) still get the contract's JSON 400.
 */
export function createHttpServer(app: Express): Server {
  const server = createServer(app);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const body = JSON.stringify({ error: 'Bad request', message: 'The request could not be parsed as HTTP' });
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}
