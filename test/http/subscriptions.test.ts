import type { HttpResponse } from '../support/contract.js';
import { expect } from 'chai';
import type { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { quotaPeriodOf } from '../../src/domain/monthly-quota.js';
import type { BlobContent, BlobReadOptions, ClientRecord, Clock, QuotaLedger } from '../../src/domain/ports.js';
import { capturedAudit } from '../support/audit-capture.js';
import { abortAfterFirstBytes, startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody, type OAuthErrorBody } from '../support/json.js';
import { deadline } from '../support/deadlines.js';

const MiB = 1024 * 1024;
const SMALL = Buffer.alloc(100_000, 7);
const INDEX = buildIndexCsv([
  buildIndexRow({ Symbol: 'SMALL', FileName: 'data/small.bin' }),
  buildIndexRow({ Symbol: 'STALL', FileName: 'data/stall.bin' }),
]);

/** A clock the test sets. */
class SetClock implements Clock {
  constructor(public at: Date) {}
  now(): Date {
    return new Date(this.at);
  }
  advance(ms: number): void {
    this.at = new Date(this.at.getTime() + ms);
  }
}

/** Storage that sends the first 64 KiB of `data/stall.bin` and then nothing until the read is aborted. */
class StallingStore extends MemoryBlobStore {
  override async read(path: string, options: BlobReadOptions): Promise<BlobContent> {
    if (path !== 'data/stall.bin') return super.read(path, options);
    const signal = options.signal;
    return (async function* () {
      yield new Uint8Array(64 * 1024);
      await new Promise<void>((resolve) => {
        if (signal === undefined || signal.aborted) return resolve();
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      throw new Error('read aborted');
    })();
  }
}

/** The `monthly-bytes` item of a RateLimit field, as `{ r, t }` or `{ q, w }`. */
function quotaItemOf(field: string | string[] | undefined): Record<string, string> | undefined {
  const text = Array.isArray(field) ? field.join(', ') : (field ?? '');
  const item = text.split(/,\s*/).find((part) => part.startsWith('"monthly-bytes"'));
  if (item === undefined) return undefined;
  return Object.fromEntries(item.split(';').slice(1).map((parameter) => parameter.split('=') as [string, string]));
}

async function eventually(check: () => boolean): Promise<void> {
  for (let waited = 0; !check() && waited < deadline(400); waited += 1) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('subscription terms and the monthly byte quota over HTTP', function () {
  const start = new Date('2026-11-24T12:00:00.000Z');
  const clock = new SetClock(start);
  let store: StallingStore;
  let gateway: TestGateway;
  let audited: ReturnType<typeof capturedAudit>;
  const metricsToken = 'metrics-token-metrics-token';
  const clients = [
    { clientId: 'quota', secret: 'quota-secret-quota-secret', monthlyBytes: 250_000 },
    { clientId: 'stall', secret: 'stall-secret-stall-secret', monthlyBytes: 10 * MiB },
    { clientId: 'later', secret: 'later-secret-later-secret', validFrom: new Date('2026-12-01T00:00:00.000Z') },
    { clientId: 'ending', secret: 'ending-secret-ending-secr', validUntil: new Date(start.getTime() + 90_000) },
    { clientId: 'free', secret: 'free-secret-free-secret-x' },
  ];

  beforeEach(async function () {
    clock.at = start;
    store = new StallingStore();
    for (const client of clients) store.put(`indexes/${client.clientId}.csv`, INDEX);
    store.put('data/small.bin', SMALL);
    store.put('data/stall.bin', new Uint8Array(4 * MiB));
    audited = capturedAudit();
    gateway = await startGateway({
      store,
      clients,
      clock,
      audit: audited.audit,
      env: { DOWNLOAD_LINKS: 'on', DOWNLOAD_LINK_TTL_SECONDS: '3600', METRICS_TOKEN: metricsToken, DOWNLOAD_RATE_LIMIT: '1000' },
    });
  });

  afterEach(async function () {
    await gateway.close();
  });

  describe('the subscription term', function () {
    it('refuses a token before the term starts with 400 unauthorized_client saying when it starts (RFC 6749 section 5.2)', async function () {
      const response = await gateway.request('POST', '/oauth/token', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'later', client_secret: 'later-secret-later-secret' }).toString(),
      });
      expect(response.status).to.equal(400);
      expect(jsonOf<OAuthErrorBody>(response)).to.include({
        error: 'unauthorized_client',
        error_description: 'The subscription is not active yet: it starts at 2026-12-01T00:00:00.000Z',
      });
    });

    it('refuses a wrong secret of a client outside its term as any wrong secret (401 invalid_client)', async function () {
      const response = await gateway.request('POST', '/oauth/token', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'later', client_secret: 'wrong-secret-wrong-secret' }).toString(),
      });
      expect(response.status).to.equal(401);
      expect(jsonOf<OAuthErrorBody>(response).error).to.equal('invalid_client');
    });

    it('gives a token no longer than the term and refuses it (401 invalid_token, saying when it ended) once the term ends', async function () {
      const issued = await gateway.request('POST', '/oauth/token', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'ending', client_secret: 'ending-secret-ending-secr' }).toString(),
      });
      const token = jsonOf<{ access_token: string; expires_in: number }>(issued);
      expect(token.expires_in).to.equal(90);
      const authorization = `Bearer ${token.access_token}`;
      expect((await gateway.request('GET', '/catalog', { headers: { authorization } })).status).to.equal(200);
      // The operator moves the end of the term earlier while the token lives.
      const newEnd = new Date(start.getTime() + 30_000);
      const record = await gateway.registry.find('ending');
      (gateway.registry as InMemoryClientRegistry).add({ ...(record as ClientRecord), validUntil: newEnd });
      clock.advance(29_999);
      expect((await gateway.request('GET', '/count', { headers: { authorization } })).status).to.equal(200);
      clock.advance(1);
      const refused = await gateway.request('GET', '/catalog', { headers: { authorization } });
      expect(refused.status).to.equal(401);
      expect(jsonOf<ErrorBody>(refused)).to.include({ code: 'invalid_token', message: `The subscription is not active: it ended at ${newEnd.toISOString()}` });
      expect(refused.headers['www-authenticate']).to.include('error="invalid_token"').and.include('ended at');
    });

    it('caps a link at the end of the term, and refuses it once the term has ended', async function () {
      const response = await gateway.get('ending', '/link/SMALL');
      expect(response.status).to.equal(200);
      const link = jsonOf<{ url: string; expiresAt: string }>(response);
      expect(link.expiresAt).to.equal(new Date(start.getTime() + 90_000).toISOString());
      const target = new URL(link.url);
      expect((await gateway.request('GET', `${target.pathname}${target.search}`)).status).to.equal(200);
      clock.advance(90_000);
      const refused = await gateway.request('GET', `${target.pathname}${target.search}`);
      expect(refused.status).to.equal(403);
      expect(jsonOf<ErrorBody>(refused).code).to.equal('invalid_link');
    });
  });

  describe('the monthly byte quota', function () {
    it('shows the quota in RateLimit-Policy and RateLimit on a download, counting its body', async function () {
      const response = await gateway.get('quota', '/download/SMALL');
      expect(response.status).to.equal(200);
      const period = quotaPeriodOf(start);
      expect(quotaItemOf(response.headers['ratelimit-policy'])).to.deep.equal({
        q: '250000',
        qu: '"content-bytes"',
        w: String((period.end.getTime() - period.start.getTime()) / 1000),
      });
      expect(quotaItemOf(response.headers['ratelimit'])).to.deep.equal({ r: '150000', t: String((period.end.getTime() - start.getTime()) / 1000) });
      // The download budget's own item stays in the same fields.
      expect(String(response.headers['ratelimit-policy'])).to.include('"downloads"');
    });

    it('counts a range by its length', async function () {
      const response = await gateway.get('quota', '/download/SMALL', { range: 'bytes=0-999' });
      expect(response.status).to.equal(206);
      expect(quotaItemOf(response.headers['ratelimit'])?.['r']).to.equal('249000');
    });

    it('refuses a download that does not fit what is left with 429 quota_exceeded, the bytes left and Retry-After until the month resets', async function () {
      expect((await gateway.get('quota', '/download/SMALL')).status).to.equal(200);
      expect((await gateway.get('quota', '/download/SMALL')).status).to.equal(200);
      const refused = await gateway.get('quota', '/download/SMALL');
      expect(refused.status).to.equal(429);
      const body = jsonOf<ErrorBody>(refused);
      expect(body.code).to.equal('quota_exceeded');
      expect(body.message).to.include('50000 bytes remain');
      const secondsToReset = (quotaPeriodOf(start).end.getTime() - start.getTime()) / 1000;
      expect(refused.headers['retry-after']).to.equal(String(secondsToReset));
      expect(quotaItemOf(refused.headers['ratelimit'])?.['r']).to.equal('50000');
      // A range that fits is still served.
      expect((await gateway.get('quota', '/download/SMALL', { range: 'bytes=0-49999' })).status).to.equal(206);
    });

    it('charges nothing for HEAD and 304, and shows the quota on them', async function () {
      const head = await gateway.get('quota', '/download/SMALL', {}, 'HEAD');
      expect(head.status).to.equal(200);
      expect(quotaItemOf(head.headers['ratelimit'])?.['r']).to.equal('250000');
      const first = await gateway.get('quota', '/download/SMALL');
      const revalidated = await gateway.get('quota', '/download/SMALL', { 'if-none-match': String(first.headers['etag']) });
      expect(revalidated.status).to.equal(304);
      expect(quotaItemOf(revalidated.headers['ratelimit'])?.['r']).to.equal('150000');
    });

    it('charges nothing for a link and draws each of its uses from the quota: a use that no longer fits is refused with 429 quota_exceeded', async function () {
      const response = await gateway.get('quota', '/link/SMALL');
      expect(response.status).to.equal(200);
      expect(quotaItemOf(response.headers['ratelimit'])?.['r']).to.equal('250000');
      const link = new URL(jsonOf<{ url: string }>(response).url);
      const use = (): Promise<HttpResponse> => gateway.request('GET', `${link.pathname}${link.search}`);
      const first = await use();
      expect(first.status).to.equal(200);
      expect(quotaItemOf(first.headers['ratelimit'])?.['r']).to.equal('150000');
      expect((await gateway.get('quota', '/download/SMALL?redirect=true')).status).to.equal(307);
      const second = await use();
      expect(second.status).to.equal(200);
      expect(quotaItemOf(second.headers['ratelimit'])?.['r']).to.equal('50000');
      const refused = await use();
      expect(refused.status).to.equal(429);
      expect(jsonOf<ErrorBody>(refused).code).to.equal('quota_exceeded');
      expect(refused.body.length).to.be.lessThan(SMALL.length);
      // Making a link still costs nothing.
      expect((await gateway.get('quota', '/link/SMALL')).status).to.equal(200);
    });

    it('gives back the bytes an aborted download did not send', async function () {
      const token = await gateway.tokenFor('stall');
      await abortAfterFirstBytes(gateway.port, '/download/STALL', token);
      await eventually(() => audited.downloads().length === 1);
      const [record] = audited.downloads();
      expect(record).to.include({ clientId: 'stall', outcome: 'aborted' });
      const sent = (record as { bytesSent: number }).bytesSent;
      expect(sent).to.be.greaterThan(0).and.lessThan(4 * MiB);
      const head = await gateway.get('stall', '/download/STALL', {}, 'HEAD');
      expect(quotaItemOf(head.headers['ratelimit'])?.['r']).to.equal(String(10 * MiB - sent));
    });

    it('tells the log and the audit trail once each when 80 % and 100 % of the quota are reached', async function () {
      await gateway.get('quota', '/download/SMALL', { range: 'bytes=0-99999' });
      await gateway.get('quota', '/download/SMALL', { range: 'bytes=0-99998' });
      const quotaEvents = () => audited.records().filter((record) => record.event === 'quota');
      expect(quotaEvents()).to.deep.equal([]);
      await gateway.get('quota', '/download/SMALL', { range: 'bytes=0-10000' });
      expect(quotaEvents()).to.have.length(1);
      expect(quotaEvents()[0]).to.include({ clientId: 'quota', period: '2026-11', percent: 80, limit: 250_000, used: 210_000 });
      await gateway.get('quota', '/download/SMALL', { range: 'bytes=0-39999' });
      await gateway.get('quota', '/download/SMALL', { range: 'bytes=0-0' });
      expect(quotaEvents().map((record) => (record as { percent: number }).percent)).to.deep.equal([80, 100]);
    });

    it('starts afresh with the next calendar month (UTC)', async function () {
      await gateway.get('quota', '/download/SMALL');
      await gateway.get('quota', '/download/SMALL');
      clock.at = new Date('2026-12-01T00:00:00.000Z');
      const token = await gateway.tokenFor('quota');
      const response = await gateway.request('GET', '/download/SMALL', { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).to.equal(200);
      expect(quotaItemOf(response.headers['ratelimit'])).to.deep.equal({ r: '150000', t: String(31 * 24 * 3600) });
    });

    it('leaves a client without a quota unlimited and without a monthly-bytes item', async function () {
      const response = await gateway.get('free', '/download/SMALL');
      expect(response.status).to.equal(200);
      expect(quotaItemOf(response.headers['ratelimit'])).to.equal(undefined);
    });

    it('counts refusals by reason in /metrics', async function () {
      await gateway.get('quota', '/download/SMALL');
      await gateway.get('quota', '/download/SMALL');
      await gateway.get('quota', '/download/SMALL');
      await gateway.request('POST', '/oauth/token', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'later', client_secret: 'later-secret-later-secret' }).toString(),
      });
      const metrics = (await gateway.request('GET', '/metrics', { headers: { authorization: `Bearer ${metricsToken}` } })).body.toString();
      expect(metrics).to.match(/^dfg_refusals_total\{reason="quota_exceeded"\} 1$/m);
      expect(metrics).to.match(/^dfg_refusals_total\{reason="subscription_inactive"\} 1$/m);
    });
  });

  describe('GET /account', function () {
    it('shows the caller its term, quota, bytes used this month, what remains and when it resets', async function () {
      await gateway.get('quota', '/download/SMALL', { range: 'bytes=0-999' });
      const response = await gateway.get('quota', '/account');
      expect(response.status).to.equal(200);
      expect(response.headers['cache-control']).to.equal('no-store');
      expect(jsonOf(response)).to.deep.equal({
        clientId: 'quota',
        term: { active: true },
        quota: { monthlyBytes: 250_000, period: '2026-11', used: 1000, remaining: 249_000, resetsAt: '2026-12-01T00:00:00.000Z' },
      });
    });

    it('shows the bounds of a term, and no quota for a client without one', async function () {
      const response = await gateway.get('ending', '/account');
      expect(jsonOf(response)).to.deep.equal({
        clientId: 'ending',
        term: { validUntil: new Date(start.getTime() + 90_000).toISOString(), active: true },
      });
    });
  });
});

describe('GET /account when the quota ledger cannot be read', function () {
  let gateway: TestGateway;

  before(async function () {
    const store = new MemoryBlobStore();
    store.put('indexes/acme.csv', INDEX);
    const failing: QuotaLedger = {
      reserve: () => Promise.reject(new Error('redis down')),
      refund: () => Promise.reject(new Error('redis down')),
      used: () => Promise.reject(new Error('redis down')),
    };
    gateway = await startGateway({ store, clients: [{ clientId: 'acme', secret: 'acme-secret-acme-secret', monthlyBytes: MiB }], quotaLedger: failing });
  });

  after(async function () {
    await gateway.close();
  });

  it('answers 503 limits_unavailable with Retry-After rather than an account without its quota', async function () {
    const response = await gateway.get('acme', '/account');
    expect(response.status).to.equal(503);
    expect(jsonOf<ErrorBody>(response).code).to.equal('limits_unavailable');
    expect(response.headers['retry-after']).to.equal('5');
  });
});
