import { get as httpGet } from 'node:http';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import nock from 'nock';
import { fromConnectionString, type AzureBlobStoreOptions } from '../../src/adapters/storage/azure-blob-store.js';
import { AZURITE_ACCOUNT, AZURITE_KEY } from '../support/azurite.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody } from '../support/json.js';

/*
 * Faults at the storage boundary that Azurite cannot produce on demand: 5xx and throttling answers,
 * resets, a storage that never answers, a body that breaks off, a blob that changes between the
 * property read and the data read. The gateway runs for real over an AzureBlobStore whose account
 * endpoint is a host that does not exist, so nock answers every storage call; everything Azurite can
 * do is tested against Azurite elsewhere.
 */

const storageOrigin = 'http://fake-storage.test';
const containerName = 'faults';
const connectionString =
  `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};` +
  `BlobEndpoint=${storageOrigin}/${AZURITE_ACCOUNT};`;

/** No SDK retries, so each scripted answer is the only one; the try timeout is what a hung call should be cut at. */
const tryTimeoutInMs = 1000;
const pipelineOptions: AzureBlobStoreOptions = { retryOptions: { maxTries: 1, tryTimeoutInMs }, responseTimeoutMs: tryTimeoutInMs };

const acme = { clientId: 'acme', secret: 'acme-secret-acme-secret' };
/** A client, hence an index and a catalog cache entry, for each index scenario. */
const indexScenarioClients = {
  indexPropertiesFail: { clientId: 'index-properties-fail', secret: 'secret-of-index-properties-fail' },
  indexPropertiesFailOnDownload: { clientId: 'index-properties-fail-2', secret: 'secret-of-index-properties-fail-2' },
  indexReadFails: { clientId: 'index-read-fails', secret: 'secret-of-index-read-fails' },
  indexReplaced: { clientId: 'index-replaced', secret: 'secret-of-index-replaced' },
  indexFailsLater: { clientId: 'index-fails-later', secret: 'secret-of-index-fails-later' },
};

// Importing nock switches interception on for the whole mocha process; keep it off outside this suite,
// so the Azurite suites talk to a real socket.
nock.restore();

interface FakeBlob {
  readonly path: string;
  readonly bytes: Buffer;
  readonly etag: string;
  readonly lastModified: Date;
  readonly contentType: string;
}

function buildFakeBlob(overrides: Partial<FakeBlob> & Pick<FakeBlob, 'path'>): FakeBlob {
  return {
    bytes: Buffer.from(`bytes of ${overrides.path}\n`),
    etag: '"0x8DC2A4F5B1C2D3E"',
    lastModified: new Date('2024-05-06T07:08:09Z'),
    contentType: 'text/csv',
    ...overrides,
  };
}

/** The stored index of `clientId`: QUOTES and CURVE unless overridden. */
function indexBlobOf(clientId: string, overrides: Partial<FakeBlob> = {}): FakeBlob {
  return buildFakeBlob({
    path: `indexes/${clientId}.csv`,
    etag: '"0x8DC0000000000A1"',
    bytes: Buffer.from(
      buildIndexCsv([
        buildIndexRow({ Symbol: 'QUOTES', FileName: 'data/quotes.csv' }),
        buildIndexRow({ Symbol: 'CURVE', FileName: 'data/curve.csv' }),
      ]),
    ),
    ...overrides,
  });
}
const quotes = buildFakeBlob({ path: 'data/quotes.csv', bytes: Buffer.from('date,close\n2024-05-06,38.12\n') });

/** The request path the SDK sends for a blob (the test paths need no percent-encoding). */
const urlPathOf = (blob: Pick<FakeBlob, 'path'>): string => `/${AZURITE_ACCOUNT}/${containerName}/${blob.path}`;

/** The headers Azure sends with Get Blob Properties and Get Blob. */
function blobHeaders(blob: FakeBlob, contentLength: number): Record<string, string> {
  return {
    'content-length': String(contentLength),
    'content-type': blob.contentType,
    etag: blob.etag,
    'last-modified': blob.lastModified.toUTCString(),
    'accept-ranges': 'bytes',
    'x-ms-blob-type': 'BlockBlob',
    'x-ms-version': '2026-04-06',
  };
}

/** An Azure error answer: `x-ms-error-code` always, the XML body only when the request can have one. */
function azureError(method: 'HEAD' | 'GET', status: number, code: string): nock.ReplyFnResult {
  const headers = { 'x-ms-error-code': code, 'content-type': 'application/xml' };
  if (method === 'HEAD') return [status, '', headers];
  const xml = `<?xml version="1.0" encoding="utf-8"?><Error><Code>${code}</Code><Message>${code} (fake)</Message></Error>`;
  return [status, xml, headers];
}

