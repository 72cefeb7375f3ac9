import { expect } from 'chai';
import type { BlobFixtureProperties } from '../contract/blob-store-contract.js';
import type { HttpResponse } from '../support/contract.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { memoryFixture, storeFixtures, type BlobStoreFixture } from '../support/store-fixtures.js';
import { jsonOf } from '../support/json.js';


/** 100 KiB in which every byte value occurs, in an order that is not a plain 0..255 cycle. */
const ALL_BYTES = Buffer.from(Array.from({ length: 100 * 1024 }, (_, i) => (i + 31 * (i >>> 8)) & 0xff));
const SIZE = ALL_BYTES.length;

interface SeededFile {
  readonly symbol: string;
  readonly path: string;
  readonly bytes: Buffer;
  /** Stored with the blob where the fixture's storage keeps HTTP properties. */
  readonly props?: BlobFixtureProperties;
}

const BINARY: SeededFile = {
  symbol: 'ALL_BYTES',
  path: 'blobs/all-bytes.bin',
  bytes: ALL_BYTES,
  props: { contentType: 'application/x-all-bytes', contentDisposition: 'attachment; filename="vendor-bytes.bin"' },
};
const EMPTY: SeededFile = { symbol: 'EMPTY', path: 'blobs/empty.dat', bytes: Buffer.alloc(0) };
const DAILY: SeededFile = {
  symbol: 'DAILY',
  path: 'funds/relatório diário.csv',
  bytes: Buffer.from('data;cota;patrimônio\r\n2024-01-02;1,234;5.678,90\r\n', 'utf8'),
  props: { contentType: 'text/csv' },
};
const CATALOG_FILE: SeededFile = { symbol: 'CATALOG_FILE', path: 'catalog', bytes: Buffer.from('a file named catalog') };
const LIST_FILE: SeededFile = { symbol: 'LIST_FILE', path: 'list/x.csv', bytes: Buffer.from('x,y\n1,2\n') };
const ABSENT = { symbol: 'ABSENT', path: 'funds/absent.csv' };
const UNLISTED = { path: 'funds/unlisted.csv', bytes: Buffer.from('present but not in the index') };

const DAILY_BY_PATH = '/funds/relat%C3%B3rio%20di%C3%A1rio.csv';
const LONG_AGO = 'Thu, 01 Jan 2015 00:00:00 GMT';

/** What the local folder store guesses from the extension (it keeps no HTTP properties). */
const LOCAL_CONTENT_TYPES: Readonly<Record<string, string>> = { '.csv': 'text/csv' };

interface Validators {
  readonly etag: string;
  readonly lastModified: string;
}

const mediaTypeOf = (header: unknown): string => String(header).split(';')[0]?.trim() ?? '';
const extensionOf = (path: string): string => /\.[^./]+$/.exec(path)?.[0] ?? '';
const baseNameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

