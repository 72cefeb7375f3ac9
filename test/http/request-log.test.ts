import { connect } from 'node:net';
import { expect } from 'chai';
import type { Logger } from 'pino';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { BlobProperties } from '../../src/domain/ports.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { captureLog, type CapturedLog } from '../support/log-capture.js';

const acme = { clientId: 'acme', secret: 'acme-secret-acme-secret' };
const broken = { clientId: 'broken', secret: 'broken-secret-broken' };

/** A memory store whose property reads of `files/held.csv` wait for `release` (and say they started). */
class HoldingStore extends MemoryBlobStore {
  release: () => void = () => {};
  readonly #gate = new Promise<void>((resolve) => (this.release = resolve));
  #asked: () => void = () => {};
  readonly asked = new Promise<void>((resolve) => (this.#asked = resolve));

  override async getProperties(path: string): Promise<BlobProperties | undefined> {
    if (path === 'files/held.csv') {
      this.#asked();
      await this.#gate;
    }
    return super.getProperties(path);
  }
}

/** Counts the child loggers made from `logger` or any of its children (pino's `child` is inherited). */
function countChildren(logger: Logger): { readonly count: number } {
  const counter = { count: 0 };
  const child = logger.child;
  logger.child = function (this: Logger, ...args: Parameters<Logger['child']>) {
    counter.count += 1;
    return child.apply(this, args);
  } as Logger['child'];
  return counter;
}

describe('the request log', function () {
  let gateway: TestGateway;
  let log: CapturedLog;
  let children: { readonly count: number };
  let store: HoldingStore;

  before(async function () {
    log = captureLog('info');
    children = countChildren(log.logger);
    store = new HoldingStore();
    store.put(
      'indexes/acme.csv',
      buildIndexCsv([buildIndexRow({ Symbol: 'FILE', FileName: 'files/file.csv' }), buildIndexRow({ Symbol: 'HELD', FileName: 'files/held.csv' })]),
    );
    store.put('files/held.csv', 'a,b\n1,2\n');
    store.put('indexes/broken.csv', 'Ticker\r\nFILE\r\n');
    store.put('files/file.csv', 'a,b\n1,2\n');
    gateway = await startGateway({ store, clients: [acme, broken], logger: log.logger });
  });

  after(async function () {
    await gateway?.close();
  });

  const lineOf = (requestId: string): Promise<Record<string, unknown>> =>
    log.waitFor((line) => line['requestId'] === requestId && ['request completed', 'request aborted', 'request errored'].includes(String(line['msg'])));

  describe('when an authenticated request is answered', function () {
    it('writes one line: requestId, req (method, url with foreign query values redacted), clientId, res (statusCode), responseTime, in that order', async function () {
      // Refused by the contract (no such parameter), after the token was checked.
      const response = await gateway.get('acme', '/list?limit=5&client_secret=hunter2', { 'x-request-id': 'log-line-1' });
      expect(response.status).to.equal(400);
      const line = await lineOf('log-line-1');
      expect(Object.keys(line)).to.deep.equal(['level', 'time', 'pid', 'hostname', 'requestId', 'req', 'clientId', 'res', 'responseTime', 'msg']);
      expect(line).to.deep.include({
        level: 30,
        requestId: 'log-line-1',
        req: { method: 'GET', url: '/list?limit=5&client_secret=[redacted]' },
        clientId: 'acme',
        res: { statusCode: 400 },
        msg: 'request completed',
      });
      expect(line['responseTime']).to.be.a('number');
    });
  });

  describe('when a request is refused before it is authenticated', function () {
    it('writes its line without a clientId', async function () {
      const response = await gateway.request('GET', '/catalog', { headers: { 'x-request-id': 'log-line-2' } });
      expect(response.status).to.equal(401);
      const line = await lineOf('log-line-2');
      expect(Object.keys(line)).to.deep.equal(['level', 'time', 'pid', 'hostname', 'requestId', 'req', 'res', 'responseTime', 'msg']);
      expect(line).to.deep.include({ req: { method: 'GET', url: '/catalog' }, res: { statusCode: 401 }, msg: 'request completed' });
    });
  });

  describe('when the gateway fails a request (5xx)', function () {
    it('writes "request errored" at info level with an err naming the status', async function () {
      const response = await gateway.get('broken', '/catalog', { 'x-request-id': 'log-line-3' });
      expect(response.status).to.equal(500);
      const line = await lineOf('log-line-3');
      expect(Object.keys(line)).to.deep.equal(['level', 'time', 'pid', 'hostname', 'requestId', 'req', 'clientId', 'res', 'err', 'responseTime', 'msg']);
      expect(line).to.deep.include({ level: 30, clientId: 'broken', res: { statusCode: 500 }, msg: 'request errored' });
      expect(line['err']).to.deep.include({ type: 'Error', message: 'failed with status code 500' });
    });
  });

  describe('when the client leaves before an answer is sent', function () {
    it('writes "request aborted" with a null statusCode', async function () {
      const token = await gateway.tokenFor('acme');
      const socket = connect(gateway.port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(`GET /download/HELD HTTP/1.1\r\nHost: x\r\nX-Request-Id: log-line-4\r\nAuthorization: Bearer ${token}\r\n\r\n`);
      // The gateway waits on storage for the file's properties when the client hangs up.
      await store.asked;
      socket.destroy();
      const line = await lineOf('log-line-4');
      store.release();
      expect(line).to.deep.include({ req: { method: 'GET', url: '/download/HELD' }, clientId: 'acme', res: { statusCode: null }, msg: 'request aborted' });
    });
  });

  describe('when requests write no line of their own', function () {
    it('makes no child logger for them (req.log is made on first use)', async function () {
      await gateway.get('acme', '/catalog');
      const before = children.count;
      for (let i = 0; i < 20; i += 1) {
        expect((await gateway.get('acme', '/catalog')).status).to.equal(200);
        expect((await gateway.request('GET', '/health')).status).to.equal(200);
      }
      expect(children.count - before).to.equal(0);
    });

    it('makes one for a request that logs, and every line of it carries the requestId', async function () {
      const before = children.count;
      const response = await gateway.request('GET', '/catalog', { headers: { authorization: 'Bearer forged', 'x-request-id': 'log-line-5' } });
      expect(response.status).to.equal(401);
      await lineOf('log-line-5');
      expect(children.count - before).to.equal(1);
      const refusal = log.lines.find((line) => line['msg'] === 'request refused: invalid_token' && line['requestId'] === 'log-line-5');
      expect(refusal, 'the refusal is logged with the request id').to.not.equal(undefined);
    });
  });
});
