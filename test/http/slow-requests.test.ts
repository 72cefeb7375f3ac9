import { connect, type Socket } from 'node:net';
import { expect } from 'chai';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { startGateway, type TestGateway } from '../support/gateway.js';

/*
 * Every wait on a client is bounded: headers and whole requests must arrive in time (408), header
 * sections have a size limit (431), a token request announcing a large body is refused unread, and
 * the number of open connections is capped. Answers are the contract's JSON errors.
 */

interface RawExchange {
  readonly text: string;
  readonly closed: boolean;
}

/** Opens a raw connection, writes `chunks`, and collects what the server sends until it closes the connection. */
async function exchange(port: number, ...chunks: string[]): Promise<RawExchange> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let text = '';
  socket.setEncoding('latin1').on('data', (data: string) => (text += data));
  socket.on('error', () => {});
  for (const chunk of chunks) socket.write(chunk);
  await new Promise((resolve) => socket.once('close', resolve));
  return { text, closed: true };
}

function statusAndBody(text: string): { status: number; headers: string; body: Record<string, unknown> } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), headers: head, body: JSON.parse(body) as Record<string, unknown> };
}

describe('slow or oversized requests', function () {
  let gateway: TestGateway;

  before(async function () {
    gateway = await startGateway({
      store: new MemoryBlobStore(),
      clients: [],
      env: { HEADERS_TIMEOUT_SECONDS: '1', REQUEST_TIMEOUT_SECONDS: '2', MAX_CONNECTIONS: '50' },
    });
  });

  after(async function () {
    await gateway?.close();
  });

  describe('a client that sends its headers too slowly', function () {
    it('gets 408 request_timeout as JSON, and the connection is closed', async function () {
      const result = await exchange(gateway.port, 'GET /catalog HTTP/1.1\r\nHost: x\r\n');
      const { status, headers, body } = statusAndBody(result.text);
      expect(status).to.equal(408);
      expect(headers).to.match(/^Connection: close$/m);
      expect(body).to.include({ error: 'Request timeout', code: 'request_timeout' });
    });
  });

  describe('a client that sends its body too slowly', function () {
    it('gets 408 request_timeout once REQUEST_TIMEOUT_SECONDS has passed', async function () {
      const result = await exchange(
        gateway.port,
        'POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ngrant_type=',
      );
      expect(statusAndBody(result.text).status).to.equal(408);
    });
  });

  describe('a header section over 16 KiB', function () {
    it('gets 431 headers_too_large as JSON', async function () {
      const result = await exchange(gateway.port, `GET /catalog HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20 * 1024)}\r\n\r\n`);
      const { status, body } = statusAndBody(result.text);
      expect(status).to.equal(431);
      expect(body).to.include({ error: 'Request header fields too large', code: 'headers_too_large' });
    });
  });

  describe('a token request that announces a 10 MB body and sends a few bytes', function () {
    it('is refused at once with 400 invalid_request, and the connection is closed without waiting for the body', async function () {
      const result = await exchange(
        gateway.port,
        'POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10000000\r\n\r\ngrant_type=',
      );
      const { status, headers, body } = statusAndBody(result.text);
      expect(status).to.equal(400);
      expect(headers).to.match(/^Connection: close$/m);
      expect(body).to.include({ error: 'invalid_request', code: 'invalid_request' });
    });
  });
});

describe('MAX_CONNECTIONS', function () {
  it('drops connections beyond the limit and keeps serving those within it', async function () {
    const gateway = await startGateway({ store: new MemoryBlobStore(), clients: [], env: { MAX_CONNECTIONS: '2' } });
    const open: Socket[] = [];
    try {
      for (let i = 0; i < 2; i += 1) {
        const socket = connect(gateway.port, '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        open.push(socket);
      }
      // Both are established on the server side once each has been answered once.
      for (const socket of open) {
        socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
        await new Promise((resolve) => socket.once('data', resolve));
      }
      const third = await exchange(gateway.port, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(third.text).to.equal('');
      open[0]?.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      const answer = await new Promise<string>((resolve) => open[0]?.once('data', (data: Buffer) => resolve(data.toString('latin1'))));
      expect(answer).to.match(/^HTTP\/1\.1 200/);
    } finally {
      for (const socket of open) socket.destroy();
      await gateway.close();
    }
  });
});

/** A raw connection that never closes its own side: it keeps a slot unless the gateway lets go of it. */
async function halfOpenExchange(port: number, ...chunks: string[]): Promise<{ socket: Socket; text: string }> {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.on('error', () => {});
  let text = '';
  socket.setEncoding('latin1').on('data', (data: string) => (text += data));
  for (const chunk of chunks) socket.write(chunk);
  // The gateway has answered and closed its side; ours stays open, as a careless or hostile peer's would.
  await new Promise((resolve) => socket.once('end', resolve));
  return { socket, text };
}

describe('MAX_CONNECTIONS, once connections were refused', function () {
  const refusals: ReadonlyArray<{ readonly status: number; readonly what: string; readonly chunks: readonly string[] }> = [
    { status: 400, what: 'an unparseable request', chunks: ['GET /a b c HTTP/1.1\r\nHost: x\r\n\r\n'] },
    { status: 400, what: 'a token request announcing a 10 MB body', chunks: ['POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10000000\r\n\r\ngrant_type='] },
    { status: 408, what: 'headers that never finish', chunks: ['GET /health HTTP/1.1\r\nHost: x\r\n'] },
    { status: 431, what: 'a header section over 16 KiB', chunks: [`GET /health HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20 * 1024)}\r\n\r\n`] },
  ];
  for (const refusal of refusals) {
    describe(`when every slot held ${refusal.what}, answered ${refusal.status}, and the peers never close`, function () {
      it('frees the slots at once: a fresh client is served', async function () {
        const gateway = await startGateway({
          store: new MemoryBlobStore(),
          clients: [],
          env: { MAX_CONNECTIONS: '2', HEADERS_TIMEOUT_SECONDS: '1', REQUEST_TIMEOUT_SECONDS: '1' },
        });
        const held: Socket[] = [];
        try {
          for (let i = 0; i < 2; i += 1) {
            const { socket, text } = await halfOpenExchange(gateway.port, ...refusal.chunks);
            held.push(socket);
            expect(statusAndBody(text).status).to.equal(refusal.status);
          }
          const fresh = await exchange(gateway.port, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
          expect(fresh.text).to.match(/^HTTP\/1\.1 200/);
        } finally {
          for (const socket of held) socket.destroy();
          await gateway.close();
        }
      });
    });
  }
});