for (const { name, create } of storeFixtures) {
  describe(`downloads on the ${name}`, function () {
    let fixture: BlobStoreFixture;
    let gateway: TestGateway;
    const validators = new Map<string, Validators>();

    const validatorsOf = (file: SeededFile): Validators => {
      const found = validators.get(file.symbol);
      if (found === undefined) throw new Error(`No validators recorded for ${file.symbol}`);
      return found;
    };

    /** The blob's own Content-Type where storage keeps it, else the store's guess, else octet-stream. */
    const expectedContentType = (file: SeededFile): string =>
      (fixture.capabilities.httpMetadata ? file.props?.contentType : LOCAL_CONTENT_TYPES[extensionOf(file.path)]) ??
      'application/octet-stream';

    /** The blob's own Content-Disposition where storage keeps it, else the default for an ASCII name. */
    const expectedDisposition = (file: SeededFile): string | undefined => {
      if (fixture.capabilities.httpMetadata && file.props?.contentDisposition !== undefined) return file.props.contentDisposition;
      const base = baseNameOf(file.path);
      // Non-ASCII names are checked by their own test (filename plus filename*).
      return /^[\x20-\x7e]+$/.test(base) ? `attachment; filename="${base}"` : undefined;
    };

    /**
     * The headers every 200/206 (and its HEAD) carries. The Content-Type is compared by media type
     * here; its exact value (no parameter added by the gateway) has a test of its own.
     */
    const expectFileHeaders = (response: HttpResponse, file: SeededFile, contentLength: number): void => {
      const { etag, lastModified } = validatorsOf(file);
      expect(mediaTypeOf(response.headers['content-type']), 'Content-Type').to.equal(expectedContentType(file));
      const disposition = expectedDisposition(file);
      if (disposition !== undefined) expect(response.headers['content-disposition'], 'Content-Disposition').to.equal(disposition);
      else expect(String(response.headers['content-disposition'])).to.match(/^attachment;/);
      expect(response.headers['etag'], 'ETag').to.equal(etag);
      expect(response.headers['last-modified'], 'Last-Modified').to.equal(lastModified);
      expect(response.headers['content-length'], 'Content-Length').to.equal(String(contentLength));
      expect(response.headers['accept-ranges'], 'Accept-Ranges').to.equal('bytes');
      expect(response.headers['cache-control'], 'Cache-Control').to.equal('private');
    };

    const expectWholeFile = (response: HttpResponse, file: SeededFile): void => {
      expect(response.status).to.equal(200);
      expectFileHeaders(response, file, file.bytes.length);
      expect(response.headers['content-range']).to.equal(undefined);
      expect(response.body.equals(file.bytes), 'body is byte-identical to the stored file').to.equal(true);
    };

    const expectPartial = (response: HttpResponse, file: SeededFile, start: number, end: number): void => {
      expect(response.status).to.equal(206);
      expectFileHeaders(response, file, end - start + 1);
      expect(response.headers['content-range']).to.equal(`bytes ${start}-${end}/${file.bytes.length}`);
      expect(response.body.equals(file.bytes.subarray(start, end + 1)), `body is bytes ${start}-${end}`).to.equal(true);
    };

    const expectNotModified = (response: HttpResponse, file: SeededFile): void => {
      const { etag, lastModified } = validatorsOf(file);
      expect(response.status).to.equal(304);
      expect(response.headers['etag']).to.equal(etag);
      expect(response.headers['last-modified']).to.equal(lastModified);
      expect(response.headers['cache-control']).to.equal('private');
      expect(response.body.length).to.equal(0);
    };

    const expectJsonError = (response: HttpResponse, status: number, error: string, method = 'GET'): void => {
      expect(response.status).to.equal(status);
      expect(String(response.headers['content-type'])).to.match(/^application\/json/);
      if (method === 'HEAD') {
        expect(response.body.length).to.equal(0);
        return;
      }
      expect(jsonOf(response).error).to.equal(error);
      expect(jsonOf(response).message).to.be.a('string').and.not.equal('');
    };

    before(async function () {
      fixture = await create('downloads');
      await fixture.put(
        'indexes/acme.csv',
        buildIndexCsv(
          [BINARY, EMPTY, DAILY, ABSENT, CATALOG_FILE, LIST_FILE].map((file) => buildIndexRow({ Symbol: file.symbol, FileName: file.path })),
        ),
      );
      // beta is subscribed to one file only, to tell entitlement from existence.
      await fixture.put('indexes/beta.csv', buildIndexCsv([buildIndexRow({ Symbol: 'BETA_BYTES', FileName: BINARY.path })]));
      for (const file of [BINARY, EMPTY, DAILY, CATALOG_FILE, LIST_FILE]) await fixture.put(file.path, file.bytes, file.props);
      await fixture.put(UNLISTED.path, UNLISTED.bytes);
      gateway = await startGateway({
        store: fixture.store,
        clients: [
          { clientId: 'acme', secret: 'acme-secret-acme-secret' },
          { clientId: 'beta', secret: 'beta-secret-beta-secret' },
        ],
        // These tests are about responses, not about the budget (which has a suite of its own).
        env: { DOWNLOAD_RATE_LIMIT: '100000' },
      });
      for (const file of [BINARY, EMPTY, DAILY, CATALOG_FILE, LIST_FILE]) {
        const info = await gateway.get('acme', `/info/${file.symbol}`);
        expect(info.status, `/info/${file.symbol}`).to.equal(200);
        validators.set(file.symbol, { etag: jsonOf(info).etag, lastModified: String(info.headers['last-modified']) });
      }
    });

    after(async function () {
      await gateway?.close();
      await fixture?.cleanup();
    });

    describe('GET /download/:symbol', function () {
      describe('when the symbol is listed and the file exists', function () {
        for (const file of [BINARY, EMPTY, DAILY]) {
          it(`responds 200 with every byte of ${file.path} and its headers`, async function () {
            expectWholeFile(await gateway.get('acme', `/download/${file.symbol}`), file);
          });
        }

        it('sends the ETag and Last-Modified that /info reports', async function () {
          const info = await gateway.get('acme', `/info/${BINARY.symbol}`);
          const download = await gateway.get('acme', `/download/${BINARY.symbol}`);
          expect(download.headers['etag']).to.equal(jsonOf(info).etag);
          expect(download.headers['last-modified']).to.equal(info.headers['last-modified']);
          expect(new Date(String(download.headers['last-modified'])).toUTCString()).to.equal(download.headers['last-modified']);
        });

        it('sends the blob\'s Content-Type exactly as stored, without adding a charset', async function () {
          const response = await gateway.get('acme', `/download/${DAILY.symbol}`);
          expect(response.status).to.equal(200);
          expect(response.headers['content-type']).to.equal(expectedContentType(DAILY));
        });

        it('names a non-ASCII file with an ASCII-only filename and a UTF-8 filename* (RFC 6266 section 4.3)', async function () {
          const response = await gateway.get('acme', `/download/${DAILY.symbol}`);
          expect(response.status).to.equal(200);
          const disposition = String(response.headers['content-disposition']);
          expect(disposition).to.match(/^attachment;/);
          expect(disposition).to.include("filename*=UTF-8''relat%C3%B3rio%20di%C3%A1rio.csv");
          const fallback = /;\s*filename="([^"]*)"/.exec(disposition);
          expect(fallback, 'a quoted filename fallback').to.not.equal(null);
          expect(fallback?.[1], 'the fallback filename is ASCII only').to.match(/^[\x20-\x7e]+$/);
        });

        it('uses the blob\'s own Content-Type and Content-Disposition when storage has them', async function () {
          if (!fixture.capabilities.httpMetadata) this.skip();
          const response = await gateway.get('acme', `/download/${BINARY.symbol}`);
          expect(response.headers['content-type']).to.equal('application/x-all-bytes');
          expect(response.headers['content-disposition']).to.equal('attachment; filename="vendor-bytes.bin"');
        });
      });

      describe('when the symbol is not in the caller\'s index', function () {
        it('responds 403 saying it is not in the subscription', async function () {
          const response = await gateway.get('acme', '/download/NOT_MINE');
          expectJsonError(response, 403, 'Access denied');
          expect(jsonOf(response).message).to.match(/not in the subscription/);
        });
      });

      describe('when the symbol is listed but its file is absent from storage', function () {
        it('responds 404', async function () {
          const response = await gateway.get('acme', `/download/${ABSENT.symbol}`);
          expectJsonError(response, 404, 'Not found');
        });
      });

      describe('when a caller without the symbol asks for an absent file', function () {
        it('responds 403, not 404: entitlement is decided before existence', async function () {
          const response = await gateway.get('beta', `/download/${ABSENT.symbol}`);
          expectJsonError(response, 403, 'Access denied');
          expect(jsonOf(response).message).to.match(/not in the subscription/);
        });
      });
    });

    describe('HEAD /download/:symbol', function () {
      for (const file of [BINARY, EMPTY, DAILY]) {
        it(`responds 200 with the headers of a GET of ${file.path} and no body`, async function () {
          const response = await gateway.get('acme', `/download/${file.symbol}`, {}, 'HEAD');
          expect(response.status).to.equal(200);
          expectFileHeaders(response, file, file.bytes.length);
          expect(response.body.length).to.equal(0);
        });
      }

      it('responds 403 with no body when the symbol is not in the index', async function () {
        expectJsonError(await gateway.get('acme', '/download/NOT_MINE', {}, 'HEAD'), 403, 'Access denied', 'HEAD');
      });

      it('responds 404 with no body when the file is absent', async function () {
        expectJsonError(await gateway.get('acme', `/download/${ABSENT.symbol}`, {}, 'HEAD'), 404, 'Not found', 'HEAD');
      });
    });

    describe('GET /{path}', function () {
      it('responds 200 with the same bytes and headers as by symbol, for a percent-encoded path with a space and accents', async function () {
        expectWholeFile(await gateway.get('acme', DAILY_BY_PATH), DAILY);
      });

      it('responds 200 for a plain path', async function () {
        expectWholeFile(await gateway.get('acme', `/${BINARY.path}`), BINARY);
      });

      it('answers HEAD with the headers and no body', async function () {
        const response = await gateway.get('acme', DAILY_BY_PATH, {}, 'HEAD');
        expect(response.status).to.equal(200);
        expectFileHeaders(response, DAILY, DAILY.bytes.length);
        expect(response.body.length).to.equal(0);
      });

      it('honours a Range by path too', async function () {
        expectPartial(await gateway.get('acme', `/${BINARY.path}`, { range: 'bytes=0-99' }), BINARY, 0, 99);
      });

      it('responds 403 for a path that is not in the index', async function () {
        const response = await gateway.get('acme', '/funds/not-listed.csv');
        expectJsonError(response, 403, 'Access denied');
        expect(jsonOf(response).message).to.match(/not in the subscription/);
      });

      it('responds 403 for a file that exists but is not in the index', async function () {
        const response = await gateway.get('acme', `/${UNLISTED.path}`);
        expectJsonError(response, 403, 'Access denied');
        expect(response.body.includes(UNLISTED.bytes)).to.equal(false);
      });

      it('responds 404 for a listed path whose file is absent', async function () {
        expectJsonError(await gateway.get('acme', `/${ABSENT.path}`), 404, 'Not found');
      });

      it('responds 403, not 404, to a caller without the path even when the file is absent', async function () {
        expectJsonError(await gateway.get('beta', `/${ABSENT.path}`), 403, 'Access denied');
      });
    });

    describe('conditional requests', function () {
      describe('If-None-Match', function () {
        const matching: ReadonlyArray<readonly [string, (etag: string) => string]> = [
          ['the exact ETag', (etag) => etag],
          ['the ETag marked weak (weak comparison)', (etag) => `W/${etag}`],
          ['a list that contains the ETag', (etag) => `"not-it", ${etag} , W/"nor-this"`],
          ['*', () => '*'],
        ];
        for (const [label, valueOf] of matching) {
          for (const method of ['GET', 'HEAD']) {
            it(`${method} responds 304 with ETag, Last-Modified, Cache-Control and no body when it is ${label}`, async function () {
              const value = valueOf(validatorsOf(BINARY).etag);
              expectNotModified(await gateway.get('acme', `/download/${BINARY.symbol}`, { 'if-none-match': value }, method), BINARY);
            });
          }
        }

        it('responds 200 with the file when no tag matches', async function () {
          expectWholeFile(await gateway.get('acme', `/download/${BINARY.symbol}`, { 'if-none-match': '"stale", W/"older"' }), BINARY);
        });

        it('responds 304 by path too', async function () {
          expectNotModified(await gateway.get('acme', DAILY_BY_PATH, { 'if-none-match': validatorsOf(DAILY).etag }), DAILY);
        });

        it('responds 304 even with a Range (preconditions come before Range)', async function () {
          const headers = { 'if-none-match': validatorsOf(BINARY).etag, range: 'bytes=0-9' };
          expectNotModified(await gateway.get('acme', `/download/${BINARY.symbol}`, headers), BINARY);
        });
      });

      describe('If-Modified-Since', function () {
        it('responds 304 when it equals Last-Modified', async function () {
          const headers = { 'if-modified-since': validatorsOf(BINARY).lastModified };
          expectNotModified(await gateway.get('acme', `/download/${BINARY.symbol}`, headers), BINARY);
        });

        it('responds 304 to HEAD when it equals Last-Modified', async function () {
          const headers = { 'if-modified-since': validatorsOf(BINARY).lastModified };
          expectNotModified(await gateway.get('acme', `/download/${BINARY.symbol}`, headers, 'HEAD'), BINARY);
        });

        it('responds 200 with the file when it is older than Last-Modified', async function () {
          expectWholeFile(await gateway.get('acme', `/download/${BINARY.symbol}`, { 'if-modified-since': LONG_AGO }), BINARY);
        });

        it('ignores an invalid date and responds 200', async function () {
          expectWholeFile(await gateway.get('acme', `/download/${BINARY.symbol}`, { 'if-modified-since': 'yesterday' }), BINARY);
        });

        it('is ignored when If-None-Match is present and does not match (RFC 9110 section 13.1.3)', async function () {
          const headers = { 'if-none-match': '"stale"', 'if-modified-since': validatorsOf(BINARY).lastModified };
          expectWholeFile(await gateway.get('acme', `/download/${BINARY.symbol}`, headers), BINARY);
        });
      });

      describe('If-Match', function () {
        it('responds 412 when it does not match the ETag', async function () {
          const response = await gateway.get('acme', `/download/${BINARY.symbol}`, { 'if-match': '"stale"' });
          expectJsonError(response, 412, 'Precondition failed');
        });

        it('responds 412 to a weak tag, even the current one (strong comparison)', async function () {
          const response = await gateway.get('acme', `/download/${BINARY.symbol}`, { 'if-match': `W/${validatorsOf(BINARY).etag}` });
          expectJsonError(response, 412, 'Precondition failed');
        });

        it('responds 412 with no body to HEAD', async function () {
          const response = await gateway.get('acme', `/download/${BINARY.symbol}`, { 'if-match': '"stale"' }, 'HEAD');
          expectJsonError(response, 412, 'Precondition failed', 'HEAD');
        });

        it('responds 200 when it is *', async function () {
          expectWholeFile(await gateway.get('acme', `/download/${BINARY.symbol}`, { 'if-match': '*' }), BINARY);
        });

        it('responds 200 when it is the current ETag', async function () {
          expectWholeFile(await gateway.get('acme', `/download/${BINARY.symbol}`, { 'if-match': validatorsOf(BINARY).etag }), BINARY);
        });

        it('wins over a matching If-None-Match: 412, not 304 (RFC 9110 section 13.2.2)', async function () {
          const headers = { 'if-match': '"stale"', 'if-none-match': validatorsOf(BINARY).etag };
          expectJsonError(await gateway.get('acme', `/download/${BINARY.symbol}`, headers), 412, 'Precondition failed');
        });
      });

      describe('If-Unmodified-Since', function () {
        it('responds 412 when the date is before Last-Modified', async function () {
          const response = await gateway.get('acme', `/download/${BINARY.symbol}`, { 'if-unmodified-since': LONG_AGO });
          expectJsonError(response, 412, 'Precondition failed');
        });

        it('responds 200 when the date equals Last-Modified', async function () {
          const headers = { 'if-unmodified-since': validatorsOf(BINARY).lastModified };
          expectWholeFile(await gateway.get('acme', `/download/${BINARY.symbol}`, headers), BINARY);
        });
      });
    });

    describe('range requests', function () {
      const get = (range: string, headers: Record<string, string> = {}, file: SeededFile = BINARY): Promise<HttpResponse> =>
        gateway.get('acme', `/download/${file.symbol}`, { ...headers, range });

      it('responds 206 with bytes 0-99 for bytes=0-99', async function () {
        expectPartial(await get('bytes=0-99'), BINARY, 0, 99);
      });

      it('responds 206 from offset 100 to the end for bytes=100-', async function () {
        expectPartial(await get('bytes=100-'), BINARY, 100, SIZE - 1);
      });

      it('responds 206 with the last 10 bytes for the suffix range bytes=-10 (a Parquet footer read)', async function () {
        expectPartial(await get('bytes=-10'), BINARY, SIZE - 10, SIZE - 1);
      });

      it('clamps a last position past the end to the last byte', async function () {
        expectPartial(await get(`bytes=${SIZE - 50}-${SIZE * 10}`), BINARY, SIZE - 50, SIZE - 1);
      });

      it('responds 206 with the whole file for a suffix longer than the file (RFC 9110 section 14.1.3)', async function () {
        expectPartial(await get(`bytes=-${SIZE * 2}`), BINARY, 0, SIZE - 1);
      });

      it('responds 206 for the last single byte', async function () {
        expectPartial(await get(`bytes=${SIZE - 1}-${SIZE - 1}`), BINARY, SIZE - 1, SIZE - 1);
      });

      it('responds 206 for a range of the accented file by path', async function () {
        const response = await gateway.get('acme', DAILY_BY_PATH, { range: 'bytes=5-9' });
        expectPartial(response, DAILY, 5, 9);
      });

      for (const range of [`bytes=${SIZE}-`, `bytes=${SIZE + 10}-${SIZE + 20}`, 'bytes=-0']) {
        it(`responds 416 with Content-Range: bytes */size for ${range}`, async function () {
          const response = await get(range);
          expectJsonError(response, 416, 'Range not satisfiable');
          expect(response.headers['content-range']).to.equal(`bytes */${SIZE}`);
        });
      }

      it('HEAD ignores even an unsatisfiable Range: 200 with the full Content-Length and no body', async function () {
        const response = await gateway.get('acme', `/download/${BINARY.symbol}`, { range: `bytes=${SIZE}-` }, 'HEAD');
        expect(response.status).to.equal(200);
        expectFileHeaders(response, BINARY, SIZE);
        expect(response.body.length).to.equal(0);
      });

      for (const range of ['bytes=0-0', 'bytes=0-', 'bytes=-1']) {
        it(`responds 416 with Content-Range: bytes */0 for ${range} on the empty file`, async function () {
          const response = await get(range, {}, EMPTY);
          expectJsonError(response, 416, 'Range not satisfiable');
          expect(response.headers['content-range']).to.equal('bytes */0');
        });
      }

      for (const range of ['items=0-1', 'bytes=5-3', 'bytes=abc', 'bytes=', 'bytes=1-2-3']) {
        it(`ignores ${range} (other unit or invalid) and responds 200 with the whole file`, async function () {
          expectWholeFile(await get(range), BINARY);
        });
      }

      it('ignores empty list elements (RFC 9110 section 5.6.1): bytes=0-9, is bytes=0-9', async function () {
        expectPartial(await get('bytes=0-9,'), BINARY, 0, 9);
      });

      it('answers several ranges with one 206 covering them all, never only the first', async function () {
        expectPartial(await get('bytes=0-9,50-59'), BINARY, 0, 59);
      });

      it('covers unordered ranges from the lowest to the highest byte', async function () {
        expectPartial(await get('bytes=-10, 100-199'), BINARY, 100, SIZE - 1);
      });

      describe('with If-Range', function () {
        it('responds 206 when it is the current ETag', async function () {
          expectPartial(await get('bytes=0-99', { 'if-range': validatorsOf(BINARY).etag }), BINARY, 0, 99);
        });

        it('responds 200 with the whole file when the ETag is stale', async function () {
          expectWholeFile(await get('bytes=0-99', { 'if-range': '"stale"' }), BINARY);
        });

        it('responds 200 with the whole file for a weak ETag (strong comparison)', async function () {
          expectWholeFile(await get('bytes=0-99', { 'if-range': `W/${validatorsOf(BINARY).etag}` }), BINARY);
        });

        it('responds 206 when it is the exact Last-Modified date', async function () {
          expectPartial(await get('bytes=0-99', { 'if-range': validatorsOf(BINARY).lastModified }), BINARY, 0, 99);
        });

        it('responds 200 with the whole file when the date is not Last-Modified', async function () {
          expectWholeFile(await get('bytes=0-99', { 'if-range': LONG_AGO }), BINARY);
        });
      });

      it('HEAD ignores Range: 200 with the full Content-Length and no body', async function () {
        const response = await gateway.get('acme', `/download/${BINARY.symbol}`, { range: 'bytes=0-99' }, 'HEAD');
        expect(response.status).to.equal(200);
        expectFileHeaders(response, BINARY, SIZE);
        expect(response.headers['content-range']).to.equal(undefined);
        expect(response.body.length).to.equal(0);
      });
    });

    describe('files whose path begins with a route name', function () {
      it('GET /catalog still returns the catalog JSON, listing the file named catalog', async function () {
        const response = await gateway.get('acme', '/catalog');
        expect(response.status).to.equal(200);
        expect(String(response.headers['content-type'])).to.match(/^application\/json/);
        const fileNames = jsonOf(response).files.map((file: { FileName: string }) => file.FileName);
        expect(fileNames).to.include.members(['catalog', 'list/x.csv']);
      });

      it('GET /list still returns the listing JSON', async function () {
        const response = await gateway.get('acme', '/list');
        expect(response.status).to.equal(200);
        expect(jsonOf(response).files.map((file: { symbol: string }) => file.symbol)).to.include.members([
          CATALOG_FILE.symbol,
          LIST_FILE.symbol,
        ]);
      });

      it('GET /list/x.csv is not served by path (404, no route)', async function () {
        const response = await gateway.get('acme', `/${LIST_FILE.path}`);
        expectJsonError(response, 404, 'Not found');
        expect(response.body.includes(LIST_FILE.bytes)).to.equal(false);
      });

      for (const file of [CATALOG_FILE, LIST_FILE]) {
        it(`serves ${file.path} through /download/${file.symbol}`, async function () {
          expectWholeFile(await gateway.get('acme', `/download/${file.symbol}`), file);
        });
      }
    });
  });
}

