/**
 * The load of the bench's request-rate rows, from a process of its own: `wrk` when it is on the
 * PATH (Debian's package; a C client whose own cost is small beside any Node server), else a Node
 * process of this file. A load generator inside the bench's own process (as before 2026-11-26)
 * parses every 80 KB answer on the same two cores as the servers it measures: it saturated first and
 * pulled every ratio towards 1.0x, whatever the servers cost.
 *
 * Run as a script (`node --import tsx bench/load.ts <url> <concurrency> <seconds> [header:value]...`),
 * it prints one JSON line: `{"requests":N,"seconds":S}`, warm-up requests included in N.
 */
import { spawn, spawnSync } from 'node:child_process';
import { Agent, request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { fileURLToPath } from 'node:url';

export interface LoadResult {
  /** Requests answered, warm-up included (the server's CPU time covers them too). */
  readonly requests: number;
  /** Requests per second over the measured span. */
  readonly perSecond: number;
}

/** Which generator `generateLoad` uses on this machine, for the bench's header line. */
export function loadGenerator(): string {
  return wrkVersion() ?? 'a Node load process';
}

let wrkChecked: { version: string | undefined } | undefined;
function wrkVersion(): string | undefined {
  if (wrkChecked === undefined) {
    const probe = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
    const line = `${probe.stdout ?? ''}${probe.stderr ?? ''}`.split('\n')[0] ?? '';
    wrkChecked = { version: probe.error === undefined && /^wrk /.test(line) ? (line.split(' [')[0] ?? 'wrk') : undefined };
  }
  return wrkChecked.version;
}

/**
 * `concurrency` keep-alive connections asking `url` for `seconds`, from another process. Rejects
 * when an answer is an error (4xx or 5xx): a rate of refusals measures nothing.
 */
export async function generateLoad(url: string, headers: OutgoingHttpHeaders, concurrency: number, seconds: number): Promise<LoadResult> {
  const headerArgs = Object.entries(headers).map(([name, value]) => `${name}: ${String(value)}`);
  if (wrkVersion() !== undefined) {
    const output = await run('wrk', ['-t1', `-c${concurrency}`, `-d${seconds}s`, ...headerArgs.flatMap((header) => ['-H', header]), url]);
    // wrk counts 3xx with 2xx; a 304 is what the bench's conditional rows ask for.
    const refused = /Non-2xx or 3xx responses: (\d+)/.exec(output);
    if (refused !== null) throw new Error(`${url}: ${refused[1]} answers were errors\n${output}`);
    // Connections that failed, broke or timed out: the rate would not be one of answers.
    const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
    if (socketErrors !== null && socketErrors.slice(1).some((count) => Number(count) > 0)) throw new Error(`${url}: socket errors\n${output}`);
    const total = /(\d+) requests in ([\d.]+)(ms|s|m)/.exec(output);
    if (total === null) throw new Error(`wrk printed no total:\n${output}`);
    const span = Number(total[2]) * (total[3] === 'ms' ? 0.001 : total[3] === 'm' ? 60 : 1);
    return { requests: Number(total[1]), perSecond: Number(total[1]) / span };
  }
  const output = await run(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), url, String(concurrency), String(seconds), ...headerArgs]);
  const result = JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as { requests: number; measured: number; seconds: number };
  return { requests: result.requests, perSecond: result.measured / result.seconds };
}

function run(command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    // 'close', not 'exit': the last of its output may still be in the pipes when it exits.
    child.once('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`${command} exited with ${code}:\n${output}`))));
  });
}

/** The Node generator: warm-up (one request per connection), then `seconds` of requests. */
async function nodeLoad(url: string, concurrency: number, seconds: number, headers: OutgoingHttpHeaders): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const one = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const request = httpRequest(url, { headers, agent }, (response) => {
        if ((response.statusCode ?? 0) >= 400) reject(new Error(`${url}: ${response.statusCode}`));
        response.resume();
        response.on('end', resolve);
      });
      request.on('error', reject);
      request.end();
    });
  await Promise.all(Array.from({ length: concurrency }, one));
  let measured = 0;
  const started = process.hrtime.bigint();
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        await one();
        measured += 1;
      }
    }),
  );
  agent.destroy();
  const span = Number(process.hrtime.bigint() - started) / 1e9;
  process.stdout.write(`${JSON.stringify({ requests: measured + concurrency, measured, seconds: span })}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [url = '', concurrency = '8', seconds = '3', ...headerArgs] = process.argv.slice(2);
  const headers: OutgoingHttpHeaders = {};
  for (const header of headerArgs) {
    const colon = header.indexOf(':');
    headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
  }
  await nodeLoad(url, Number(concurrency), Number(seconds), headers);
}
