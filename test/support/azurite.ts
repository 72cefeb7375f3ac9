import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { ContainerClient } from '@azure/storage-blob';

/** The emulator's well-known development account (published in the Azurite README). */
export const AZURITE_ACCOUNT = 'devstoreaccount1';
export const AZURITE_KEY =
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

/** The response deadline of test stores: the gateway's default (STORAGE_TIMEOUT_SECONDS=30). */
export const TEST_STORE_TIMEOUTS = { responseTimeoutMs: 30_000 };

/** SDK retries turned down so that a failing test fails in milliseconds, not after back-offs. */
export const FAST_FAILING_PIPELINE = { retryOptions: { maxTries: 1 }, ...TEST_STORE_TIMEOUTS };

export interface RunningAzurite {
  readonly connectionString: string;
  /** e.g. `http://127.0.0.1:41234/devstoreaccount1` */
  readonly blobEndpoint: string;
  /** How long the server took to start, in milliseconds. */
  readonly startMs: number;
  stop(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 30_000;
const LISTENING = /successfully listens on (http:\/\/\S+)/;
// Azurite exits when the test process goes away, even on SIGKILL, because the IPC channel closes.
export const EXIT_WITH_PARENT = 'data:text/javascript,process.once("disconnect",()=>process.exit(0))';

/**
 * Starts an Azurite blob server in a child process (so its memory is not the test process's), on a
 * port the OS picks (or `port`, to start it again where a stopped one was), with in-memory persistence.
 */
export async function startAzurite(options: { readonly port?: number } = {}): Promise<RunningAzurite> {
  const startedAt = performance.now();
  const service = await startAzuriteService(
    'azurite/dist/src/blob/main.js',
    ['--blobHost', '127.0.0.1', '--blobPort', String(options.port ?? 0)],
    LISTENING,
  );
  const blobEndpoint = `${service.url}/${AZURITE_ACCOUNT}`;
  return {
    blobEndpoint,
    connectionString:
      `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};` +
      `BlobEndpoint=${blobEndpoint};`,
    startMs: Math.round(performance.now() - startedAt),
    stop: service.stop,
  };
}

export interface RunningAzuriteTables {
  /** e.g. `http://127.0.0.1:41235/devstoreaccount1` */
  readonly tableEndpoint: string;
  stop(): Promise<void>;
}

/**
 * Starts Azurite's table service in a child process of its own, as `startAzurite` does the blob
 * service; `tableConnectionString` names its endpoint for the table SDK.
 */
export async function startAzuriteTables(options: { readonly port?: number } = {}): Promise<RunningAzuriteTables> {
  // The table service does not say which port it was given for 0, so the port is picked here.
  const port = options.port ?? (await freePort());
  const service = await startAzuriteService('azurite/dist/src/table/main.js', ['--tableHost', '127.0.0.1', '--tablePort', String(port)], TABLE_STARTED);
  return { tableEndpoint: `http://127.0.0.1:${port}/${AZURITE_ACCOUNT}`, stop: service.stop };
}

/**
 * One of Azurite's services (`main`, resolved from this repository) in a child process, so its
 * memory is not the test process's, with in-memory persistence; resolves with the URL its
 * `listening` line names once it says it listens.
 */
async function startAzuriteService(main: string, hostAndPort: readonly string[], listening: RegExp): Promise<{ readonly url: string; stop(): Promise<void> }> {
  const child = fork(
    createRequire(import.meta.url).resolve(main),
    [...hostAndPort, '--inMemoryPersistence', '--skipApiVersionCheck', '--disableTelemetry', '--loose', '--silent'],
    {
      // Not the test process's flags: Azurite is plain CommonJS and needs no TypeScript loader.
      execArgv: ['--import', EXIT_WITH_PARENT],
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    },
  );
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  try {
    const url = await listeningUrl(child, listening);
    return {
      url,
      stop: async () => {
        process.removeListener('exit', killOnExit);
        await stopChild(child);
      },
    };
  } catch (error) {
    process.removeListener('exit', killOnExit);
    await stopChild(child);
    throw error;
  }
}

/** A connection string of the emulator's account that names only its table endpoint. */
export function tableConnectionString(tableEndpoint: string): string {
  return `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};TableEndpoint=${tableEndpoint};`;
}

/** A table name no other test uses: letters and digits, starting with a letter. */
export function uniqueTableName(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
}

let sharedTables: Promise<RunningAzuriteTables> | undefined;

/** One Azurite table service for the whole mocha run, started by the first test file that asks. */
export function sharedAzuriteTables(): Promise<RunningAzuriteTables> {
  sharedTables ??= startAzuriteTables().catch((error: unknown) => {
    sharedTables = undefined;
    throw error;
  });
  return sharedTables;
}

let shared: Promise<RunningAzurite> | undefined;

/**
 * One Azurite for the whole mocha run, started by the first test file that asks. It is stopped when
 * the test process exits (mocha runs with `exit: true`), or by the root hook below when this file is
 * loaded with mocha's `--require`.
 */
export function sharedAzurite(): Promise<RunningAzurite> {
  shared ??= startAzurite().catch((error: unknown) => {
    shared = undefined;
    throw error;
  });
  return shared;
}

export const mochaHooks = {
  async afterAll(): Promise<void> {
    const running = shared;
    shared = undefined;
    if (running !== undefined) await (await running).stop();
    const tables = sharedTables;
    sharedTables = undefined;
    if (tables !== undefined) await (await tables).stop();
  },
};

/**
 * Creates a container with a unique name starting with `prefix` (one per test file), on a pipeline
 * whose retries are turned down.
 */
export async function createTestContainer(connectionString: string, prefix: string): Promise<ContainerClient> {
  // Lowercase letters, digits and single hyphens, 3-63 characters, starting with a letter or digit.
  const base =
    prefix.toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 40).replace(/^-+|-+$/g, '') || 'test';
  const name = `${base}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
  const container = new ContainerClient(connectionString, name, FAST_FAILING_PIPELINE);
  await container.create();
  return container;
}

const TABLE_STARTED = /Table service successfully started on (\S+)/;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function listeningUrl(child: ChildProcess, listening: RegExp = LISTENING): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => fail(new Error(`Azurite did not start in ${STARTUP_TIMEOUT_MS} ms`)),
      STARTUP_TIMEOUT_MS,
    );
    const onOutput = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = listening.exec(output);
      if (match !== null) finish(() => resolve((match[1] ?? '').replace(/\/+$/, '')));
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void =>
      fail(new Error(`Azurite exited (${signal ?? code}) before listening:\n${output}`));
    const fail = (error: Error): void => finish(() => reject(error));
    const finish = (settle: () => void): void => {
      clearTimeout(timer);
      child.stdout?.removeListener('data', onOutput);
      child.stderr?.removeListener('data', onOutput);
      child.removeListener('exit', onExit);
      // Keep draining, so a chatty server never blocks on a full pipe.
      child.stdout?.resume();
      child.stderr?.resume();
      settle();
    };
    child.stdout?.on('data', onOutput);
    child.stderr?.on('data', onOutput);
    child.once('exit', onExit);
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Closing the IPC channel ends it at once (see EXIT_WITH_PARENT); Azurite's own SIGTERM handler
  // closes the server but can leave the process up. In-memory data needs no graceful shutdown.
  if (child.connected) child.disconnect();
  else child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
