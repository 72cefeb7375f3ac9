import { expect } from 'chai';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { expectMatchesContract } from '../support/contract.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import type { components } from './generated/api-types.js';

/*
 * What a subscriber's generated client must be able to do against the running gateway, written once
 * and run through every generator's client (openapi-typescript + openapi-fetch, @hey-api/openapi-ts).
 * Each client is wrapped in `ConsumerCalls`, typed with openapi-typescript's schema types: a client
 * whose generated types disagree with them does not compile.
 */

type Schemas = components['schemas'];

/** What one call of a generated client gave: the typed body or typed error, and the response. */
export interface Answer<T, E = Schemas['Error']> {
  readonly status: number;
  readonly data: T | undefined;
  readonly error: E | undefined;
  readonly headers: Headers;
}

/** The calls every scenario makes, each through the generated client's own way of making it. */
export interface ConsumerCalls {
  issueToken(request: Schemas['TokenRequest']): Promise<Answer<Schemas['TokenResponse'], Schemas['OAuthError'] | Schemas['Error']>>;
  getCatalog(token?: string): Promise<Answer<Schemas['Catalog']>>;
  listFiles(token: string, limit: number): Promise<Answer<Schemas['FileList']>>;
  countFiles(token: string): Promise<Answer<Schemas['FileCount']>>;
  getFileInfo(token: string, symbol: string): Promise<Answer<Schemas['FileInfo']>>;
  downloadBySymbol(token: string, symbol: string, range?: string): Promise<Answer<ArrayBuffer>>;
  getAuthorizationServerMetadata(): Promise<Answer<Schemas['AuthorizationServerMetadata']>>;
}

/**
 * A generated client's `{data, error, response}` as an `Answer`. Both generators type `data` and
 * `error` as a union with `undefined` (one of them is always absent), hence `NonNullable`.
 */
export function answerOf<T, E>(result: { data?: T | undefined; error?: E | undefined; response?: Response }): Answer<NonNullable<T>, NonNullable<E>> {
  if (result.response === undefined) throw new Error('no response: the request failed before the gateway answered');
  return { status: result.response.status, data: result.data ?? undefined, error: result.error ?? undefined, headers: result.response.headers };
}

/** Builds a client's calls for a base URL; every request goes through `fetch`, which checks the contract. */
export type ConsumerClientFactory = (baseUrl: string, fetch: (request: Request) => Promise<Response>) => ConsumerCalls;

const acme = { clientId: 'acme', secret: 'acme-secret-acme-secret' };
const curveCsv = 'date,rate\n2024-01-02,10.5\n';

/** Every response a consumer gets is also checked against openapi.yaml, as the harness does. */
async function contractCheckedFetch(request: Request): Promise<Response> {
  const response = await fetch(request);
  const url = new URL(request.url);
  await expectMatchesContract(request.method, url.pathname + url.search, {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: Buffer.from(await response.clone().arrayBuffer()),
  });
  return response;
}

const text = (bytes: ArrayBuffer | undefined): string => Buffer.from(bytes ?? new ArrayBuffer(0)).toString('utf8');