/** Files `F1.csv` ... `F<n>.csv` under the symbols `F1` ... `F<n>`, in one client's index. */
const numberedFiles = (count: number): Array<{ readonly symbol: string; readonly path: string; readonly bytes: string }> =>
  Array.from({ length: count }, (_, i) => ({ symbol: `F${i + 1}`, path: `rates/f${i + 1}.csv`, bytes: `date,rate\n2024-01-0${(i % 9) + 1},${i}\n` }));

describe('download rate limit (in-memory store, 2 downloads per 60 s)', function () {
  let fixture: BlobStoreFixture;
  let gateway: TestGateway;
  const FILES = numberedFiles(4);
  const [FILE, SECOND, THIRD] = FILES as [(typeof FILES)[0], (typeof FILES)[0], (typeof FILES)[0]];

  beforeEach(async function () {
    fixture = await memoryFixture();
    const index = buildIndexCsv(FILES.map((file) => buildIndexRow({ Symbol: file.symbol, FileName: file.path })));
    await fixture.put('indexes/acme.csv', index);
    await fixture.put('indexes/beta.csv', index);
    for (const file of FILES) await fixture.put(file.path, file.bytes);
    // A fresh gateway per test, so each starts with a full budget.
    gateway = await startGateway({
      store: fixture.store,
      clients: [
        { clientId: 'acme', secret: 'acme-secret-acme-secret' },
        { clientId: 'beta', secret: 'beta-secret-beta-secret' },
      ],
      env: { DOWNLOAD_RATE_LIMIT: '2' },
    });
  });

  afterEach(async function () {
    await gateway?.close();
    await fixture?.cleanup();
  });

  const download = (file = FILE, clientId = 'acme', method = 'GET', headers = {}): Promise<HttpResponse> =>
    gateway.get(clientId, `/download/${file.symbol}`, headers, method);

  const expectTooManyRequests = (response: HttpResponse, method = 'GET'): void => {
    expect(response.status).to.equal(429);
    const retryAfter = String(response.headers['retry-after']);
    expect(retryAfter, 'Retry-After is whole seconds').to.match(/^\d+$/);
    expect(Number(retryAfter)).to.be.at.least(1).and.at.most(60);
    expect(response.headers['cache-control']).to.equal('no-store');
    expect(String(response.headers['content-type'])).to.match(/^application\/json/);
    if (method === 'HEAD') {
      expect(response.body.length).to.equal(0);
      return;
    }
    const body = jsonOf(response);
    expect(body.error).to.equal('Too many requests');
    expect(body.message).to.be.a('string').and.match(/limit/i);
    for (const file of FILES) expect(response.body.includes(Buffer.from(file.bytes))).to.equal(false);
  };

  it('serves 2 different files, then responds 429 to a third with Retry-After, no-store and a JSON error', async function () {
    expect((await download(FILE)).status).to.equal(200);
    expect((await download(SECOND)).status).to.equal(200);
    expectTooManyRequests(await download(THIRD));
  });

  it('refuses a download over the budget without asking storage anything, unless it may be a 304', async function () {
    expect((await download(FILE)).status).to.equal(200);
    expect((await download(SECOND)).status).to.equal(200);
    const store = fixture.store as { getProperties: (path: string) => Promise<unknown> };
    const original = store.getProperties.bind(store);
    let propertyReads = 0;
    store.getProperties = (path) => {
      propertyReads += 1;
      return original(path);
    };
    expectTooManyRequests(await download(THIRD));
    expect(propertyReads, 'storage calls for a refused download').to.equal(0);
    // A revalidation may be a 304, which is never refused: it is decided first.
    expect((await download(THIRD, 'acme', 'GET', { 'if-none-match': '"not-the-current-tag"' })).status).to.equal(429);
    expect(propertyReads).to.equal(1);
  });

  it('counts HEAD requests and refuses a HEAD over the limit with 429 and no body', async function () {
    expect((await download(FILE, 'acme', 'HEAD')).status).to.equal(200);
    expect((await download(SECOND, 'acme', 'HEAD')).status).to.equal(200);
    expectTooManyRequests(await download(THIRD, 'acme', 'HEAD'), 'HEAD');
    expectTooManyRequests(await download(THIRD, 'acme', 'GET'));
  });

  it('counts downloads by path against the same budget', async function () {
    expect((await gateway.get('acme', `/${FILE.path}`)).status).to.equal(200);
    expect((await download(SECOND)).status).to.equal(200);
    expectTooManyRequests(await gateway.get('acme', `/${THIRD.path}`));
  });

  it('keeps each client\'s budget apart: another client still downloads', async function () {
    await download(FILE);
    await download(SECOND);
    expectTooManyRequests(await download(THIRD));
    const other = await download(THIRD, 'beta');
    expect(other.status).to.equal(200);
    expect(other.body.toString()).to.equal(THIRD.bytes);
  });

  it('neither counts a 304 revalidation nor refuses one when the budget is spent', async function () {
    const etag = jsonOf<{ etag: string }>(await gateway.get('acme', `/info/${FILE.symbol}`)).etag;
    // Not counted: three 304s first, and still two other files are served.
    for (let i = 0; i < 3; i += 1) expect((await download(FILE, 'acme', 'GET', { 'if-none-match': etag })).status).to.equal(304);
    expect((await download(SECOND)).status).to.equal(200);
    expect((await download(THIRD)).status).to.equal(200);
    expectTooManyRequests(await download(FILE));
    // Not refused: with the budget spent, revalidation still gets 304, by symbol and by path, GET and HEAD.
    const revalidated = await download(FILE, 'acme', 'GET', { 'if-none-match': etag });
    expect(revalidated.status).to.equal(304);
    expect(revalidated.headers['etag']).to.equal(etag);
    expect((await download(FILE, 'acme', 'HEAD', { 'if-none-match': etag })).status).to.equal(304);
    expect((await gateway.get('acme', `/${FILE.path}`, { 'if-none-match': etag })).status).to.equal(304);
  });
});

