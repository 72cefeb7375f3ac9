import type { AccessToken, TokenCredential } from '@azure/core-auth';
import { BlobServiceClient, ContainerClient } from '@azure/storage-blob';
import { expect } from 'chai';
import nock from 'nock';
import { AzureBlobStore } from '../../src/adapters/storage/azure-blob-store.js';
import { GatewayError } from '../../src/domain/errors.js';
import { rejectionOf } from '../support/rejection.js';

/**
 * Links under a managed identity are user delegation SAS URLs. Azurite grants user delegation
 * keys only over HTTPS with its OAuth mode, so storage's side (the key request) is played by nock.
 */

const account = 'https://dfgtest.blob.core.windows.net';
const keyValue = Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');

/** An Entra ID credential that always has a token. */
const credential: TokenCredential = {
  getToken: async (): Promise<AccessToken> => ({ token: 'entra-token', expiresOnTimestamp: Date.now() + 3_600_000 }),
};

function delegationKeyXml(start: Date, expiry: Date): string {
  return (
    '<?xml version="1.0" encoding="utf-8"?><UserDelegationKey>' +
    '<SignedOid>11111111-2222-3333-4444-555555555555</SignedOid><SignedTid>66666666-7777-8888-9999-000000000000</SignedTid>' +
    `<SignedStart>${start.toISOString().replace(/\.\d+Z$/, 'Z')}</SignedStart><SignedExpiry>${expiry.toISOString().replace(/\.\d+Z$/, 'Z')}</SignedExpiry>` +
    '<SignedService>b</SignedService><SignedVersion>2025-01-05</SignedVersion>' +
    `<Value>${keyValue}</Value></UserDelegationKey>`
  );
}

const xml = { 'content-type': 'application/xml' };

function storeWith(timeoutMs = 5000): AzureBlobStore {
  const pipeline = { retryOptions: { maxTries: 1 } };
  return new AzureBlobStore(new ContainerClient(`${account}/data`, credential, pipeline), { responseTimeoutMs: timeoutMs }, new BlobServiceClient(account, credential, pipeline));
}

const link = (expiresAt: Date) => ({ path: 'equities/PETR4.csv', expiresAt, contentDisposition: 'attachment; filename="PETR4.csv"' });

describe('AzureBlobStore.directLink under a managed identity (user delegation SAS)', function () {
  before(function () {
    if (!nock.isActive()) nock.activate();
    nock.disableNetConnect();
  });

  afterEach(function () {
    nock.cleanAll();
  });

  after(function () {
    nock.enableNetConnect();
    nock.restore();
  });

  it('asks storage for one delegation key for concurrent links, and signs read-only links for exactly the blob with it', async function () {
    let asked = 0;
    let requestedExpiry = '';
    nock(account)
      .post('/')
      .query({ restype: 'service', comp: 'userdelegationkey' })
      .times(2)
      .reply(200, (_uri, body) => {
        asked += 1;
        requestedExpiry = /<Expiry>([^<]+)<\/Expiry>/.exec(String(body))?.[1] ?? '';
        return delegationKeyXml(new Date(Date.now() - 300_000), new Date(Date.parse(requestedExpiry)));
      }, xml);
    const store = storeWith();
    const expiresAt = new Date(Math.floor(Date.now() / 1000 + 300) * 1000);
    const urls = await Promise.all([store.directLink(link(expiresAt)), store.directLink(link(expiresAt)), store.directLink(link(expiresAt))]);
    expect(asked).to.equal(1);
    // The key outlives the links it signs, by about an hour, so later links reuse it.
    expect(Date.parse(requestedExpiry)).to.be.greaterThan(expiresAt.getTime() + 50 * 60_000);
    await store.directLink(link(new Date(Date.now() + 600_000)));
    expect(asked).to.equal(1);

    const url = new URL(urls[0] ?? '');
    expect(`${url.origin}${url.pathname}`).to.equal(`${account}/data/equities/PETR4.csv`);
    const params = url.searchParams;
    expect(params.get('sp')).to.equal('r');
    expect(params.get('sr')).to.equal('b');
    expect(params.get('skoid')).to.equal('11111111-2222-3333-4444-555555555555');
    expect(params.get('sktid')).to.equal('66666666-7777-8888-9999-000000000000');
    expect(Date.parse(params.get('se') ?? '')).to.equal(expiresAt.getTime());
    expect(params.get('rscd')).to.equal('attachment; filename="PETR4.csv"');
    // An HMAC-SHA256 signature (base64, 44 characters): with the delegation key, the only key the store has.
    expect(params.get('sig')).to.have.length(44);
  });

  it('asks for a new key once the one it has would expire before a link', async function () {
    let asked = 0;
    nock(account)
      .post('/')
      .query({ restype: 'service', comp: 'userdelegationkey' })
      .times(2)
      .reply(200, (_uri, body) => {
        asked += 1;
        const expiry = /<Expiry>([^<]+)<\/Expiry>/.exec(String(body))?.[1] ?? '';
        return delegationKeyXml(new Date(Date.now() - 300_000), new Date(expiry));
      }, xml);
    const store = storeWith();
    await store.directLink(link(new Date(Date.now() + 300_000)));
    await store.directLink(link(new Date(Date.now() + 3 * 3_600_000)));
    expect(asked).to.equal(2);
  });

  it('refuses with storage_failed when the identity may not get a key, and asks again on the next link', async function () {
    nock(account)
      .post('/')
      .query({ restype: 'service', comp: 'userdelegationkey' })
      .reply(403, '<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthorizationPermissionMismatch</Code><Message>no</Message></Error>', {
        ...xml,
        'x-ms-error-code': 'AuthorizationPermissionMismatch',
      })
      .post('/')
      .query({ restype: 'service', comp: 'userdelegationkey' })
      .reply(200, delegationKeyXml(new Date(Date.now() - 300_000), new Date(Date.now() + 7_200_000)), xml);
    const store = storeWith();
    const failure = await rejectionOf(store.directLink(link(new Date(Date.now() + 300_000))));
    expect(failure).to.be.instanceOf(GatewayError);
    expect((failure as GatewayError).code).to.equal('storage_failed');
    expect(await store.directLink(link(new Date(Date.now() + 300_000)))).to.match(/[?&]skoid=/);
  });

  it('gives up on a key request after STORAGE_TIMEOUT_SECONDS (storage_unavailable), before a reply a minute late, after one request (counted)', async function () {
    // The reply, a minute late, would be a success: a storage_unavailable failure can only be the
    // store giving up first, without timing anything here.
    let requests = 0;
    nock(account)
      .post('/')
      .query({ restype: 'service', comp: 'userdelegationkey' })
      .delay(60_000)
      .reply(200, () => {
        requests += 1;
        return delegationKeyXml(new Date(), new Date(Date.now() + 7_200_000));
      }, xml);
    const store = storeWith(200);
    const failure = await rejectionOf(store.directLink(link(new Date(Date.now() + 300_000))));
    expect((failure as GatewayError).code).to.equal('storage_unavailable');
    expect(requests, 'key requests sent').to.equal(1);
  });
});
