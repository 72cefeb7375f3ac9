/**
 * `npm run soak [-- --seconds 60 --concurrency 200]`: the real server (src/app/main.ts, in a child
 * process, on a local folder) under a mixed load on loopback, with hostile behaviour mixed in:
 * readers that stop reading, clients that abort mid-download, forged tokens, unsafe paths, token
 * requests with wrong secrets. Prints errors, RSS and open descriptors before, during and after,
 * and exits 1 on any 5xx, a server that died, descriptors not released, or memory that kept growing.
 * Not part of `npm test`: it runs for a minute and measures the machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { runClientsCli } from '../src/app/clients-command.js';
import { packageRoot } from '../src/app/package-root.js';
import { buildIndexCsv, buildIndexRow } from '../test/support/index-csv-builder.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    concurrency: { type: 'string', default: '200' },
  },
});
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);
const MiB = 1024 * 1024;
const idleTimeoutSeconds = 5;
const clients = Array.from({ length: 10 }, (_, i) => ({ clientId: `soak-${i}`, secret: `soak-secret-${i}-0123456789abcdef` }));

interface Sample {
  readonly at: number;
  readonly rss: number;
  readonly fds: number;
}

async function sampleOf(pid: number, at: number): Promise<Sample> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1] ?? 0) * 1024;
  const fds = (await readdir(`/proc/${pid}/fd`)).length;
  return { at, rss, fds };
}

async function prepareData(workDir: string): Promise<{ dataDir: string; clientsFile: string }> {
  const dataDir = join(workDir, 'data');
  await mkdir(join(dataDir, 'indexes'), { recursive: true });
  await mkdir(join(dataDir, 'files'), { recursive: true });
  const rows = [
    buildIndexRow({ Symbol: 'SMALL', FileName: 'files/small.csv' }),
    buildIndexRow({ Symbol: 'BIG', FileName: 'files/big.bin' }),
    buildIndexRow({ Symbol: 'MISSING', FileName: 'files/missing.csv' }),
    ...Array.from({ length: 50 }, (_, i) => buildIndexRow({ Symbol: `Q${i}`, FileName: `files/q${i}.csv` })),
  ];
  await writeFile(join(dataDir, 'files', 'small.csv'), 'date,value\n'.repeat(2000));
  await writeFile(join(dataDir, 'files', 'big.bin'), '');
  await truncate(join(dataDir, 'files', 'big.bin'), 64 * MiB);
  for (let i = 0; i < 50; i += 1) await writeFile(join(dataDir, 'files', `q${i}.csv`), `q,${i}\n`);
  const clientsFile = join(workDir, 'clients.json');
  for (const client of clients) {
    await writeFile(join(dataDir, 'indexes', `${client.clientId}.csv`), buildIndexCsv(rows));
    const code = await runClientsCli(['add', client.clientId, '--secret', client.secret], {
      env: { CLIENTS_FILE: clientsFile },
      stdout: { write: () => true },
      stderr: { write: () => true },
    });
    if (code !== 0) throw new Error(`clients add ${client.clientId} failed`);
  }
  return { dataDir, clientsFile };
}

async function startServer(dataDir: string, clientsFile: string): Promise<{ child: ChildProcess; port: number; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/main.ts'], {
    cwd: packageRoot(),
    env: {
      PATH: process.env['PATH'] ?? '',
      DATA_DIR: dataDir,
      CLIENTS_FILE: clientsFile,
      PORT: '0',
      TOKEN_SIGNING_KEY: 'soak-test-signing-key-0123456789abcdef',
      LOG_LEVEL: 'warn',
      DOWNLOAD_RATE_LIMIT: '1000000',
      REQUEST_RATE_LIMIT: '1000000',
      TOKEN_ISSUE_LIMIT: '1000000',
      DOWNLOAD_IDLE_TIMEOUT_SECONDS: String(idleTimeoutSeconds),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => (output += text));
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (output += text));
  // LOG_LEVEL=warn hides the start-up line: find the port from the process's listening socket.
  const port = await new Promise<number>((resolve, reject) => {
    const started = Date.now();
    const poll = async (): Promise<void> => {
      if (child.exitCode !== null) return reject(new Error(`the server exited:\n${output}`));
      const port = await listeningPort(child.pid ?? 0);
      if (port !== undefined) return resolve(port);
      if (Date.now() - started > 30_000) return reject(new Error(`the server did not listen in 30 s:\n${output}`));
      setTimeout(() => void poll(), 100);
    };
    void poll();
  });
  return { child, port, output: () => output };
}

/** The TCP port a process listens on, from /proc (its sockets' inodes against /proc/net/tcp*). */
async function listeningPort(pid: number): Promise<number | undefined> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [])) {
    const target = await import('node:fs/promises').then((fs) => fs.readlink(`/proc/${pid}/fd/${fd}`)).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode !== undefined) inodes.add(inode);
  }
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      // st 0A is LISTEN.
      if (fields[3] === '0A' && inodes.has(fields[9] ?? '')) return parseInt((fields[1] ?? '').split(':')[1] ?? '', 16);
    }
  }
  return undefined;
}