/** Answers Get Blob Properties (HEAD) for `blob`. */
function answerProperties(scope: nock.Scope, blob: FakeBlob): nock.Scope {
  return scope.head(urlPathOf(blob)).query(true).reply(200, '', blobHeaders(blob, blob.bytes.length));
}

/** Answers Get Blob as Azure does: 412 when `If-Match` fails, 206 with `Content-Range` for `x-ms-range`. */
function answerRead(scope: nock.Scope, blob: FakeBlob): nock.Scope {
  return scope
    .get(urlPathOf(blob))
    .query(true)
    .reply(function () {
      const ifMatch = this.req.headers['if-match'];
      if (ifMatch !== undefined && ifMatch !== blob.etag) return azureError('GET', 412, 'ConditionNotMet');
      const range = /^bytes=(\d+)-(\d*)$/.exec(this.req.headers['x-ms-range'] ?? '');
      if (range === null) return [200, blob.bytes, blobHeaders(blob, blob.bytes.length)];
      const start = Number(range[1]);
      const end = range[2] === '' ? blob.bytes.length - 1 : Math.min(Number(range[2]), blob.bytes.length - 1);
      const part = blob.bytes.subarray(start, end + 1);
      return [206, part, { ...blobHeaders(blob, part.length), 'content-range': `bytes ${start}-${end}/${blob.bytes.length}` }];
    });
}

/** A blob that storage serves normally, as often as asked. */
function serveBlobPersistently(blob: FakeBlob): nock.Scope {
  const scope = nock(storageOrigin).persist();
  answerProperties(scope, blob);
  answerRead(scope, blob);
  return scope;
}

// nock's types name fs.ReadStream, but it replies with any Readable.
const asReplyBody = (stream: Readable): nock.ReplyBody => stream as unknown as nock.ReplyBody;

/**
 * A storage body that sends `sent` bytes, then fails the way a reset connection does when the test
 * says so (`breakOff`), i.e. once the subscriber has seen the first bytes: driven by events, not timers.
 */
function bodyBreakingOffAfter(sent: number): { readonly body: Readable; breakOff(): void } {
  const body = new Readable({ read() {} });
  body.push(Buffer.alloc(sent, 0x61));
  return {
    body,
    breakOff: () => body.destroy(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })),
  };
}


interface RawDownload {
  readonly status: number;
  readonly contentLength: number;
  readonly received: number;
  /** Node's own verdict: the whole message arrived. */
  readonly complete: boolean;
  readonly failure: string | undefined;
}

/**
 * A plain GET that reports what arrived, instead of failing, when the connection is cut mid-body.
 * `onFirstBytes` runs once, when the first bytes of the body have arrived.
 */
function downloadRaw(port: number, path: string, token: string, onFirstBytes: () => void = () => {}): Promise<RawDownload> {
  return new Promise((resolve, reject) => {
    const request = httpGet({ host: '127.0.0.1', port, path, agent: false, headers: { authorization: `Bearer ${token}` } }, (response) => {
      let received = 0;
      let failure: string | undefined;
      response.on('data', (chunk: Buffer) => {
        if (received === 0) onFirstBytes();
        received += chunk.length;
      });
      response.on('aborted', () => {
        failure ??= 'aborted';
      });
      response.on('error', (error: NodeJS.ErrnoException) => {
        failure ??= error.code ?? error.message;
      });
      response.on('close', () =>
        resolve({
          status: response.statusCode ?? 0,
          contentLength: Number(response.headers['content-length']),
          received,
          complete: response.complete,
          failure,
        }),
      );
    });
    request.on('error', reject);
  });
}

