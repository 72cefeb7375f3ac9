import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { runClientsCli } from '../../src/app/clients-command.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { startGatewayProcess, type GatewayProcess } from '../support/server-process.js';

/*
 * The gateway streams: a download costs a constant amount of memory whatever the file's size and
 * however slowly the subscriber reads. The real server runs in a child process, so its resident set
 * is measured apart from mocha's, serving a sparse 256 MiB file from a local folder.
 */

const MiB = 1024 * 1024;
const fileSize = 256 * MiB;
/**
 * The subscriber reads this much, then stops reading while the server's RSS is sampled: a server
 * that ignored backpressure would keep reading the file into memory during every pause.
 */
const readerStepBytes = 2 * MiB;
const maxRssGrowth = 64 * MiB;
/**
 * The warm-up download before the baseline: as large as the bound, so that the runtime's own
 * working set for a stream (heap and new space grown, Node 24 collecting 1 MiB read buffers only
 * after tens of MiB of them) is in the baseline, and the growth measured is what scales with the file.
 */
const warmUpBytes = 64 * MiB;

const client = { clientId: 'bulk', secret: 'bulk-secret-0123456789abcdef' };

/** The resident set size of a process, from `/proc/<pid>/status` (Linux). */
async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (match === null) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

const openFilesOf = async (pid: number): Promise<number> => (await readdir(`/proc/${pid}/fd`)).length;

interface SteppedDownload {
  readonly status: number;
  readonly received: number;
  readonly complete: boolean;
}

/**
 * GETs `path` as a slow subscriber does: it reads `stepBytes`, then stops reading (so the server
 * meets TCP backpressure) until `whilePaused` has run, then reads on. With `disconnectAfter`, the
 * reader drops the connection once it has that many bytes. Driven by the data, not by timers.
 */
function steppedDownload(
  port: number,
  path: string,
  token: string,
  options: { stepBytes: number; whilePaused: () => Promise<void>; disconnectAfter?: number },
): Promise<SteppedDownload> {
  return new Promise((resolve, reject) => {
    const request = httpGet({ host: '127.0.0.1', port, path, agent: false, headers: { authorization: `Bearer ${token}` } }, (response) => {
      let received = 0;
      let sinceStep = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        sinceStep += chunk.length;
        if (options.disconnectAfter !== undefined && received >= options.disconnectAfter) {
          request.destroy();
          return;
        }
        if (sinceStep >= options.stepBytes) {
          sinceStep = 0;
          response.pause();
          options.whilePaused().then(
            () => response.resume(),
            (error: unknown) => request.destroy(error instanceof Error ? error : new Error(String(error))),
          );
        }
      });
      // A dropped connection reports 'aborted' here; the outcome is read from `complete` below.
      response.on('error', () => {});
      response.on('close', () => resolve({ status: response.statusCode ?? 0, received, complete: response.complete }));
    });
    request.on('error', (error) => {
      if (options.disconnectAfter === undefined) reject(error);
    });
  });
}

