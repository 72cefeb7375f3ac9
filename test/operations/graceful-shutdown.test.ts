import { mkdir, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer, get as httpGet, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { MemoryChangeLog } from '../../src/adapters/changes/memory-change-log.js';
import { originZeroClock } from '../support/change-log-origin.js';
import { createHttpServer } from '../../src/adapters/http/http-server.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { createGateway } from '../../src/app/create-app.js';
import { drainOnSignals } from '../../src/app/graceful-shutdown.js';
import { runClientsCli } from '../../src/app/clients-command.js';
import { changeStoresWith, hashTestSecret, quietLogger, testConfig } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { startGatewayProcess, type GatewayProcess } from '../support/server-process.js';

const MiB = 1024 * 1024;
const client = { clientId: 'drain', secret: 'drain-secret-0123456789abcdef' };

async function prepare(workDir: string): Promise<{ dataDir: string; clientsFile: string }> {
  const dataDir = join(workDir, 'data');
  await mkdir(join(dataDir, 'indexes'), { recursive: true });
  await writeFile(join(dataDir, 'indexes', `${client.clientId}.csv`), buildIndexCsv([buildIndexRow({ Symbol: 'BIG', FileName: 'big.bin' })]));
  await writeFile(join(dataDir, 'big.bin'), '');
  await truncate(join(dataDir, 'big.bin'), 32 * MiB);
  const clientsFile = join(workDir, 'clients.json');
  const code = await runClientsCli(['add', client.clientId, '--secret', client.secret, '--monthly-bytes', '1GiB'], {
    env: { CLIENTS_FILE: clientsFile },
    stdout: { write: () => true },
    stderr: { write: () => true },
  });
  expect(code).to.equal(0);
  return { dataDir, clientsFile };
}

async function tokenFor(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret }),
  });
  return ((await response.json()) as { access_token: string }).access_token;
}

/** A download that reads 1 MiB, then waits for `resume` before reading the rest. */
function pausedDownload(port: number, token: string, resume: Promise<unknown>): { started: Promise<void>; done: Promise<{ received: number; complete: boolean }> } {
  let markStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const done = new Promise<{ received: number; complete: boolean }>((resolve) => {
    let response: IncomingMessage | undefined;
    let received = 0;
    let paused = false;
    const request = httpGet({ host: '127.0.0.1', port, path: '/download/BIG', agent: false, headers: { authorization: `Bearer ${token}` } }, (incoming) => {
      response = incoming;
      incoming.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received >= MiB && !paused) {
          paused = true;
          incoming.pause();
          markStarted();
          void resume.then(() => incoming.resume());
        }
      });
      incoming.on('error', () => {});
    });
    request.on('error', () => {});
    request.on('close', () => resolve({ received, complete: response?.complete ?? false }));
  });
  return { started, done };
}

function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

