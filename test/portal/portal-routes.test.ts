import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { DownloadAuditRecord } from '../../src/adapters/audit/audit-trail.js';
import { builtPortalFiles, portalContentSecurityPolicy } from '../../src/adapters/http/portal.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { Clock } from '../../src/domain/ports.js';
import { capturedAudit } from '../support/audit-capture.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody } from '../support/json.js';
import { buildPortal } from '../support/portal-build.js';
import { deadline } from '../support/deadlines.js';

/*
 * The portal's routes over HTTP: its page, files and configuration (PORTAL=on by default, gone with
 * PORTAL=off), and the short-lived download link it hands to the browser's download manager.
 */

const acme = { clientId: 'acme', secret: 'acme-secret-acme-secret' };
const BYTES = Buffer.from('date,rate\n2024-01-02,10.5\n');

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

function storeWithFiles(): MemoryBlobStore {
  const store = new MemoryBlobStore();
  store.put(
    'indexes/acme.csv',
    buildIndexCsv([
      buildIndexRow({ Symbol: 'CURVE', FileName: 'rates/curve.csv' }),
      buildIndexRow({ Symbol: 'GONE', FileName: 'rates/gone.csv' }),
      buildIndexRow({ Symbol: 'PORTALFILE', FileName: 'portal/file.csv' }),
      buildIndexRow({ Symbol: 'OTHER', FileName: 'rates/other.csv' }),
    ]),
  );
  store.put('rates/curve.csv', BYTES);
  store.put('rates/secret.csv', 'not in the index');
  store.put('portal/file.csv', 'a file under a route name');
  store.put('rates/other.csv', 'another file');
  return store;
}

/** The request target of a gateway URL (path and query). */
function targetOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