describe('random-access readers: the partial requests of one file version count once per client within the window; every whole body counts (limit 5)', function () {
  let fixture: BlobStoreFixture;
  let gateway: TestGateway;
  const FILES = numberedFiles(7);
  const [FIRST] = FILES as [(typeof FILES)[0]];

  beforeEach(async function () {
    fixture = await memoryFixture();
    await fixture.put('indexes/acme.csv', buildIndexCsv(FILES.map((file) => buildIndexRow({ Symbol: file.symbol, FileName: file.path }))));
    await fixture.put('indexes/beta.csv', buildIndexCsv(FILES.map((file) => buildIndexRow({ Symbol: file.symbol, FileName: file.path }))));
    for (const file of FILES) await fixture.put(file.path, file.bytes);
    gateway = await startGateway({
      store: fixture.store,
      clients: [
        { clientId: 'acme', secret: 'acme-secret-acme-secret' },
        { clientId: 'beta', secret: 'beta-secret-beta-secret' },
      ],
      env: { DOWNLOAD_RATE_LIMIT: '5' },
    });
  });

  afterEach(async function () {
    await gateway?.close();
    await fixture?.cleanup();
  });

  it('serves 40 range reads and a HEAD of one file as one download (as fsspec and parquet readers do), then 4 whole bodies, and refuses a 5th', async function () {
    for (let i = 0; i < 40; i += 1) {
      const start = i % FIRST.bytes.length;
      const response = await gateway.get('acme', i % 2 === 0 ? `/download/${FIRST.symbol}` : `/${FIRST.path}`, { range: `bytes=${start}-${start}` });
      expect(response.status, `range read ${i + 1}`).to.equal(206);
      expect(response.body.toString()).to.equal(FIRST.bytes[start]);
    }
    // A HEAD of the same version is one of its partial reads; a whole body is a download of its own.
    expect((await gateway.get('acme', `/download/${FIRST.symbol}`, {}, 'HEAD')).status).to.equal(200);
    expect((await gateway.get('acme', `/download/${FIRST.symbol}`)).status).to.equal(200);
    for (const file of FILES.slice(1, 4)) expect((await gateway.get('acme', `/download/${file.symbol}`)).status, file.symbol).to.equal(200);
    expect((await gateway.get('acme', `/download/${FILES[4]?.symbol}`)).status, 'a 6th download').to.equal(429);
    // Ranges of a version already counted are still served; a whole body again is refused.
    expect((await gateway.get('acme', `/download/${FIRST.symbol}`, { range: 'bytes=0-3' })).status).to.equal(206);
    expect((await gateway.get('acme', `/download/${FILES[1]?.symbol}`)).status, 'the same whole file again').to.equal(429);
  });

  it('counts every whole download of the same file version: the 6th whole GET of one file answers 429 with Retry-After', async function () {
    let etag = '';
    for (let i = 0; i < 5; i += 1) {
      const whole = await gateway.get('acme', `/download/${FIRST.symbol}`);
      expect(whole.status, `whole GET ${i + 1}`).to.equal(200);
      etag = String(whole.headers['etag']);
    }
    const refused = await gateway.get('acme', `/${FIRST.path}`);
    expect(refused.status).to.equal(429);
    expect(Number(refused.headers['retry-after'])).to.be.greaterThan(0);
    // A revalidation is never counted nor refused.
    expect((await gateway.get('acme', `/download/${FIRST.symbol}`, { 'if-none-match': etag })).status).to.equal(304);
  });

  it('counts a changed file (new ETag) as a new download', async function () {
    expect((await gateway.get('acme', `/download/${FIRST.symbol}`, { range: 'bytes=0-3' })).status).to.equal(206);
    await fixture.put(FIRST.path, `${FIRST.bytes}changed\n`);
    for (let i = 0; i < 10; i += 1) expect((await gateway.get('acme', `/download/${FIRST.symbol}`, { range: 'bytes=0-3' })).status).to.equal(206);
    // Two versions of the first file, then three others: the budget of 5 is spent.
    for (const file of FILES.slice(1, 4)) expect((await gateway.get('acme', `/download/${file.symbol}`)).status, file.symbol).to.equal(200);
    expect((await gateway.get('acme', `/download/${FILES[4]?.symbol}`)).status).to.equal(429);
  });

  it('counts the same file version once per client: another client is counted for it too', async function () {
    for (const file of FILES.slice(0, 5)) expect((await gateway.get('acme', `/download/${file.symbol}`)).status).to.equal(200);
    for (const file of FILES.slice(0, 5)) expect((await gateway.get('beta', `/download/${file.symbol}`)).status).to.equal(200);
    expect((await gateway.get('acme', `/download/${FILES[5]?.symbol}`)).status).to.equal(429);
    expect((await gateway.get('beta', `/download/${FILES[5]?.symbol}`)).status).to.equal(429);
  });

  it('counts parallel first reads of one new version once', async function () {
    const reads = await Promise.all(Array.from({ length: 8 }, () => gateway.get('acme', `/download/${FIRST.symbol}`, { range: 'bytes=0-0' })));
    expect(reads.map((read) => read.status)).to.deep.equal(Array(8).fill(206));
    for (const file of FILES.slice(1, 5)) expect((await gateway.get('acme', `/download/${file.symbol}`)).status, file.symbol).to.equal(200);
  });
});