describe('streaming a large file with flat memory (the real server, in a child process)', function () {
  this.timeout(120_000);

  let workDir: string;
  let gateway: GatewayProcess;
  let token: string;

  before(async function () {
    if (!existsSync('/proc/self/status')) this.skip();
    workDir = await mkdtemp(join(tmpdir(), 'streaming-memory-'));
    const dataDir = join(workDir, 'data');
    await mkdir(join(dataDir, 'indexes'), { recursive: true });
    await mkdir(join(dataDir, 'bulk'), { recursive: true });
    await writeFile(
      join(dataDir, 'indexes', `${client.clientId}.csv`),
      buildIndexCsv([buildIndexRow({ Symbol: 'BIG', FileName: 'bulk/big.bin' })]),
    );
    // Sparse: 256 MiB long, no disk blocks; reads return zeros at file-system speed.
    const bigFile = join(dataDir, 'bulk', 'big.bin');
    await writeFile(bigFile, '');
    await truncate(bigFile, fileSize);

    const clientsFile = join(workDir, 'clients.json');
    const cliOutput: string[] = [];
    const exitCode = await runClientsCli(['add', client.clientId, '--secret', client.secret], {
      env: { CLIENTS_FILE: clientsFile },
      stdout: { write: (text: string) => cliOutput.push(text) },
      stderr: { write: (text: string) => cliOutput.push(text) },
    });
    expect(exitCode, cliOutput.join('')).to.equal(0);

    gateway = await startGatewayProcess({
      DATA_DIR: dataDir,
      CLIENTS_FILE: clientsFile,
      PORT: '0',
      TOKEN_SIGNING_KEY: 'streaming-memory-test-signing-key-0123456',
      LOG_LEVEL: 'info',
    });
    token = await tokenFor(gateway.port);
    // Warm up the download path (index load, first stream) so the baseline already includes it.
    const warmUp = await fetch(`http://127.0.0.1:${gateway.port}/download/BIG`, {
      headers: { authorization: `Bearer ${token}`, range: `bytes=0-${warmUpBytes - 1}` },
    });
    expect(warmUp.status).to.equal(206);
    expect((await warmUp.arrayBuffer()).byteLength).to.equal(warmUpBytes);
  });

  after(async function () {
    await gateway?.stop();
    if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
  });

  describe('GET /download/:symbol of a 256 MiB file by a slow subscriber', function () {
    it(`delivers every byte while the server's RSS grows by less than ${maxRssGrowth / MiB} MiB`, async function () {
      const baseline = await rssOf(gateway.pid);
      const samples: number[] = [];

      const download = await steppedDownload(gateway.port, '/download/BIG', token, {
        stepBytes: readerStepBytes,
        whilePaused: async () => void samples.push(await rssOf(gateway.pid)),
      });

      const growth = Math.max(...samples) - baseline;
      reportRss(this, baseline, samples);
      expect(download.status).to.equal(200);
      expect(download.complete).to.equal(true);
      expect(download.received).to.equal(fileSize);
      expect(samples.length, 'RSS samples taken during the download').to.be.above(10);
      expect(growth, `RSS growth ${(growth / MiB).toFixed(1)} MiB over a ${(baseline / MiB).toFixed(1)} MiB baseline`).to.be.below(maxRssGrowth);
    });
  });

  describe('when the subscriber disconnects half way', function () {
    it('keeps running, releases the file and the connection, its RSS stays near the baseline, and serves the next request', async function () {
      const baseline = await rssOf(gateway.pid);
      const openFiles = await openFilesOf(gateway.pid);
      const samples: number[] = [];
      // The server logs the cancelled storage read, then (the request log, on the socket's close) the request.
      const cancelled = Promise.all([
        gateway.nextLogLine('download cancelled by the client'),
        gateway.nextLogLine('request aborted'),
      ]);

      const download = await steppedDownload(gateway.port, '/download/BIG', token, {
        stepBytes: readerStepBytes,
        whilePaused: async () => void samples.push(await rssOf(gateway.pid)),
        disconnectAfter: fileSize / 2,
      });

      expect(download.status).to.equal(200);
      expect(download.complete).to.equal(false);
      expect(download.received).to.be.below(fileSize);
      // The server notices the disconnect, ends the storage read and closes the file and the socket.
      await cancelled;
      expect(await openFilesOf(gateway.pid), 'open file descriptors').to.be.at.most(openFiles);
      const next = await fetch(`http://127.0.0.1:${gateway.port}/download/BIG`, {
        headers: { authorization: `Bearer ${token}`, range: 'bytes=0-1023' },
      });
      expect(next.status).to.equal(206);
      expect((await next.arrayBuffer()).byteLength).to.equal(1024);
      const settled = await rssOf(gateway.pid);
      reportRss(this, baseline, [...samples, settled]);
      expect(gateway.child.exitCode, gateway.output()).to.equal(null);
      expect(Math.max(...samples) - baseline).to.be.below(maxRssGrowth);
      expect(settled - baseline, `RSS after the disconnect, over a ${(baseline / MiB).toFixed(1)} MiB baseline`).to.be.below(maxRssGrowth / 2);
    });
  });
});

async function tokenFor(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret }),
  });
  expect(response.status).to.equal(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** Puts the measurements in the test report (mocha's title), so a run shows them even when passing. */
function reportRss(context: Mocha.Context, baseline: number, samples: readonly number[]): void {
  const peak = Math.max(...samples);
  const line = `RSS baseline ${(baseline / MiB).toFixed(1)} MiB, peak ${(peak / MiB).toFixed(1)} MiB, growth ${((peak - baseline) / MiB).toFixed(1)} MiB over ${samples.length} samples`;
  if (context.test !== undefined) context.test.title += ` [${line}]`;
}
