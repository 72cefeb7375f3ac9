import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/** A port nothing listens on now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

/** The machine's Redis (127.0.0.1:6379), which every test shares through a key prefix of its own. */
export const sharedRedisUrl = 'redis://127.0.0.1:6379';

/** A key prefix no other test run uses. */
export function uniqueKeyPrefix(name: string): string {
  return `test:${name}:${randomBytes(4).toString('hex')}:`;
}

/** A client to the shared Redis for a test to use directly. */
export function sharedRedis(): Redis {
  return new Redis(sharedRedisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000 });
}

export interface RunningRedis {
  readonly port: number;
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * A `redis-server` of the test's own, on `port` (a free one when absent), with nothing kept on
 * disk: for tests that stop Redis while the gateway serves, then start it again on the same port.
 */
export async function startRedisServer(port?: number): Promise<RunningRedis> {
  const chosen = port ?? (await freePort());
  const child: ChildProcess = spawn('redis-server', ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}):\n${output}`)));
  });
  child.stderr?.resume();
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  return {
    port: chosen,
    url: `redis://127.0.0.1:${chosen}`,
    stop: async () => {
      process.removeListener('exit', killOnExit);
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await exited;
    },
  };
}