/** The consumer scenarios, against a gateway of their own, through the client `factory` builds. */
export function describeConsumerScenarios(factory: ConsumerClientFactory): void {
  describe('against a running gateway', function () {
    let gateway: TestGateway;
    let calls: ConsumerCalls;
    let token: string;

    before(async function () {
      const store = new MemoryBlobStore();
      store.put(
        'indexes/acme.csv',
        buildIndexCsv([
          buildIndexRow({ Symbol: 'CURVE', ShortDescription: 'DI1 curve', ShortDescriptionPt: '', FileName: 'rates/curve.csv' }),
          buildIndexRow({ Symbol: 'QUOTES', FileName: 'b3/quotes.csv' }),
          buildIndexRow({ Symbol: 'MISSING', FileName: 'rates/missing.csv' }),
        ]),
      );
      store.put('rates/curve.csv', curveCsv, { contentType: 'text/csv', metadata: { source: 'b3' } });
      store.put('b3/quotes.csv', 'date,close\n');
      gateway = await startGateway({ store, clients: [acme] });
      calls = factory(gateway.baseUrl, contractCheckedFetch);

      const { data, error } = await calls.issueToken({ grant_type: 'client_credentials', client_id: acme.clientId, client_secret: acme.secret });
      if (data === undefined) throw new Error(`token request failed: ${JSON.stringify(error)}`);
      token = data.access_token;
    });

    after(async function () {
      await gateway?.close();
    });

    describe('GET /.well-known/oauth-authorization-server', function () {
      it('finds the token endpoint from the base URL alone (RFC 8414)', async function () {
        const { data } = await calls.getAuthorizationServerMetadata();

        expect(data?.token_endpoint).to.equal(`${gateway.baseUrl}/oauth/token`);
        expect(data?.grant_types_supported).to.deep.equal(['client_credentials']);
      });
    });

    describe('POST /oauth/token', function () {
      it('issues a Bearer token typed as TokenResponse', async function () {
        const { data, status } = await calls.issueToken({ grant_type: 'client_credentials', client_id: acme.clientId, client_secret: acme.secret });

        expect(status).to.equal(200);
        expect(data?.token_type).to.equal('Bearer');
        expect(data?.expires_in).to.be.a('number').and.above(0);
        expect(data?.access_token).to.be.a('string').and.not.equal('');
      });

      it('answers a wrong secret with an OAuthError typed invalid_client (RFC 6749 section 5.2)', async function () {
        const { data, error, status } = await calls.issueToken({ grant_type: 'client_credentials', client_id: acme.clientId, client_secret: 'not-the-secret' });

        expect(data).to.equal(undefined);
        expect(status).to.equal(401);
        expect(error).to.include({ error: 'invalid_client' });
      });
    });

    describe('GET /catalog', function () {
      it('returns the catalog typed as Catalog', async function () {
        const { data, error } = await calls.getCatalog(token);

        expect(error).to.equal(undefined);
        expect(data?.clientId).to.equal('acme');
        expect(data?.count).to.equal(3);
        expect(data?.files[0]?.Symbol).to.equal('CURVE');
        expect(data?.files[0]?.Description).to.equal('DI1 curve');
        expect(data?.files[0]?.FileName).to.equal('rates/curve.csv');
      });

      it('answers a missing token with 401 and an Error body', async function () {
        const { error, status, headers } = await calls.getCatalog();

        expect(status).to.equal(401);
        expect(error?.error).to.equal('Unauthorized');
        expect(headers.get('www-authenticate')).to.match(/^Bearer /);
      });
    });

    describe('GET /list', function () {
      it('applies the limit query parameter and says the list is truncated', async function () {
        const { data } = await calls.listFiles(token, 1);

        expect(data?.limit).to.equal(1);
        expect(data?.truncated).to.equal(true);
        expect(data?.files.map((file) => file.symbol)).to.deep.equal(['CURVE']);
        expect(data?.files[0]?.size).to.equal(curveCsv.length);
        expect(Date.parse(data?.files[0]?.uploaded ?? '')).to.not.be.NaN;
      });

      it('reports count as the number of entries in files, as the FileList schema documents', async function () {
        const { data } = await calls.listFiles(token, 1);

        expect(data?.count, 'FileList.count: "The number of entries in `files`."').to.equal(data?.files.length);
      });

      it('answers an out-of-range limit with 400 and validation details', async function () {
        const { error, status } = await calls.listFiles(token, 0);

        expect(status).to.equal(400);
        expect(error?.error).to.equal('Bad request');
        expect(error?.details).to.be.an('array').that.is.not.empty;
      });
    });

    describe('GET /count', function () {
      it('counts the files storage holds', async function () {
        const { data } = await calls.countFiles(token);

        expect(data?.count).to.equal(2);
      });
    });

    describe('GET /info/{symbol}', function () {
      it('returns FileInfo with the ETag of the file', async function () {
        const { data, headers } = await calls.getFileInfo(token, 'CURVE');

        expect(data?.symbol).to.equal('CURVE');
        expect(data?.size).to.equal(curveCsv.length);
        expect(data?.etag).to.equal(headers.get('etag'));
        expect(data?.httpMetadata.contentType).to.equal('text/csv');
        expect(data?.customMetadata).to.deep.equal({ source: 'b3' });
      });

      it('types a 403 for a symbol outside the subscription as the contract Error', async function () {
        const { data, error, status } = await calls.getFileInfo(token, 'NOT_MINE');

        expect(data).to.equal(undefined);
        expect(status).to.equal(403);
        expect(error?.error).to.equal('Access denied');
        expect(error?.message).to.be.a('string');
      });

      it('types a 404 for a subscribed file storage does not hold as the contract Error', async function () {
        const { error, status } = await calls.getFileInfo(token, 'MISSING');

        expect(status).to.equal(404);
        expect(error?.error).to.equal('Not found');
      });
    });

    describe('GET /download/{symbol}', function () {
      it('returns the requested range as an ArrayBuffer with 206 and Content-Range', async function () {
        const { data, status, headers } = await calls.downloadBySymbol(token, 'CURVE', 'bytes=0-3');

        expect(status).to.equal(206);
        expect(headers.get('content-range')).to.equal(`bytes 0-3/${curveCsv.length}`);
        expect(text(data)).to.equal('date');
      });

      it('returns the whole file with 200 without a Range', async function () {
        const { data, status } = await calls.downloadBySymbol(token, 'CURVE');

        expect(status).to.equal(200);
        expect(text(data)).to.equal(curveCsv);
      });

      it('types a 403 for a symbol outside the subscription as the contract Error', async function () {
        const { data, error, status } = await calls.downloadBySymbol(token, 'NOT_MINE');

        expect(data).to.equal(undefined);
        expect(status).to.equal(403);
        expect(error?.error).to.equal('Access denied');
      });

      it('types a 404 for a file storage does not hold as the contract Error', async function () {
        const { error, status } = await calls.downloadBySymbol(token, 'MISSING');

        expect(status).to.equal(404);
        expect(error?.error).to.equal('Not found');
      });
    });
  });
}