/** Waits until the audit trail has `count` download records (written once each response is done). */
async function auditedDownloads(audited: ReturnType<typeof capturedAudit>, count: number): Promise<DownloadAuditRecord[]> {
  for (let waited = 0; audited.downloads().length < count && waited < deadline(200); waited += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  return audited.downloads();
}

describe('the subscriber portal over HTTP (/portal)', function () {
  before(async function () {
    this.timeout(120_000);
    await buildPortal();
  });

  describe('when PORTAL is on (the default)', function () {
    let gateway: TestGateway;
    let audited: ReturnType<typeof capturedAudit>;
    const clock = new TestClock();

    before(async function () {
      audited = capturedAudit();
      gateway = await startGateway({ store: storeWithFiles(), clients: [acme], clock, audit: audited.audit, env: { DOWNLOAD_RATE_LIMIT: '1000' } });
    });

    after(async function () {
      await gateway.close();
    });

    afterEach(function () {
      clock.offsetMs = 0;
    });

    it('GET /portal answers the built page with the strict policy, loading only files of /portal/assets and nothing inline', async function () {
      const response = await gateway.request('GET', '/portal');
      const html = response.body.toString('utf8');

      expect(response.status).to.equal(200);
      expect(response.headers['content-type']).to.equal('text/html; charset=utf-8');
      expect(response.headers['content-security-policy']).to.equal(portalContentSecurityPolicy);
      expect(portalContentSecurityPolicy).to.include("frame-ancestors 'none'").and.include("script-src 'self';").and.include("style-src 'self';");
      const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((match) => match[1] ?? '');
      expect(scripts).to.have.length.greaterThan(0);
      for (const attributes of scripts) expect(attributes).to.match(/src="\/portal\/assets\/[^"]+\.js"/);
      expect(html).not.to.match(/\sstyle=|<style\b|\son[a-z]+=/i);
    });

    it('serves every file the page names, kept for a year (hashed names), and 404 for any other name', async function () {
      const html = (await gateway.request('GET', '/portal')).body.toString('utf8');
      const assets = [...html.matchAll(/(?:src|href)="(\/portal\/assets\/[^"]+)"/g)].map((match) => match[1] ?? '');
      expect(assets.some((asset) => asset.endsWith('.js'))).to.equal(true);
      expect(assets.some((asset) => asset.endsWith('.css'))).to.equal(true);

      for (const asset of assets) {
        const response = await gateway.request('GET', asset);
        expect(response.status, asset).to.equal(200);
        expect(response.headers['cache-control']).to.equal('public, max-age=31536000, immutable');
        expect(response.headers['content-type']).to.match(asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      }
      for (const name of ['nope.js', 'index.html', '..%2Findex.html', '%2E%2E', 'constructor']) {
        const response = await gateway.request('GET', `/portal/assets/${name}`);
        expect(response.status, name).to.equal(404);
        expect(jsonOf<ErrorBody>(response).code).to.equal('route_not_found');
      }
    });

    it('GET /portal/config.json says the S3-compatible API is off (no aws s3 cp in the portal)', async function () {
      const response = await gateway.request('GET', '/portal/config.json');

      expect(response.status).to.equal(200);
      expect(jsonOf(response)).to.deep.equal({ s3Api: null });
    });

    it('GET /portal/config.json names the S3 API\'s endpoint (this origin) and bucket when S3_API=on, never cached', async function () {
      const withS3 = await startGateway({ store: storeWithFiles(), clients: [acme], env: { S3_API: 'on', S3_BUCKET: 'vendor-data' } });
      try {
        const response = await withS3.request('GET', '/portal/config.json');

        expect(response.status).to.equal(200);
        expect(response.headers['cache-control']).to.equal('no-store');
        expect(jsonOf(response)).to.deep.equal({ s3Api: { endpointUrl: withS3.baseUrl, bucket: 'vendor-data' } });
      } finally {
        await withS3.close();
      }
    });

    it('answers 400 to portal requests the contract refuses', async function () {
      for (const target of ['/portal?unexpected=1', '/portal/config.json?unexpected=1', `/portal/assets/${'x'.repeat(200)}.js`]) {
        const response = await gateway.request('GET', target);
        expect(response.status, target).to.equal(400);
      }
    });

    it('never serves a stored file by a path under portal/ (a route name): 404, reachable by symbol only', async function () {
      const byPath = await gateway.get('acme', '/portal/file.csv');
      const bySymbol = await gateway.get('acme', '/download/PORTALFILE');

      expect(byPath.status).to.equal(404);
      expect(jsonOf<ErrorBody>(byPath).code).to.equal('route_not_found');
      expect(bySymbol.status).to.equal(200);
    });

    describe('GET /portal/link/:symbol with DOWNLOAD_LINKS off', function () {
      it('answers a gateway-signed link for this file, never cached, expiring 60 seconds later, that serves the bytes', async function () {
        const before = clock.now().getTime();
        const response = await gateway.get('acme', '/portal/link/CURVE');
        const link = jsonOf<DownloadLink>(response);

        expect(response.status).to.equal(200);
        expect(response.headers['cache-control']).to.equal('no-store');
        expect(new URL(link.url).pathname).to.equal('/download/signed/curve.csv');
        const after = clock.now().getTime();
        // Whole seconds (what a JWT or a SAS can say): at most 60 s after the link was made.
        expect(Date.parse(link.expiresAt)).to.be.within(before + 59_000, after + 60_000);
        const download = await gateway.request('GET', targetOf(link.url));
        expect(download.status).to.equal(200);
        expect(download.body.equals(BYTES)).to.equal(true);
        expect(download.headers['content-disposition']).to.match(/^attachment; filename="curve.csv"/);
      });

      it('GET /link/<symbol> still does not exist (404), but the gateway-signed link route does, for the portal\'s links', async function () {
        const general = await gateway.get('acme', '/link/CURVE');
        const signed = await gateway.request('GET', '/download/signed/curve.csv?token=abc');

        expect(general.status).to.equal(404);
        expect(jsonOf<ErrorBody>(general).code).to.equal('route_not_found');
        expect(signed.status).to.equal(403);
        expect(jsonOf<ErrorBody>(signed).code).to.equal('invalid_link');
      });

      it('the link stops working after its 60 seconds (403 invalid_link)', async function () {
        const link = jsonOf<DownloadLink>(await gateway.get('acme', '/portal/link/CURVE'));
        clock.offsetMs = 61_000;

        const late = await gateway.request('GET', targetOf(link.url));

        expect(late.status).to.equal(403);
        expect(jsonOf<ErrorBody>(late).code).to.equal('invalid_link');
      });

      it('checks entitlement as a download does: 403 outside the index, 404 when not stored, 401 without a token, 400 for a malformed symbol', async function () {
        expect((await gateway.get('acme', '/portal/link/SECRET')).status).to.equal(403);
        const missing = await gateway.get('acme', '/portal/link/GONE');
        expect(missing.status).to.equal(404);
        expect(jsonOf<ErrorBody>(missing).code).to.equal('file_not_found');
        expect((await gateway.request('GET', '/portal/link/CURVE')).status).to.equal(401);
        expect((await gateway.get('acme', `/portal/link/${'X'.repeat(300)}`)).status).to.equal(400);
      });

      it('audits each link as "linked" with its client, symbol and path', async function () {
        const already = audited.downloads().length;
        await gateway.get('acme', '/portal/link/CURVE', { 'x-request-id': 'portal-link-1' });

        const records = await auditedDownloads(audited, already + 1);

        expect(records.find((record) => record.requestId === 'portal-link-1')).to.include({
          clientId: 'acme',
          symbol: 'CURVE',
          path: 'rates/curve.csv',
          outcome: 'linked',
          status: 200,
        });
      });
    });
  });

  describe('GET /portal/link/:symbol against the download rate limit', function () {
    it('makes links without counting them and counts each use as a download: past DOWNLOAD_RATE_LIMIT a use answers 429 with Retry-After', async function () {
      const gateway = await startGateway({ store: storeWithFiles(), clients: [acme], env: { DOWNLOAD_RATE_LIMIT: '2' } });
      try {
        await gateway.get('acme', '/download/CURVE');
        const other = await gateway.get('acme', '/portal/link/OTHER');
        expect(other.status).to.equal(200);
        expect((await gateway.request('GET', targetOf(jsonOf<DownloadLink>(other).url))).status).to.equal(200);

        const spent = await gateway.get('acme', '/portal/link/PORTALFILE');
        expect(spent.status, 'a link costs nothing, even with the budget spent').to.equal(200);
        const limited = await gateway.request('GET', targetOf(jsonOf<DownloadLink>(spent).url));
        expect(limited.status).to.equal(429);
        expect(Number(limited.headers['retry-after'])).to.be.greaterThan(0);
      } finally {
        await gateway.close();
      }
    });
  });

  describe('with DOWNLOAD_LINKS=on', function () {
    for (const { ttl, expected } of [
      { ttl: '300', expected: 60 },
      { ttl: '30', expected: 30 },
    ]) {
      it(`and DOWNLOAD_LINK_TTL_SECONDS=${ttl}, the portal's link lasts ${expected} seconds, the shorter of the two`, async function () {
        const clock = new TestClock();
        const gateway = await startGateway({ store: storeWithFiles(), clients: [acme], clock, env: { DOWNLOAD_LINKS: 'on', DOWNLOAD_LINK_TTL_SECONDS: ttl } });
        try {
          const before = clock.now().getTime();
          const link = jsonOf<DownloadLink>(await gateway.get('acme', '/portal/link/CURVE'));
          const general = jsonOf<DownloadLink>(await gateway.get('acme', '/link/CURVE'));
          const after = clock.now().getTime();

          expect(Date.parse(link.expiresAt)).to.be.within(before + (expected - 1) * 1000, after + expected * 1000);
          expect(Date.parse(general.expiresAt)).to.be.within(before + (Number(ttl) - 1) * 1000, after + Number(ttl) * 1000);
          expect((await gateway.request('GET', targetOf(link.url))).status).to.equal(200);
        } finally {
          await gateway.close();
        }
      });
    }
  });

  describe('when PORTAL=off', function () {
    let gateway: TestGateway;

    before(async function () {
      gateway = await startGateway({ store: storeWithFiles(), clients: [acme], env: { PORTAL: 'off' } });
    });

    after(async function () {
      await gateway.close();
    });

    it('has no /portal route at all: the page, its files, its configuration and its links answer 404 route_not_found', async function () {
      const html = (await gateway.request('GET', '/portal')).status;
      const responses = [
        await gateway.request('GET', '/portal'),
        await gateway.request('GET', '/portal/config.json'),
        await gateway.request('GET', '/portal/assets/index.js'),
        await gateway.get('acme', '/portal/link/CURVE'),
      ];

      expect(html).to.equal(404);
      for (const response of responses) {
        expect(response.status).to.equal(404);
        expect(jsonOf<ErrorBody>(response).code).to.equal('route_not_found');
      }
    });

    it('makes no gateway-signed link route either (DOWNLOAD_LINKS is off)', async function () {
      const response = await gateway.request('GET', '/download/signed/curve.csv?token=x');

      expect(response.status).to.equal(404);
    });
  });

  describe('a gateway whose portal was not built', function () {
    let folder: string;

    before(async function () {
      folder = await mkdtemp(join(tmpdir(), 'dfg-portal-'));
    });

    after(async function () {
      await rm(folder, { recursive: true, force: true });
    });

    it('has no page and no files to serve (GET /portal answers 404 saying to build it)', async function () {
      const files = builtPortalFiles(join(folder, 'missing'));

      expect(await files.page()).to.equal(undefined);
      expect(await files.asset('index.js')).to.equal(undefined);
    });
  });
});
