import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { DownloadAuditRecord } from '../../src/adapters/audit/audit-trail.js';
import { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { AzureBlobStore } from '../../src/adapters/storage/azure-blob-store.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { StorageUnavailable } from '../../src/domain/errors.js';
import type { BlobContent, BlobProperties, BlobReadOptions, Clock } from '../../src/domain/ports.js';
import { capturedAudit } from '../support/audit-capture.js';
import { startGateway, testConfig, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody } from '../support/json.js';
import { captureLog } from '../support/log-capture.js';
import { azuriteFixture, localFolderFixture, memoryFixture, type BlobStoreFixture } from '../support/store-fixtures.js';
import { deadline } from '../support/deadlines.js';

const run = promisify(execFile);

const acme = { clientId: 'acme', secret: 'acme-secret-acme-secret' };
const other = { clientId: 'other', secret: 'other-secret-other-secret' };
const BYTES = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7) % 256));
const INDEX = buildIndexCsv([
  buildIndexRow({ Symbol: 'FILE', FileName: 'data/file.bin' }),
  buildIndexRow({ Symbol: 'GONE', FileName: 'data/gone.bin' }),
  buildIndexRow({ Symbol: 'FAILS', FileName: 'data/fails.bin' }),
  buildIndexRow({ Symbol: 'CHANGING', FileName: 'data/changing.bin' }),
]);

interface DownloadLink {
  readonly url: string;
  readonly expiresAt: string;
  readonly size: number;
  readonly etag: string;
}

/** A clock the test moves. */
class TestClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
}

/** Storage that fails on `data/fails.bin` as the test says, after it was found (so a link to it can be made). */
class SwitchableFailureStore extends MemoryBlobStore {
  failure: 'none' | 'busy' | 'broken' | 'bug' = 'none';

  #check(path: string): void {
    if (path !== 'data/fails.bin') return;
    if (this.failure === 'busy') throw new StorageUnavailable('storage is throttling', { retryable: true });
    if (this.failure === 'broken') throw new StorageUnavailable('storage refused', { retryable: false });
    if (this.failure === 'bug') throw new TypeError('an adapter bug');
  }

  override async getProperties(path: string): Promise<BlobProperties | undefined> {
    this.#check(path);
    return super.getProperties(path);
  }

  override async read(path: string, options: BlobReadOptions): Promise<BlobContent> {
    this.#check(path);
    return super.read(path, options);
  }
}

/** The request target of a gateway URL (path and query), as the test client sends it. */
function targetOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