describe('downloads are never a page of the gateway\'s origin', function () {
  let fixture: BlobStoreFixture;
  let gateway: TestGateway;

  before(async function () {
    fixture = await memoryFixture();
    await fixture.put(
      'indexes/acme.csv',
      buildIndexCsv([buildIndexRow({ Symbol: 'PAGE', FileName: 'web/page.html' }), buildIndexRow({ Symbol: 'CSV', FileName: 'data/a.csv' })]),
    );
    // A vendor's mistake, or an attacker's upload: HTML stored to be shown inline.
    await fixture.put('web/page.html', '<script>fetch("/catalog")</script>', { contentType: 'text/html', contentDisposition: 'inline' });
    await fixture.put('data/a.csv', 'a,b\n1,2\n', { contentType: 'text/csv' });
    gateway = await startGateway({ store: fixture.store, clients: [{ clientId: 'acme', secret: 'acme-secret-acme-secret' }] });
  });

  after(async function () {
    await gateway?.close();
    await fixture?.cleanup();
  });

  it('answers every download (200, 206, 304, HEAD, by symbol and by path) with X-Content-Type-Options: nosniff', async function () {
    const full = await gateway.get('acme', '/download/CSV');
    const etag = String(full.headers['etag']);
    const responses = [
      full,
      await gateway.get('acme', '/download/CSV', { range: 'bytes=0-1' }),
      await gateway.get('acme', '/download/CSV', { 'if-none-match': etag }),
      await gateway.get('acme', '/download/CSV', {}, 'HEAD'),
      await gateway.get('acme', '/data/a.csv'),
    ];
    expect(responses.map((response) => response.status)).to.deep.equal([200, 206, 304, 200, 200]);
    for (const response of responses) expect(response.headers['x-content-type-options']).to.equal('nosniff');
  });

  it('serves an HTML file stored inline under Content-Security-Policy: sandbox, so no script of it runs on the gateway origin', async function () {
    const response = await gateway.get('acme', '/download/PAGE');
    expect(response.status).to.equal(200);
    expect(response.headers['content-type']).to.equal('text/html');
    expect(response.headers['content-security-policy']).to.equal('sandbox');
    expect(response.headers['x-content-type-options']).to.equal('nosniff');
  });
});