interface Tally {
  statuses: Map<string, number>;
  clientErrors: Map<string, number>;
  serverErrors: string[];
  bytes: number;
}

function count(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

let agent = new Agent({ keepAlive: true, maxSockets: concurrency });

/** One request; `reader` decides how the body is consumed. Resolves with the status (0 on a connection error). */
function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | undefined,
  reader: (response: IncomingMessage, done: () => void) => void,
  useAgent = true,
): Promise<number> {
  return new Promise((resolve) => {
    let status = 0;
    const request = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: useAgent ? agent : false }, (response) => {
      status = response.statusCode ?? 0;
      response.on('error', () => {});
      reader(response, () => resolve(status));
    });
    request.on('error', () => resolve(status));
    // A response cut short does not always close itself: the request's close always comes.
    request.on('close', () => resolve(status));
    request.end(body);
  });
}

const readAll =
  (tally: Tally) =>
  (response: IncomingMessage, done: () => void): void => {
    response.on('data', (chunk: Buffer) => (tally.bytes += chunk.length));
    response.on('end', done);
    response.on('close', done);
  };

async function token(port: number, client: { clientId: string; secret: string }): Promise<string> {
  let text = '';
  await send(
    port,
    'POST',
    '/oauth/token',
    { 'content-type': 'application/x-www-form-urlencoded' },
    new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret }).toString(),
    (response, done) => {
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', done);
    },
  );
  return (JSON.parse(text) as { access_token: string }).access_token;
}

