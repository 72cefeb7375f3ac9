import { mkdir, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer, get as httpGet, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { drainOnSignals } from '../../src/app/graceful-shutdown.js';
import { runClientsCli } from '../../src/app/clients-command.js';
import { quietLogger } from '../support/gateway.js';
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
  const code = await runClientsCli(['add', client.clientId, '--secret', client.secret], {
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
});