describe('the gateway when Azure Blob Storage fails (faults injected with nock)', function () {
  let gateway: TestGateway;
  /** This test's scripted storage calls, in the order expected. */
  let storage: nock.Scope;

  before(async function () {
    if (!nock.isActive()) nock.activate();
    nock.disableNetConnect();
    // The test's own requests to the gateway, on loopback, go through.
    nock.enableNetConnect('127.0.0.1');
    // One gateway for the suite (starting one takes about a second). The catalog is re-validated on
    // every request, and each index scenario has a client, hence an index, of its own.
    gateway = await startGateway({
      store: fromConnectionString(connectionString, containerName, pipelineOptions),
      clients: [acme, ...Object.values(indexScenarioClients)],
      // A storage body that stops sending is cut after a second of silence.
      env: { INDEX_REFRESH_SECONDS: '0', DOWNLOAD_IDLE_TIMEOUT_SECONDS: '1' },
    });
  });

  after(async function () {
    await gateway?.close();
    nock.cleanAll();
    nock.enableNetConnect();
    nock.restore();
  });

  beforeEach(function () {
    storage = nock(storageOrigin);
  });

  afterEach(function () {
    nock.cleanAll();
  });

  describe('on a subscribed file', function () {
    beforeEach(function () {
      serveBlobPersistently(indexBlobOf(acme.clientId));
    });

    describe('when Get Blob Properties answers 500 InternalError', function () {
      it('responds 503 Service unavailable with Retry-After, as a JSON error', async function () {
        storage.head(urlPathOf(quotes)).query(true).reply(() => azureError('HEAD', 500, 'InternalError'));

        const response = await gateway.get('acme', '/download/QUOTES');

        expect(response.status).to.equal(503);
        expect(jsonOf(response).error).to.equal('Service unavailable');
        expect(response.headers['retry-after']).to.match(/^\d+$/);
        storage.done();
      });
    });

    describe('when Get Blob Properties answers 403 AuthenticationFailed (not transient)', function () {
      it('responds 502 Bad gateway without Retry-After', async function () {
        storage.head(urlPathOf(quotes)).query(true).reply(() => azureError('HEAD', 403, 'AuthenticationFailed'));

        const response = await gateway.get('acme', '/download/QUOTES');

        expect(response.status).to.equal(502);
        expect(jsonOf(response)).to.deep.equal({
          error: 'Bad gateway',
          message: 'Storage could not be reached or failed; try again later',
          code: 'storage_failed',
        });
        expect(response.headers['retry-after']).to.equal(undefined);
        storage.done();
      });
    });

    for (const [status, code] of [
      [503, 'ServerBusy'],
      [429, 'TooManyRequests'],
    ] as const) {
      describe(`when storage throttles with ${status} ${code}`, function () {
        for (const path of ['/download/QUOTES', '/info/QUOTES', '/list', '/count']) {
          it(`responds 503 with Retry-After to GET ${path}`, async function () {
            storage.head(urlPathOf(quotes)).query(true).reply(() => azureError('HEAD', status, code));
            // /list and /count probe every catalog file; the other one is there.
            if (path === '/list' || path === '/count') answerProperties(storage, buildFakeBlob({ path: 'data/curve.csv' }));

            const response = await gateway.get('acme', path);

            expect(response.status).to.equal(503);
            expect(jsonOf(response).error).to.equal('Service unavailable');
            expect(Number(response.headers['retry-after'])).to.be.above(0);
            storage.done();
          });
        }

        it('responds 503 with Retry-After and no body to HEAD /download/QUOTES', async function () {
          storage.head(urlPathOf(quotes)).query(true).reply(() => azureError('HEAD', status, code));

          const response = await gateway.get('acme', '/download/QUOTES', {}, 'HEAD');

          expect(response.status).to.equal(503);
          expect(response.body.length).to.equal(0);
          expect(Number(response.headers['retry-after'])).to.be.above(0);
          storage.done();
        });
      });
    }

    describe('when the connection is reset before the first byte', function () {
      const reset = (): Error => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

      it('responds 503 JSON when it happens on Get Blob Properties', async function () {
        storage.head(urlPathOf(quotes)).query(true).replyWithError(reset());

        const response = await gateway.get('acme', '/download/QUOTES');

        expect(response.status).to.equal(503);
        expect(jsonOf(response).error).to.equal('Service unavailable');
        storage.done();
      });

      it('responds 503 JSON, not a 200 with a broken body, when it happens on Get Blob', async function () {
        answerProperties(storage, quotes);
        storage.get(urlPathOf(quotes)).query(true).replyWithError(reset());

        const response = await gateway.get('acme', '/download/QUOTES');

        expect(response.status).to.equal(503);
        expect(jsonOf(response).error).to.equal('Service unavailable');
        expect(response.headers['etag']).to.equal(undefined);
        storage.done();
      });
    });

    describe('when Get Blob answers 500 after the properties were read', function () {
      it('responds 503 JSON before writing any download header', async function () {
        answerProperties(storage, quotes);
        storage.get(urlPathOf(quotes)).query(true).reply(() => azureError('GET', 500, 'InternalError'));

        const response = await gateway.get('acme', '/download/QUOTES');

        expect(response.status).to.equal(503);
        expect(jsonOf(response).error).to.equal('Service unavailable');
        expect(response.headers['content-disposition']).to.equal(undefined);
        storage.done();
      });
    });

    describe('when storage accepts the request but does not answer within the try timeout', function () {
      it('gives up and responds 503 with Retry-After instead of holding the subscriber', async function () {
        // A valid answer, only far too late (longer than this test may run): only the gateway's
        // response deadline (STORAGE_TIMEOUT_SECONDS, 1 s here) can end the wait.
        storage
          .head(urlPathOf(quotes))
          .query(true)
          .delayConnection(10 * 60_000)
          .reply(200, '', blobHeaders(quotes, quotes.bytes.length));

        const response = await gateway.get('acme', '/download/QUOTES');

        expect(response.status).to.equal(503);
        expect(jsonOf<ErrorBody>(response).code).to.equal('storage_unavailable');
        expect(response.headers['retry-after']).to.match(/^\d+$/);
      });
    });

    describe('when the file changes between the property read and the data read (412 ConditionNotMet)', function () {
      it('responds 503 with Retry-After, so the subscriber retries and gets the new version', async function () {
        const changed = { ...quotes, etag: '"0x8DC2A4F5B1C2FFF"' };
        answerProperties(storage, quotes);
        answerRead(storage, changed);
        // The adapter asks once more whether the blob still exists: it does, in its new version.
        answerProperties(storage, changed);

        const response = await gateway.get('acme', '/download/QUOTES');

        expect(response.status).to.equal(503);
        expect(jsonOf(response).error).to.equal('Service unavailable');
        expect(response.headers['retry-after']).to.equal('1');
        storage.done();
        answerProperties(storage, changed);
        answerRead(storage, changed);
        const retried = await gateway.get('acme', '/download/QUOTES');
        expect(retried.status).to.equal(200);
        expect(retried.headers['etag']).to.equal(changed.etag);
        storage.done();
      });

      it('responds 404 when the file was deleted meanwhile (Azure answers 412, not 404, to If-Match)', async function () {
        answerProperties(storage, quotes);
        storage.get(urlPathOf(quotes)).query(true).reply(() => azureError('GET', 412, 'ConditionNotMet'));
        storage.head(urlPathOf(quotes)).query(true).reply(() => azureError('HEAD', 404, 'BlobNotFound'));

        const response = await gateway.get('acme', '/download/QUOTES');

        expect(response.status).to.equal(404);
        expect(jsonOf(response).error).to.equal('Not found');
        storage.done();
      });
    });

    describe('when the body breaks off after the headers were sent', function () {
      const size = 256 * 1024;
      const large = buildFakeBlob({ path: 'data/quotes.csv', bytes: Buffer.alloc(size, 0x61) });

      it('destroys the connection: the subscriber sees an incomplete transfer, never a short body that looks complete', async function () {
        answerProperties(storage, large);
        storage
          .get(urlPathOf(large))
          .query(true)
          .reply(200, () => asReplyBody(breaking.body), blobHeaders(large, size));
        const breaking = bodyBreakingOffAfter(64 * 1024);

        const download = await downloadRaw(gateway.port, '/download/QUOTES', await gateway.tokenFor(acme.clientId), breaking.breakOff);

        expect(download.status).to.equal(200);
        expect(download.contentLength).to.equal(size);
        expect(download.received).to.be.below(size);
        expect(download.complete).to.equal(false);
        expect(download.failure).to.be.a('string');
        storage.done();
      });

      it('destroys the connection when storage ends the body cleanly but short of its Content-Length', async function () {
        answerProperties(storage, large);
        storage
          .get(urlPathOf(large))
          .query(true)
          .reply(200, () => asReplyBody(Readable.from([Buffer.alloc(64 * 1024, 0x61)])), blobHeaders(large, size));

        const download = await downloadRaw(gateway.port, '/download/QUOTES', await gateway.tokenFor(acme.clientId));

        expect(download.status).to.equal(200);
        expect(download.received).to.be.below(size);
        expect(download.complete).to.equal(false);
        storage.done();
      });

      it('cuts a body that stops sending (storage frozen mid-body) after DOWNLOAD_IDLE_TIMEOUT_SECONDS', async function () {
        answerProperties(storage, large);
        const frozen = new Readable({ read() {} });
        frozen.push(Buffer.alloc(64 * 1024, 0x61));
        storage
          .get(urlPathOf(large))
          .query(true)
          .reply(200, () => asReplyBody(frozen), blobHeaders(large, size));

        const download = await downloadRaw(gateway.port, '/download/QUOTES', await gateway.tokenFor(acme.clientId));

        expect(download.status).to.equal(200);
        expect(download.received).to.equal(64 * 1024);
        expect(download.complete).to.equal(false);
        storage.done();
      });

      it('keeps serving: the next request after a broken download succeeds', async function () {
        answerProperties(storage, large);
        storage
          .get(urlPathOf(large))
          .query(true)
          .reply(200, () => asReplyBody(breaking.body), blobHeaders(large, size));
        const breaking = bodyBreakingOffAfter(64 * 1024);
        await downloadRaw(gateway.port, '/download/QUOTES', await gateway.tokenFor(acme.clientId), breaking.breakOff);
        answerProperties(storage, quotes);
        answerRead(storage, quotes);

        const response = await gateway.get('acme', '/download/QUOTES');

        expect(response.status).to.equal(200);
        expect(response.body.equals(quotes.bytes)).to.equal(true);
        storage.done();
      });
    });
  });

  describe('on the client index', function () {
    describe('when Get Blob Properties of the index answers 500', function () {
      it('responds 503 JSON to GET /catalog', async function () {
        const { clientId } = indexScenarioClients.indexPropertiesFail;
        storage.head(urlPathOf(indexBlobOf(clientId))).query(true).reply(() => azureError('HEAD', 500, 'InternalError'));

        const response = await gateway.get(clientId, '/catalog');

        expect(response.status).to.equal(503);
        expect(jsonOf(response)).to.deep.equal({
          error: 'Service unavailable',
          message: 'Storage could not be reached or failed; try again later',
          code: 'storage_unavailable',
        });
        expect(response.headers['retry-after']).to.match(/^\d+$/);
        storage.done();
      });

      it('responds 503 JSON to a download, rather than 403 or 404', async function () {
        const { clientId } = indexScenarioClients.indexPropertiesFailOnDownload;
        storage.head(urlPathOf(indexBlobOf(clientId))).query(true).reply(() => azureError('HEAD', 500, 'InternalError'));

        const response = await gateway.get(clientId, '/download/QUOTES');

        expect(response.status).to.equal(503);
        expect(jsonOf(response).error).to.equal('Service unavailable');
        storage.done();
      });
    });

    describe('when Get Blob of the index fails after its properties were read', function () {
      it('responds 503 JSON to GET /catalog', async function () {
        const { clientId } = indexScenarioClients.indexReadFails;
        const index = indexBlobOf(clientId);
        answerProperties(storage, index);
        storage.get(urlPathOf(index)).query(true).reply(() => azureError('GET', 500, 'InternalError'));

        const response = await gateway.get(clientId, '/catalog');

        expect(response.status).to.equal(503);
        expect(jsonOf(response).error).to.equal('Service unavailable');
        storage.done();
      });
    });

    describe('when the index is replaced between its property read and its read', function () {
      it('reads the new index once more and serves it', async function () {
        const { clientId } = indexScenarioClients.indexReplaced;
        const index = indexBlobOf(clientId);
        const replaced = indexBlobOf(clientId, {
          etag: '"0x8DC0000000000B2"',
          bytes: Buffer.from(buildIndexCsv([buildIndexRow({ Symbol: 'NEW', FileName: 'data/new.csv' })])),
        });
        answerProperties(storage, index);
        answerRead(storage, replaced);
        // Once for the adapter to tell a change from a deletion, once to load the new version.
        answerProperties(storage, replaced);
        answerProperties(storage, replaced);
        answerRead(storage, replaced);

        const response = await gateway.get(clientId, '/catalog');

        expect(response.status).to.equal(200);
        expect(jsonOf(response).files.map((file: { Symbol: string }) => file.Symbol)).to.deep.equal(['NEW']);
        storage.done();
      });
    });

    describe('when storage fails on the index after a catalog was loaded', function () {
      it('serves the last loaded catalog', async function () {
        const { clientId } = indexScenarioClients.indexFailsLater;
        const index = indexBlobOf(clientId);
        answerProperties(storage, index);
        answerRead(storage, index);
        expect((await gateway.get(clientId, '/catalog')).status).to.equal(200);
        storage.head(urlPathOf(index)).query(true).reply(() => azureError('HEAD', 503, 'ServerBusy'));

        const response = await gateway.get(clientId, '/catalog');

        expect(response.status).to.equal(200);
        expect(jsonOf(response).count).to.equal(2);
        storage.done();
      });
    });
  });
});