async function worker(port: number, tokens: string[], until: number, tally: Tally, id: number): Promise<void> {
  let etag = '';
  while (Date.now() < until) {
    const bearer = { authorization: `Bearer ${tokens[id % tokens.length] ?? ''}` };
    const roll = Math.random();
    let status: number;
    let kind: string;
    if (roll < 0.15) {
      kind = 'GET /catalog';
      status = await send(port, 'GET', '/catalog', bearer, undefined, readAll(tally));
    } else if (roll < 0.25) {
      kind = 'GET /list';
      status = await send(port, 'GET', '/list?limit=20', bearer, undefined, readAll(tally));
    } else if (roll < 0.3) {
      kind = 'GET /count';
      status = await send(port, 'GET', '/count', bearer, undefined, readAll(tally));
    } else if (roll < 0.4) {
      kind = 'GET /info';
      status = await send(port, 'GET', '/info/SMALL', bearer, undefined, (response, done) => {
        etag = String(response.headers['etag'] ?? '');
        readAll(tally)(response, done);
      });
    } else if (roll < 0.55) {
      kind = 'GET /download small';
      status = await send(port, 'GET', '/download/SMALL', bearer, undefined, readAll(tally));
    } else if (roll < 0.62) {
      kind = 'GET /download 304';
      status = await send(port, 'GET', '/download/SMALL', { ...bearer, 'if-none-match': etag }, undefined, readAll(tally));
    } else if (roll < 0.7) {
      kind = 'GET /download range of 64 MiB';
      const start = Math.floor(Math.random() * 60) * MiB;
      status = await send(port, 'GET', '/download/BIG', { ...bearer, range: `bytes=${start}-${start + 4 * MiB - 1}` }, undefined, readAll(tally));
    } else if (roll < 0.74) {
      kind = 'HEAD /files/big.bin';
      status = await send(port, 'HEAD', '/files/big.bin', bearer, undefined, readAll(tally));
    } else if (roll < 0.78) {
      kind = 'aborted download';
      status = await send(
        port,
        'GET',
        '/download/BIG',
        bearer,
        undefined,
        (response, done) => {
          let received = 0;
          response.on('data', (chunk: Buffer) => {
            received += chunk.length;
            if (received > MiB) {
              response.destroy();
              done();
            }
          });
          response.on('close', done);
        },
        false,
      );
    } else if (roll < 0.8) {
      kind = 'stalled reader';
      status = await send(
        port,
        'GET',
        '/download/BIG',
        bearer,
        undefined,
        (response, done) => {
          // Read 256 KiB, stop reading for longer than the idle timeout, then drain what is left.
          let received = 0;
          let stalled = false;
          response.on('data', (chunk: Buffer) => {
            received += chunk.length;
            if (received > 256 * 1024 && !stalled) {
              stalled = true;
              response.pause();
              setTimeout(() => response.resume(), (idleTimeoutSeconds + 2) * 1000);
            }
          });
          response.on('end', done);
          response.on('close', done);
        },
        false,
      );
    } else if (roll < 0.85) {
      kind = 'POST /oauth/token';
      const client = clients[id % clients.length];
      const wrong = Math.random() < 0.3;
      status = await send(
        port,
        'POST',
        '/oauth/token',
        { 'content-type': 'application/x-www-form-urlencoded' },
        new URLSearchParams({ grant_type: 'client_credentials', client_id: client?.clientId ?? '', client_secret: wrong ? 'a-wrong-secret-0000000' : (client?.secret ?? '') }).toString(),
        readAll(tally),
      );
      kind += wrong ? ' (wrong secret)' : '';
    } else if (roll < 0.9) {
      kind = 'forged token';
      status = await send(port, 'GET', '/catalog', { authorization: 'Bearer eyJhbGciOiJub25lIn0.e30.' }, undefined, readAll(tally));
    } else if (roll < 0.95) {
      kind = 'unsafe path';
      status = await send(port, 'GET', '/files/%2e%2e/%2e%2e/etc/passwd', bearer, undefined, readAll(tally));
    } else {
      kind = 'GET /download missing file';
      status = await send(port, 'GET', '/download/MISSING', bearer, undefined, readAll(tally));
    }
    if (status === 0) count(tally.clientErrors, kind);
    else count(tally.statuses, `${kind} -> ${status}`);
    if (status >= 500) tally.serverErrors.push(`${kind} -> ${status}`);
  }
}

function mib(bytes: number): string {
  return `${(bytes / MiB).toFixed(1)} MiB`;
}