describe('graceful drain on SIGTERM (the real server process)', function () {
  this.timeout(60_000);
  let workDir: string;
  let gateway: GatewayProcess | undefined;

  beforeEach(async function () {
    workDir = await mkdtemp(join(tmpdir(), 'drain-'));
  });

  afterEach(async function () {
    await gateway?.stop();
    await rm(workDir, { recursive: true, force: true });
  });

  it('lets a slow download in flight finish, refuses new connections, and exits 0 within the grace period', async function () {
    const { dataDir, clientsFile } = await prepare(workDir);
    gateway = await startGatewayProcess({ DATA_DIR: dataDir, CLIENTS_FILE: clientsFile, SHUTDOWN_GRACE_SECONDS: '30', TOKEN_SIGNING_KEY: 'drain-test-signing-key-0123456789abcdef' });
    const token = await tokenFor(gateway.port);
    const draining = gateway.nextLogLine('shutting down: draining the requests in flight');
    const download = pausedDownload(gateway.port, token, draining);
    await download.started;

    gateway.child.kill('SIGTERM');
    await draining;
    expect(await connectionRefused(gateway.port), 'a new connection during the drain').to.equal(true);

    const result = await download.done;
    expect(result.complete).to.equal(true);
    expect(result.received).to.equal(32 * MiB);
    expect(await gateway.exited).to.equal(0);
    expect(gateway.output()).to.include('drained: exiting');
    expect(gateway.output()).to.not.include('grace period over');
  });

  it('scans as the holder of the scanner lease, and releases the lease on SIGTERM so that another instance takes it at once', async function () {
    const { dataDir, clientsFile } = await prepare(workDir);
    gateway = await startGatewayProcess({ DATA_DIR: dataDir, CLIENTS_FILE: clientsFile, TOKEN_SIGNING_KEY: 'drain-test-signing-key-0123456789abcdef' });
    const scanned = await gateway.logLine('change scanner: scan done');
    expect(scanned).to.include({ first: true, listed: 2 });
    const lock = join(workDir, 'changes', 'scanner.lock');
    expect(JSON.parse(await readFile(lock, 'utf8'))).to.include({ pid: gateway.pid });
    expect(await readFile(join(workDir, 'changes', 'scan-state.jsonl'), 'utf8')).to.include('"p":"big.bin"');

    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).to.equal(0);
    const left = await readFile(lock, 'utf8').catch((error: NodeJS.ErrnoException) => error.code);
    expect(left, 'the lock file after the drain').to.equal('ENOENT');
  });

  it('stops a scan over CHANGES_SCANNER_MB with an error line naming it, saves no scan state, and serves on', async function () {
    const { dataDir, clientsFile } = await prepare(workDir);
    // 5,000 rows: about 1.7 MB counted, over a budget of 1 MiB.
    const rows = Array.from({ length: 5_000 }, (_, i) => buildIndexRow({ Symbol: `S${i}`, FileName: `daily/${i}.parquet` }));
    await writeFile(join(dataDir, 'indexes', `${client.clientId}.csv`), buildIndexCsv(rows));
    gateway = await startGatewayProcess({ DATA_DIR: dataDir, CLIENTS_FILE: clientsFile, CHANGES_SCANNER_MB: '1', TOKEN_SIGNING_KEY: 'drain-test-signing-key-0123456789abcdef' });
    const over = await gateway.logLine('change scanner: over CHANGES_SCANNER_MB');
    expect(over).to.include({ level: 50, budgetBytes: 1024 * 1024, blobs: 2, indexes: 0 });
    expect(over['heldBytes']).to.be.above(1024 * 1024);
    expect(over['rows']).to.be.above(0).and.below(5_000);
    expect(gateway.output()).to.not.include('change scanner: scan done');
    const state = await readFile(join(workDir, 'changes', 'scan-state.jsonl'), 'utf8').catch((error: NodeJS.ErrnoException) => error.code);
    expect(state, 'the scan state').to.equal('ENOENT');
    const token = await tokenFor(gateway.port);
    const listed = await fetch(`http://127.0.0.1:${gateway.port}/count`, { headers: { authorization: `Bearer ${token}` } });
    expect(listed.status).to.equal(200);
  });

  it('closes what is still open when the grace period is over, and still exits 0', async function () {
    const { dataDir, clientsFile } = await prepare(workDir);
    gateway = await startGatewayProcess({ DATA_DIR: dataDir, CLIENTS_FILE: clientsFile, SHUTDOWN_GRACE_SECONDS: '1', TOKEN_SIGNING_KEY: 'drain-test-signing-key-0123456789abcdef' });
    const token = await tokenFor(gateway.port);
    const graceOver = gateway.nextLogLine('grace period over: closing the connections still open');
    const download = pausedDownload(gateway.port, token, graceOver);
    await download.started;

    gateway.child.kill('SIGTERM');
    await graceOver;
    const result = await download.done;
    expect(result.complete).to.equal(false);
    expect(await gateway.exited).to.equal(0);
  });

  it('audits each download the grace period cuts once, as aborted with the bytes sent and billed only those (quotaBytes once the unsent were given back), in stdout and AUDIT_LOG_FILE before exiting', async function () {
    const { dataDir, clientsFile } = await prepare(workDir);
    const auditFile = join(workDir, 'audit', 'downloads.log');
    gateway = await startGatewayProcess({
      DATA_DIR: dataDir,
      CLIENTS_FILE: clientsFile,
      SHUTDOWN_GRACE_SECONDS: '1',
      AUDIT_LOG_FILE: auditFile,
      TOKEN_SIGNING_KEY: 'drain-test-signing-key-0123456789abcdef',
    });
    const token = await tokenFor(gateway.port);
    const graceOver = gateway.nextLogLine('grace period over: closing the connections still open');
    // Two downloads that read on only once the grace period is over: it cuts both.
    const downloads = [pausedDownload(gateway.port, token, graceOver), pausedDownload(gateway.port, token, graceOver)];
    await Promise.all(downloads.map((download) => download.started));

    gateway.child.kill('SIGTERM');
    await graceOver;
    const results = await Promise.all(downloads.map((download) => download.done));
    expect(results.map((result) => result.complete)).to.deep.equal([false, false]);
    expect(await gateway.exited).to.equal(0);

    const auditedDownloads = (text: string): Array<Record<string, unknown>> =>
      text
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line['msg'] === 'audit' && line['event'] === 'download');
    for (const [where, records] of [
      ['stdout', auditedDownloads(gateway.output())],
      ['AUDIT_LOG_FILE', auditedDownloads(await readFile(auditFile, 'utf8'))],
    ] as const) {
      expect(records, `download records in ${where}`).to.have.length(2);
      for (const record of records) {
        expect(record['outcome'], where).to.equal('aborted');
        expect(record['clientId'], where).to.equal(client.clientId);
        expect(record['symbol'], where).to.equal('BIG');
        expect(record['status'], where).to.equal(200);
        expect(record['fileSize'], where).to.equal(32 * MiB);
        // At least what the client read before pausing, and short of the whole file.
        expect(record['bytesSent'], where).to.be.a('number').and.at.least(MiB).and.below(32 * MiB);
        // The reservation's unsent bytes were given back before the record was written.
        expect(record['quotaBytes'], where).to.equal(record['bytesSent']);
      }
    }
  });

  it('exits at once, with 1, on a second signal', async function () {
    const { dataDir, clientsFile } = await prepare(workDir);
    gateway = await startGatewayProcess({ DATA_DIR: dataDir, CLIENTS_FILE: clientsFile, SHUTDOWN_GRACE_SECONDS: '60', TOKEN_SIGNING_KEY: 'drain-test-signing-key-0123456789abcdef' });
    const token = await tokenFor(gateway.port);
    const draining = gateway.nextLogLine('shutting down: draining the requests in flight');
    const download = pausedDownload(gateway.port, token, new Promise(() => {}));
    await download.started;

    gateway.child.kill('SIGTERM');
    await draining;
    gateway.child.kill('SIGINT');
    expect(await gateway.exited).to.equal(1);
  });
});

