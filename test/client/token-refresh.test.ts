import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createClient, type SyncEvent } from '../../client/src/index.js';
import type { Clock } from '../../src/domain/ports.js';
import { publishedFiles, startMirrorGateway, type MirrorGateway } from '../support/mirror-gateway.js';
import { startTamperingProxy, type TamperingProxy } from '../support/tampering-proxy.js';

/*
 * A token that expires during a long sync. The gateway runs on a clock the test moves forward
 * (it signs and checks tokens by it), so "a long sync" needs no waiting: after the first file,
 * two minutes pass.
 */
describe('a token that expires during a sync (TOKEN_TTL_SECONDS=120)', function () {
  const files = publishedFiles(4, { size: 10_000 });
  let offsetMs = 0;
  const gatewayClock: Clock = { now: () => new Date(Date.now() + offsetMs) };
  let mirror: MirrorGateway;
  let proxy: TamperingProxy;
  let dir: string;

  before(async function () {
    mirror = await startMirrorGateway(files, { env: { TOKEN_TTL_SECONDS: '120' }, clock: gatewayClock });
    proxy = await startTamperingProxy(mirror.gateway.port);
  });

  after(async function () {
    await proxy.close();
    await mirror.close();
  });

  beforeEach(async function () {
    offsetMs = 0;
    proxy.exchanges.length = 0;
    dir = await mkdtemp(join(tmpdir(), 'dfg-token-'));
  });

  afterEach(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  const twoMinutesPassAfterTheFirstFile = (event: SyncEvent): void => {
    if (event.type === 'file-done' && offsetMs === 0) offsetMs = 130_000;
  };
  const tokenRequests = (): number => proxy.exchanges.filter((exchange) => exchange.path === '/oauth/token').length;
  const unauthorized = (): number => proxy.exchanges.filter((exchange) => exchange.status === 401).length;

  it('when the client sees the expiry coming, refreshes before it and no request is refused', async function () {
    const client = createClient({ baseUrl: proxy.url, clientId: mirror.clientId, clientSecret: mirror.secret, now: () => Date.now() + offsetMs });

    const report = await client.sync({ dir, concurrency: 1, onEvent: twoMinutesPassAfterTheFirstFile });

    expect(report.failed).to.equal(0);
    expect(report.downloaded).to.equal(files.length);
    expect(tokenRequests()).to.equal(2);
    expect(unauthorized()).to.equal(0);
  });

  it('when the gateway refuses the token as expired (401), gets one new token, retries, and no file fails', async function () {
    // The client's own clock does not move: only the gateway's 401 can tell it the token expired.
    const client = createClient({ baseUrl: proxy.url, clientId: mirror.clientId, clientSecret: mirror.secret });

    const report = await client.sync({ dir, concurrency: 1, onEvent: twoMinutesPassAfterTheFirstFile });

    expect(report.failed).to.equal(0);
    expect(report.downloaded).to.equal(files.length);
    expect(unauthorized()).to.equal(1);
    expect(tokenRequests()).to.equal(2);
    for (const file of files) expect((await readFile(join(dir, ...file.path.split('/')))).equals(file.bytes)).to.equal(true);
  });

  it('when the secret is wrong, fails with auth_failed and stops the sync', async function () {
    const client = createClient({ baseUrl: proxy.url, clientId: mirror.clientId, clientSecret: 'not-the-secret-at-all' });

    const error = await client.sync({ dir }).then(
      () => undefined,
      (failure: unknown) => failure,
    );

    expect(error).to.have.property('code', 'auth_failed');
    expect(error).to.have.property('status', 401);
    expect(proxy.downloads()).to.have.length(0);
  });
});