async function main(): Promise<void> {
  const workDir = await mkdtemp(join(tmpdir(), 'gateway-soak-'));
  const { dataDir, clientsFile } = await prepareData(workDir);
  const server = await startServer(dataDir, clientsFile);
  const pid = server.child.pid ?? 0;
  const failures: string[] = [];
  try {
    const tokens = await Promise.all(clients.map((client) => token(server.port, client)));
    // Warm up every path once, so the baseline includes loaded indexes and compiled code.
    const warm: Tally = { statuses: new Map(), clientErrors: new Map(), serverErrors: [], bytes: 0 };
    await worker(server.port, tokens, Date.now() + 2000, warm, 0);
    agent.destroy();
    agent = new Agent({ keepAlive: true, maxSockets: concurrency });
    await delay(500);
    const before = await sampleOf(pid, 0);

    const tally: Tally = { statuses: new Map(), clientErrors: new Map(), serverErrors: [], bytes: 0 };
    const started = Date.now();
    const until = started + seconds * 1000;
    const during: Sample[] = [];
    const sampler = setInterval(() => {
      void sampleOf(pid, Math.round((Date.now() - started) / 1000)).then((sample) => during.push(sample), () => undefined);
    }, 5000);
    await Promise.all(Array.from({ length: concurrency }, (_, id) => worker(server.port, tokens, until, tally, id)));
    clearInterval(sampler);
    agent.destroy();
    const loadSeconds = (Date.now() - started) / 1000;

    // Let the server drop what it holds: stalled downloads are cut after the idle timeout.
    let after = await sampleOf(pid, Math.round((Date.now() - started) / 1000));
    for (let waited = 0; waited < (idleTimeoutSeconds + 10) * 1000 && after.fds > before.fds + 5; waited += 500) {
      await delay(500);
      after = await sampleOf(pid, Math.round((Date.now() - started) / 1000));
    }

    const alive = server.child.exitCode === null;
    const peakRss = Math.max(...during.map((sample) => sample.rss), after.rss);
    const requests = [...tally.statuses.values()].reduce((a, b) => a + b, 0);
    console.log(`\n## Soak: ${concurrency} concurrent clients for ${loadSeconds.toFixed(0)} s on loopback (${process.platform}, Node ${process.version})\n`);
    const unanswered = [...tally.clientErrors.values()].reduce((a, b) => a + b, 0);
    console.log(
      `${requests} answers, ${mib(tally.bytes)} received; ${unanswered} requests got no status line (a keep-alive connection closed by the server's 5 s idle timeout just as the client reused it)\n`,
    );
    console.log('| request | status | count |\n| --- | --- | --- |');
    for (const [key, value] of [...tally.statuses.entries()].sort()) {
      const [kind, status] = key.split(' -> ');
      console.log(`| ${kind} | ${status} | ${value} |`);
    }
    for (const [kind, value] of [...tally.clientErrors.entries()].sort()) console.log(`| ${kind} | (no status: connection closed) | ${value} |`);
    console.log('\n| moment | RSS | open descriptors |\n| --- | --- | --- |');
    console.log(`| before | ${mib(before.rss)} | ${before.fds} |`);
    for (const sample of during) console.log(`| ${sample.at} s | ${mib(sample.rss)} | ${sample.fds} |`);
    console.log(`| after (settled) | ${mib(after.rss)} | ${after.fds} |`);

    if (!alive) failures.push(`the server died:\n${server.output()}`);
    if (tally.serverErrors.length > 0) failures.push(`${tally.serverErrors.length} answers were 5xx: ${[...new Set(tally.serverErrors)].join(', ')}`);
    if (after.fds > before.fds + 5) failures.push(`open descriptors went from ${before.fds} to ${after.fds} and stayed there`);
    const lateGrowth = during.length >= 4 ? (during.at(-1)?.rss ?? 0) - (during[Math.floor(during.length / 2)]?.rss ?? 0) : 0;
    if (peakRss - before.rss > 512 * MiB) failures.push(`RSS grew by ${mib(peakRss - before.rss)} (limit 512 MiB)`);
    if (lateGrowth > 128 * MiB) failures.push(`RSS kept growing in the second half of the run: +${mib(lateGrowth)}`);
    console.log(failures.length === 0 ? '\nResult: PASS (no 5xx, descriptors released, memory bounded)' : `\nResult: FAIL\n- ${failures.join('\n- ')}`);
  } finally {
    server.child.kill('SIGTERM');
    await rm(workDir, { recursive: true, force: true });
  }
  process.exitCode = failures.length === 0 ? 0 : 1;
}

await main();
