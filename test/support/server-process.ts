import { spawn, type ChildProcess } from 'node:child_process';
import { packageRoot } from '../../src/app/package-root.js';

export interface GatewayProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  /** Everything the server printed so far. */
  output(): string;
  /** Resolves when a log line with this `msg` appears, counting lines already printed. */
  logLine(msg: string): Promise<Record<string, unknown>>;
  /** Resolves when a log line with this `msg` appears after this call. */
  nextLogLine(msg: string): Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or the signal) once the process has exited. */
  exited: Promise<number | NodeJS.Signals>;
  stop(): Promise<void>;
}

function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Which server to run: the TypeScript sources by default, or another entry such as a packaged build. */
export interface GatewayProcessOptions {
  /** Arguments to Node, e.g. `['/tmp/app/dist/src/app/main.js']`. */
  readonly nodeArgs?: readonly string[];
  readonly cwd?: string;
}

/**
 * Starts `src/app/main.ts` as `npm start` would, on a port the OS picks, with exactly `env` (and
 * PATH): the real process, for what only a process shows (memory, signals, exit codes, telemetry).
 */
export async function startGatewayProcess(env: Record<string, string>, options: GatewayProcessOptions = {}): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? ['--import', 'tsx', 'src/app/main.ts'])], {
    cwd: options.cwd ?? packageRoot(),
    env: { PATH: process.env['PATH'] ?? '', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const waiters: Array<{ msg: string; from: number; resolve: (line: Record<string, unknown>) => void }> = [];
  const onText = (text: string): void => {
    output += text;
    for (const waiter of [...waiters]) {
      const line = output.slice(waiter.from).split('\n').map(parseLine).find((entry) => entry?.['msg'] === waiter.msg);
      if (line !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  };
  child.stdout?.setEncoding('utf8').on('data', onText);
  child.stderr?.setEncoding('utf8').on('data', onText);
  const exited = new Promise<number | NodeJS.Signals>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const waitFor = (msg: string, from: number): Promise<Record<string, unknown>> =>
    new Promise((resolve) => {
      waiters.push({ msg, from, resolve });
      onText('');
    });
  const logLine = (msg: string): Promise<Record<string, unknown>> => waitFor(msg, 0);
  const listening = await Promise.race([
    logLine('data file gateway listening'),
    exited.then((code) => {
      throw new Error(`the gateway exited (${code}) before listening:\n${output}`);
    }),
  ]);
  if (typeof listening['port'] !== 'number' || child.pid === undefined) throw new Error(`no port in ${JSON.stringify(listening)}`);
  return {
    child,
    pid: child.pid,
    port: listening['port'],
    output: () => output,
    logLine,
    nextLogLine: (msg) => waitFor(msg, output.length),
    exited,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}