/** Waits until the audit trail has `count` download records (they are written once the response is done). */
async function auditedDownloads(audited: ReturnType<typeof capturedAudit>, count: number): Promise<DownloadAuditRecord[]> {
  for (let waited = 0; audited.downloads().length < count && waited < deadline(200); waited += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  return audited.downloads();
}

describe('direct links (DOWNLOAD_LINKS)', function () {
  describe('when off (the default), with the portal off too (PORTAL=off)', function () {
    let gateway: TestGateway;

    before(async function () {
      const store = new MemoryBlobStore();
      store.put('indexes/acme.csv', INDEX);
      store.put('data/file.bin', BYTES);
      // The portal's links are gateway-signed whatever DOWNLOAD_LINKS says (test/portal/portal-routes.test.ts).
      gateway = await startGateway({ store, clients: [acme], env: { PORTAL: 'off' } });
    });

    after(async function () {
      await gateway.close();
    });

    it('has no GET /link/<symbol> (404 route_not_found) and no signed-link route', async function () {
      const link = await gateway.get('acme', '/link/FILE');
      expect(link.status).to.equal(404);
      expect(jsonOf<ErrorBody>(link).code).to.equal('route_not_found');
      const signed = await gateway.request('GET', '/download/signed/file.bin?token=abc');
      expect(signed.status).to.equal(404);
      expect(jsonOf<ErrorBody>(signed).code).to.equal('route_not_found');
    });

    it('sends the bytes for ?redirect=true, as without it', async function () {
      const response = await gateway.get('acme', '/download/FILE?redirect=true');
      expect(response.status).to.equal(200);
      expect(response.body.equals(BYTES)).to.equal(true);
    });

    it('refuses DOWNLOAD_LINKS=on with a SAS connection string, which cannot sign links', function () {
      expect(() =>
        testConfig({
          DOWNLOAD_LINKS: 'on',
          AZURE_STORAGE_CONNECTION_STRING: 'BlobEndpoint=https://acct.blob.core.windows.net;SharedAccessSignature=sv=2022-11-02&sig=x',
          AZURE_STORAGE_CONTAINER: 'data',
          CLIENTS_FILE: '/tmp/clients.json',
        }),
      ).to.throw(/DOWNLOAD_LINKS.*AccountKey/);
    });
  });

  for (const { name, create } of [
    { name: 'in-memory store', create: memoryFixture },
    { name: 'local folder store', create: localFolderFixture },
  ] as const) {
    describe(`gateway-signed links on the ${name}`, function () {
      let fixture: BlobStoreFixture;
      let gateway: TestGateway;
      let audited: ReturnType<typeof capturedAudit>;
      const clock = new TestClock();

      before(async function () {
        fixture = await create();
        await fixture.put('indexes/acme.csv', INDEX);
        await fixture.put('indexes/other.csv', buildIndexCsv([buildIndexRow({ Symbol: 'OTHER', FileName: 'data/other.bin' })]));
        await fixture.put('data/file.bin', BYTES);
        await fixture.put('data/other.bin', Buffer.from('other'));
        audited = capturedAudit();
        gateway = await startGateway({
          store: fixture.store,
          clients: [acme, other],
          clock,
          audit: audited.audit,
          env: { DOWNLOAD_LINKS: 'on', DOWNLOAD_LINK_TTL_SECONDS: '60', DOWNLOAD_RATE_LIMIT: '1000' },
        });
      });

      after(async function () {
        await gateway.close();
        await fixture.cleanup();
      });

      afterEach(function () {
        clock.offsetMs = 0;
      });

      const linkFor = async (symbol: string): Promise<DownloadLink> => {
        const response = await gateway.get('acme', `/link/${symbol}`);
        expect(response.status, response.body.toString()).to.equal(200);
        return jsonOf<DownloadLink>(response);
      };

      it('GET /link/<symbol> answers {url, expiresAt, size, etag}, never cached, expiring DOWNLOAD_LINK_TTL_SECONDS later', async function () {
        const before = Date.now();
        const response = await gateway.get('acme', '/link/FILE');
        expect(response.status).to.equal(200);
        expect(response.headers['cache-control']).to.equal('no-store');
        const link = jsonOf<DownloadLink>(response);
        expect(Object.keys(link).sort()).to.deep.equal(['etag', 'expiresAt', 'size', 'url']);
        expect(link.size).to.equal(BYTES.length);
        const info = jsonOf<{ etag: string }>(await gateway.get('acme', '/info/FILE'));
        expect(link.etag).to.equal(info.etag);
        const expiresAt = Date.parse(link.expiresAt);
        expect(expiresAt).to.be.within(before + 59_000, Date.now() + 60_000);
        expect(link.url).to.match(new RegExp(`^${gateway.baseUrl}/download/signed/file\\.bin\\?token=[\\w-]+\\.[\\w-]+\\.[\\w-]+$`));
      });

      it('the link serves the file without a bearer token, with the download headers', async function () {
        const link = await linkFor('FILE');
        const response = await gateway.request('GET', targetOf(link.url));
        expect(response.status).to.equal(200);
        expect(response.body.equals(BYTES)).to.equal(true);
        expect(response.headers['etag']).to.equal(link.etag);
        expect(response.headers['content-disposition']).to.equal('attachment; filename="file.bin"');
        expect(response.headers['cache-control']).to.equal('private');
        expect(response.headers['content-security-policy']).to.equal('sandbox');
      });

      it('the link honours Range, conditionals and HEAD', async function () {
        const link = await linkFor('FILE');
        const target = targetOf(link.url);
        const partial = await gateway.request('GET', target, { headers: { range: 'bytes=100-199' } });
        expect(partial.status).to.equal(206);
        expect(partial.body.equals(BYTES.subarray(100, 200))).to.equal(true);
        expect((await gateway.request('GET', target, { headers: { 'if-none-match': link.etag } })).status).to.equal(304);
        const unsatisfiable = await gateway.request('GET', target, { headers: { range: `bytes=${BYTES.length}-` } });
        expect(unsatisfiable.status).to.equal(416);
        const head = await gateway.request('HEAD', target);
        expect(head.status).to.equal(200);
        expect(head.headers['content-length']).to.equal(String(BYTES.length));
        expect(head.body.length).to.equal(0);
        expect((await gateway.request('HEAD', target, { headers: { 'if-none-match': link.etag } })).status).to.equal(304);
        expect((await gateway.request('GET', target, { headers: { range: `bytes=${'1'.repeat(9000)}-` } })).status).to.equal(431);
        expect((await gateway.request('HEAD', target, { headers: { 'if-none-match': `"${'a'.repeat(9000)}"` } })).status).to.equal(431);
      });

      it('a changed file is not served through a link made for the previous version (412)', async function () {
        await fixture.put('data/changing.bin', Buffer.from('version 1'));
        const link = await linkFor('CHANGING');
        // Another size: another version on every store, whatever its clock resolution.
        await fixture.put('data/changing.bin', Buffer.from('version 2, longer'));
        const response = await gateway.request('GET', targetOf(link.url));
        expect(response.status).to.equal(412);
        expect(jsonOf<ErrorBody>(response).message).to.match(/changed since the link was made/);
        expect((await gateway.request('HEAD', targetOf(link.url))).status).to.equal(412);
      });

      it('a file removed after the link was made answers 404', async function () {
        await fixture.put('data/gone.bin', Buffer.from('soon gone'));
        const link = await linkFor('GONE');
        await fixture.remove('data/gone.bin');
        const response = await gateway.request('GET', targetOf(link.url));
        expect(response.status).to.equal(404);
        expect(jsonOf<ErrorBody>(response).code).to.equal('file_not_found');
        expect((await gateway.request('HEAD', targetOf(link.url))).status).to.equal(404);
      });

      it('refuses an expired, altered, forged or misnamed link with 403 invalid_link', async function () {
        const link = await linkFor('FILE');
        const target = targetOf(link.url);
        const token = new URL(link.url).searchParams.get('token') ?? '';
        const [header, payload, signature] = token.split('.') as [string, string, string];
        const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
        const altered = Buffer.from(JSON.stringify({ ...claims, path: 'data/other.bin' })).toString('base64url');
        const refusals: Array<[string, string]> = [
          ['altered to another file', `/download/signed/other.bin?token=${header}.${altered}.${signature}`],
          ['with another signature', `/download/signed/file.bin?token=${header}.${payload}.${'A'.repeat(signature.length)}`],
          ['not a JWT', '/download/signed/file.bin?token=garbage'],
          ['under another file name', target.replace('/file.bin?', '/other.bin?')],
          ['an access token instead of a link', `/download/signed/file.bin?token=${await gateway.tokenFor('acme')}`],
        ];
        for (const [what, refused] of refusals) {
          const response = await gateway.request('GET', refused);
          expect(response.status, what).to.equal(403);
          expect(jsonOf<ErrorBody>(response).code, what).to.equal('invalid_link');
        }
        expect((await gateway.request('HEAD', refusals[0]?.[1] ?? '')).status).to.equal(403);
        clock.offsetMs = 61_000;
        const expired = await gateway.request('GET', target);
        expect(expired.status).to.equal(403);
        expect(jsonOf<ErrorBody>(expired).message).to.match(/expired/);
      });

      it('a link is not a bearer token', async function () {
        const link = await linkFor('FILE');
        const token = new URL(link.url).searchParams.get('token') ?? '';
        const response = await gateway.request('GET', '/catalog', { headers: { authorization: `Bearer ${token}` } });
        expect(response.status).to.equal(401);
      });

      it('answers 400 to a signed-link request without its token', async function () {
        const response = await gateway.request('GET', '/download/signed/file.bin');
        expect(response.status).to.equal(400);
        expect((await gateway.request('HEAD', '/download/signed/file.bin')).status).to.equal(400);
      });

      it('checks entitlement exactly as a download does: 403 outside the index, 404 when not stored, 401 without a token', async function () {
        const notEntitled = await gateway.get('acme', '/link/OTHER');
        expect(notEntitled.status).to.equal(403);
        expect(jsonOf<ErrorBody>(notEntitled).code).to.equal('not_entitled');
        await fixture.remove('data/gone.bin').catch(() => undefined);
        const missing = await gateway.get('acme', '/link/GONE');
        expect(missing.status).to.equal(404);
        expect(jsonOf<ErrorBody>(missing).code).to.equal('file_not_found');
        expect((await gateway.request('GET', '/link/FILE')).status).to.equal(401);
        expect((await gateway.get('acme', `/link/${'X'.repeat(300)}`)).status).to.equal(400);
      });

      it('GET /download/<symbol>?redirect=true answers 307 to a link, never cached; so does GET /<path>?redirect=true', async function () {
        for (const path of ['/download/FILE?redirect=true', '/data/file.bin?redirect=true']) {
          const response = await gateway.get('acme', path);
          expect(response.status, path).to.equal(307);
          expect(response.headers['cache-control']).to.equal('no-store');
          const location = String(response.headers['location']);
          expect(location).to.match(new RegExp(`^${gateway.baseUrl}/download/signed/file\\.bin\\?token=`));
          const followed = await gateway.request('GET', targetOf(location), { headers: { range: 'bytes=0-9' } });
          expect(followed.status).to.equal(206);
          expect(followed.body.equals(BYTES.subarray(0, 10))).to.equal(true);
        }
      });

      it('a Host that is not a host and port gets 400 invalid_request: no link, no Location built on it', async function () {
        for (const path of ['/download/FILE?redirect=true', '/link/FILE']) {
          const response = await gateway.get('acme', path, { host: 'evil.example/phish?' });
          expect(response.status, path).to.equal(400);
          expect(jsonOf<ErrorBody>(response).code).to.equal('invalid_request');
          expect(response.headers['location']).to.equal(undefined);
          expect(response.body.toString()).to.not.include('evil');
        }
      });

      it('?redirect=true still answers 304, 412 and 416 itself, and HEAD is never redirected', async function () {
        const { etag } = await linkFor('FILE');
        expect((await gateway.get('acme', '/download/FILE?redirect=true', { 'if-none-match': etag })).status).to.equal(304);
        expect((await gateway.get('acme', '/download/FILE?redirect=true', { 'if-match': '"other"' })).status).to.equal(412);
        expect((await gateway.get('acme', '/download/FILE?redirect=true', { range: `bytes=${BYTES.length}-` })).status).to.equal(416);
        expect((await gateway.get('acme', '/download/FILE?redirect=true', {}, 'HEAD')).status).to.equal(200);
        expect((await gateway.get('acme', '/download/FILE?redirect=false')).status).to.equal(200);
      });

      it('audits a link as "linked" and a download through it under the link\'s client and symbol', async function () {
        const already = audited.downloads().length;
        const response = await gateway.get('acme', '/link/FILE', { 'x-request-id': 'link-1' });
        const link = jsonOf<DownloadLink>(response);
        await gateway.request('GET', targetOf(link.url), { headers: { 'x-request-id': 'link-2' } });
        await gateway.get('acme', '/download/FILE?redirect=true', { 'x-request-id': 'link-3' });
        const records = (await auditedDownloads(audited, already + 3)).slice(already);
        const byId = new Map(records.map((record) => [record.requestId, record]));
        expect(byId.get('link-1')).to.include({ clientId: 'acme', symbol: 'FILE', path: 'data/file.bin', outcome: 'linked', bytesSent: 0, status: 200 });
        expect(byId.get('link-2')).to.include({ clientId: 'acme', symbol: 'FILE', path: 'data/file.bin', outcome: 'completed', bytesSent: BYTES.length });
        expect(byId.get('link-3')).to.include({ clientId: 'acme', symbol: 'FILE', outcome: 'linked', status: 307 });
      });
    });
  }

  describe('rate limits, faults and logs', function () {
    let gateway: TestGateway;
    let store: SwitchableFailureStore;
    const log = captureLog('debug');

    before(async function () {
      store = new SwitchableFailureStore();
      store.put('indexes/acme.csv', INDEX);
      store.put('data/file.bin', BYTES);
      store.put('data/fails.bin', BYTES);
      gateway = await startGateway({
        store,
        clients: [acme],
        logger: log.logger,
        env: { DOWNLOAD_LINKS: 'on', DOWNLOAD_RATE_LIMIT: '6', DOWNLOAD_RATE_WINDOW_SECONDS: '3600' },
      });
    });

    after(async function () {
      await gateway.close();
    });

    afterEach(function () {
      store.failure = 'none';
    });

    it('answers 500, 502 and 503 through a link as for a download, and for GET /link', async function () {
      const link = jsonOf<DownloadLink>(await gateway.get('acme', '/link/FAILS'));
      const expected = { bug: 500, broken: 502, busy: 503 } as const;
      for (const [failure, status] of Object.entries(expected) as Array<[keyof typeof expected, number]>) {
        store.failure = failure;
        expect((await gateway.request('GET', targetOf(link.url))).status, failure).to.equal(status);
        expect((await gateway.request('HEAD', targetOf(link.url))).status, failure).to.equal(status);
        expect((await gateway.get('acme', '/link/FAILS')).status, failure).to.equal(status);
      }
    });

    it('issues links and redirects without counting them, and counts every whole download through a link: past DOWNLOAD_RATE_LIMIT it answers 429 with Retry-After', async function () {
      // Six are allowed in the window; the test above made one link to FAILS (a link costs nothing) and was refused
      // by storage nine times (never counted: the failures are the gateway's).
      const link = jsonOf<DownloadLink>(await gateway.get('acme', '/link/FILE'));
      for (let i = 0; i < 10; i += 1) expect((await gateway.get('acme', '/link/FILE')).status, `link ${i + 1}`).to.equal(200);
      for (let i = 0; i < 3; i += 1) expect((await gateway.get('acme', '/download/FILE?redirect=true')).status, `redirect ${i + 1}`).to.equal(307);
      // Each use of the same link is a whole download of its own.
      for (let i = 0; i < 6; i += 1) expect((await gateway.request('GET', targetOf(link.url))).status, `use ${i + 1}`).to.equal(200);
      const refused = await gateway.request('GET', targetOf(link.url));
      expect(refused.status, 'the 7th whole download through one link').to.equal(429);
      expect(refused.headers['retry-after']).to.match(/^\d+$/);
      expect((await gateway.get('acme', '/download/FILE')).status).to.equal(429);
      // Making a link still costs nothing: its uses are what count.
      expect((await gateway.get('acme', '/link/FILE')).status).to.equal(200);
    });

    it('never logs a link\'s token', async function () {
      const everything = log.text();
      expect(everything).to.include('/download/signed/');
      expect(everything).to.include('token=[redacted]');
      expect(everything).not.to.match(/token=eyJ/);
    });
  });

  describe('gateway-signed links on use: counted and revocable', function () {
    let store: MemoryBlobStore;
    let gateway: TestGateway;
    let registry: InMemoryClientRegistry;
    const clock = new TestClock();
    const env = { DOWNLOAD_LINKS: 'on', DOWNLOAD_LINK_TTL_SECONDS: '3600', DOWNLOAD_RATE_LIMIT: '2', INDEX_REFRESH_SECONDS: '30' };

    beforeEach(async function () {
      store = new MemoryBlobStore();
      store.put('indexes/acme.csv', INDEX);
      store.put('data/file.bin', BYTES);
      store.put('data/gone.bin', Buffer.from('another file'));
      store.put('data/changing.bin', Buffer.from('a third file'));
      gateway = await startGateway({ store, clients: [acme], clock, env });
      registry = gateway.registry as InMemoryClientRegistry;
    });

    afterEach(async function () {
      clock.offsetMs = 0;
      await gateway.close();
    });

    const linkFor = async (symbol: string): Promise<DownloadLink> => {
      const response = await gateway.get('acme', `/link/${symbol}`);
      expect(response.status, response.body.toString()).to.equal(200);
      return jsonOf<DownloadLink>(response);
    };

    it('counts downloads through a link against its client\'s download budget on the instance that serves it (50 through a limit of 2 are one)', async function () {
      const link = await linkFor('FILE');
      // Another instance (same signing key, its own memory): the link's version was never counted there.
      const second = await startGateway({ store, clients: [acme], env });
      try {
        expect((await second.get('acme', '/download/GONE')).status).to.equal(200);
        for (let i = 0; i < 50; i += 1) {
          const response = await second.request('GET', targetOf(link.url), { headers: { range: `bytes=${i}-${i}` } });
          expect(response.status, `download ${i + 1} through the link`).to.equal(206);
        }
        // One download of GONE, one of the link's file version: the budget of 2 is spent.
        const refused = await second.get('acme', '/download/CHANGING');
        expect(refused.status).to.equal(429);
        // A client whose budget is spent gets 429 through a link of a version it was not counted for.
        const third = await startGateway({ store, clients: [acme], env });
        try {
          expect((await third.get('acme', '/download/GONE')).status).to.equal(200);
          expect((await third.get('acme', '/download/CHANGING')).status).to.equal(200);
          const limited = await third.request('GET', targetOf(link.url));
          expect(limited.status).to.equal(429);
          expect(limited.headers['retry-after']).to.match(/^\d+$/);
          expect((await third.request('HEAD', targetOf(link.url))).status).to.equal(429);
        } finally {
          await third.close();
        }
      } finally {
        await second.close();
      }
    });

    it('stops working while its client is disabled (403 invalid_link), and works again once it is enabled', async function () {
      const link = await linkFor('FILE');
      const record = await registry.find('acme');
      if (record === undefined) throw new Error('acme is registered');
      registry.add({ ...record, enabled: false });
      const refused = await gateway.request('GET', targetOf(link.url));
      expect(refused.status).to.equal(403);
      expect(jsonOf<ErrorBody>(refused)).to.include({ code: 'invalid_link' });
      expect(jsonOf<ErrorBody>(refused).message).to.match(/revoked/);
      expect((await gateway.request('HEAD', targetOf(link.url))).status).to.equal(403);
      registry.add({ ...record, enabled: true });
      expect((await gateway.request('GET', targetOf(link.url))).status).to.equal(200);
    });

    it('stops working once its client is removed (403 invalid_link)', async function () {
      const link = await linkFor('FILE');
      registry.remove('acme');
      const refused = await gateway.request('GET', targetOf(link.url));
      expect(refused.status).to.equal(403);
      expect(jsonOf<ErrorBody>(refused)).to.include({ code: 'invalid_link' });
      expect((await gateway.request('HEAD', targetOf(link.url))).status).to.equal(403);
    });

    it('stops working once the file leaves its client\'s index (403 not_entitled), as soon as the cached catalog is refreshed', async function () {
      const link = await linkFor('FILE');
      store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'GONE', FileName: 'data/gone.bin' })]));
      clock.offsetMs = 31_000;
      const refused = await gateway.request('GET', targetOf(link.url));
      expect(refused.status).to.equal(403);
      expect(jsonOf<ErrorBody>(refused)).to.include({ code: 'not_entitled' });
      expect((await gateway.request('HEAD', targetOf(link.url))).status).to.equal(403);
    });

    it('checks the client and the index from memory: a download through a link asks storage about the file only', async function () {
      const link = await linkFor('FILE');
      const asked: string[] = [];
      const getProperties = store.getProperties.bind(store);
      store.getProperties = (path) => {
        asked.push(path);
        return getProperties(path);
      };
      expect((await gateway.request('GET', targetOf(link.url))).status).to.equal(200);
      expect(asked).to.deep.equal(['data/file.bin']);
    });
  });

  describe('a link made by one instance works on another with the same TOKEN_SIGNING_KEY', function () {
    it('downloads through the second instance', async function () {
      const store = new MemoryBlobStore();
      store.put('indexes/acme.csv', INDEX);
      store.put('data/file.bin', BYTES);
      const env = { DOWNLOAD_LINKS: 'on' };
      const [first, second] = await Promise.all([startGateway({ store, clients: [acme], env }), startGateway({ store, clients: [acme], env })]);
      try {
        const link = jsonOf<DownloadLink>(await first.get('acme', '/link/FILE'));
        const response = await second.request('GET', targetOf(link.url));
        expect(response.status).to.equal(200);
        expect(response.body.equals(BYTES)).to.equal(true);
      } finally {
        await Promise.all([first.close(), second.close()]);
      }
    });
  });

  describe('with PUBLIC_BASE_URL set', function () {
    it('a gateway-signed link starts with that origin, whatever Host the request named', async function () {
      const store = new MemoryBlobStore();
      store.put('indexes/acme.csv', INDEX);
      store.put('data/file.bin', BYTES);
      const gateway = await startGateway({ store, clients: [acme], env: { DOWNLOAD_LINKS: 'on', PUBLIC_BASE_URL: 'https://files.example.com' } });
      try {
        const link = jsonOf<DownloadLink>(await gateway.get('acme', '/link/FILE', { Host: 'attacker.example' }));
        expect(link.url).to.match(/^https:\/\/files\.example\.com\/download\/signed\//);
        const response = await gateway.request('GET', targetOf(link.url));
        expect(response.body.equals(BYTES)).to.equal(true);
      } finally {
        await gateway.close();
      }
    });
  });

  describe('SAS links on Azure (Azurite)', function () {
    let fixture: Awaited<ReturnType<typeof azuriteFixture>>;
    let gateway: TestGateway;

    before(async function () {
      fixture = await azuriteFixture('links');
      await fixture.put('indexes/acme.csv', INDEX);
      await fixture.put('data/file.bin', BYTES, { contentType: 'application/x-test' });
      const store = fixture.store as AzureBlobStore;
      gateway = await startGateway({
        store,
        clients: [acme],
        storageLinks: (link) => store.directLink(link),
        env: { DOWNLOAD_LINKS: 'on', DOWNLOAD_LINK_TTL_SECONDS: '120' },
      });
    });

    after(async function () {
      await gateway.close();
      await fixture.cleanup();
    });

    it('GET /link/<symbol> answers a read-only SAS for exactly that blob, until expiresAt', async function () {
      const link = jsonOf<DownloadLink>(await gateway.get('acme', '/link/FILE'));
      const url = new URL(link.url);
      expect(`${url.origin}${url.pathname}`).to.equal(`${new URL(fixture.connectionString.match(/BlobEndpoint=([^;]+)/)?.[1] ?? '').href}/${fixture.containerName}/data/file.bin`);
      expect(url.searchParams.get('sp')).to.equal('r');
      expect(url.searchParams.get('sr')).to.equal('b');
      expect(Date.parse(url.searchParams.get('se') ?? '')).to.equal(Date.parse(link.expiresAt));
      expect(url.searchParams.get('rscd')).to.equal('attachment; filename="file.bin"');
      // no gateway is in the way: straight from storage.
      const direct = await fetch(link.url);
      expect(direct.status).to.equal(200);
      expect(Buffer.from(await direct.arrayBuffer()).equals(BYTES)).to.equal(true);
      expect(direct.headers.get('etag')).to.equal(link.etag);
      expect(direct.headers.get('content-disposition')).to.equal('attachment; filename="file.bin"');
      // ... and for nothing else.
      const elsewhere = await fetch(link.url.replace('/data/file.bin?', '/indexes/acme.csv?'));
      expect(elsewhere.status).to.equal(403);
      const write = await fetch(link.url, { method: 'PUT', headers: { 'x-ms-blob-type': 'BlockBlob' }, body: 'overwritten' });
      expect(write.status).to.equal(403);
    });

    it('curl -L follows ?redirect=true to storage, dropping the Authorization header there, and gets the file', async function () {
      const token = await gateway.tokenFor('acme');
      const output = join(tmpdir(), `dfg-curl-${process.pid}-${Date.now()}.bin`);
      try {
        const { stderr } = await run('curl', ['-sS', '-v', '-L', '-o', output, '-H', `Authorization: Bearer ${token}`, `${gateway.baseUrl}/download/FILE?redirect=true`]);
        expect((await readFile(output)).equals(BYTES)).to.equal(true);
        expect(stderr).to.match(/< HTTP\/1\.1 307/);
        // Sent to the gateway, not to storage (another origin).
        expect(stderr.match(/> Authorization: Bearer/g) ?? []).to.have.length(1);
        const ranged = await run('curl', ['-sS', '-L', '-r', '0-99', '-H', `Authorization: Bearer ${token}`, `${gateway.baseUrl}/download/FILE?redirect=true`], {
          encoding: 'buffer',
        });
        expect(ranged.stdout.equals(BYTES.subarray(0, 100))).to.equal(true);
      } finally {
        await rm(output, { force: true });
      }
    });
  });
});