describe('drainOnSignals (src/app/graceful-shutdown.ts)', function () {
  it('marks the instance not ready at the signal, before anything else, and exits 0 once the server is closed', async function () {
    const events: string[] = [];
    const server = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const exited = new Promise<number>((resolve) => {
      drainOnSignals({
        server,
        readiness: { markShuttingDown: () => events.push('not ready') },
        graceMs: 10_000,
        logger: quietLogger,
        cleanUp: async () => {
          events.push('cleaned up');
        },
        exit: (code) => resolve(code),
        signals: ['SIGUSR2'],
      });
    });
    process.kill(process.pid, 'SIGUSR2');
    expect(await exited).to.equal(0);
    expect(events).to.deep.equal(['not ready', 'cleaned up']);
    process.removeAllListeners('SIGUSR2');
  });

  it('answers the change feed\'s long polls at the signal (onDrain), so they do not hold the drain for their wait', async function () {
    const registry = new InMemoryClientRegistry();
    registry.add({ clientId: 'acme', secretHash: await hashTestSecret('acme-secret-acme-secret'), indexPath: 'indexes/acme.csv', enabled: true });
    const config = testConfig();
    const gateway = await createGateway(config, { store: new MemoryBlobStore(), registry, logger: quietLogger, changeStores: changeStoresWith({ log: new MemoryChangeLog({ clock: originZeroClock }) }) });
    const server = createHttpServer(gateway.app, { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, maxConnections: 100 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const exited = new Promise<number>((resolve) => {
      drainOnSignals({
        server,
        readiness: { markShuttingDown: () => undefined },
        // Longer than the test's own timeout: only the release lets the poll answer and the drain end.
        graceMs: 600_000,
        logger: quietLogger,
        onDrain: gateway.releaseWaits,
        cleanUp: async () => undefined,
        exit: (code) => resolve(code),
        signals: ['SIGUSR2'],
      });
    });
    try {
      const token = (await (
        await fetch(`${base}/oauth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'acme', client_secret: 'acme-secret-acme-secret' }) })
      ).json()) as { access_token: string };
      const first = (await (await fetch(`${base}/changes`, { headers: { authorization: `Bearer ${token.access_token}` } })).json()) as { nextCursor: string };
      const polling = fetch(`${base}/changes?wait=60&cursor=${encodeURIComponent(first.nextCursor)}`, { headers: { authorization: `Bearer ${token.access_token}` } });
      // The poll is waiting once a request sent after it has been answered (one connection each, in order).
      await fetch(`${base}/health`);
      process.kill(process.pid, 'SIGUSR2');
      const answer = await polling;
      expect(answer.status).to.equal(200);
      expect(await answer.json()).to.deep.include({ events: [], hasMore: false });
      expect(await exited).to.equal(0);
    } finally {
      process.removeAllListeners('SIGUSR2');
      server.closeAllConnections();
    }
  });
});
