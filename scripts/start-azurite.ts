/**
 * `npm run start:azurite`: the embedded default's demo, but on Azure Blob Storage. Starts Azurite
 * (the dev dependency, in memory), uploads the bundled sample data and the demo index into
 * container `data`, registers a `demo` client in a temporary CLIENTS_FILE, and runs the gateway
 * (`src/app/main.ts`) against it on PORT (default 3000), printing the Azurite connection string
 * and the same curl lines as `npm start`. Ctrl-C stops both.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { ContainerClient } from '@azure/storage-blob';
import { contentTypeOf } from '../src/adapters/storage/local-folder-blob-store.js';
import { runClientsCli } from '../src/app/clients-command.js';
import { printDemoInstructions } from '../src/app/demo-instructions.js';
import { bundledSampleDataDir, packageRoot } from '../src/app/package-root.js';
import { EXIT_WITH_PARENT, startAzurite } from '../test/support/azurite.js';

const CONTAINER = 'data';
const CLIENT_ID = 'demo';

/** Every file of the bundled sample data (its README aside), by storage path. */
async function sampleFiles(): Promise<Array<{ readonly path: string; readonly file: string }>> {
  const root = bundledSampleDataDir();
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && !(entry.parentPath === root && entry.name === 'README.md'))
    .map((entry) => join(entry.parentPath, entry.name))
    .map((file) => ({ path: relative(root, file).split(sep).join('/'), file }))
    .sort((a, b) => a.path.localeCompare(b.path));
}

const azurite = await startAzurite();
const folder = await mkdtemp(join(tmpdir(), 'dfg-azurite-'));
const stopAzurite = async (): Promise<void> => {
  await azurite.stop();
  await rm(folder, { recursive: true, force: true });
};

const container = new ContainerClient(azurite.connectionString, CONTAINER);
await container.createIfNotExists();
for (const { path, file } of await sampleFiles()) {
  const contentType = contentTypeOf(path);
  await container.getBlockBlobClient(path).uploadFile(file, contentType === undefined ? {} : { blobHTTPHeaders: { blobContentType: contentType } });
}

const clientsFile = join(folder, 'clients.json');
let added = '';
let notes = '';
const addStatus = await runClientsCli(['add', CLIENT_ID, '--index', `indexes/${CLIENT_ID}.csv`], {
  env: { CLIENTS_FILE: clientsFile },
  stdout: { write: (text: string) => (added += text) },
  stderr: { write: (text: string) => (notes += text) },
});
const clientSecret = /^client_secret: (\S+)$/m.exec(added)?.[1];
if (addStatus !== 0 || clientSecret === undefined) {
  await stopAzurite();
  throw new Error(`could not register the demo client (exit ${addStatus}): ${notes}`);
}

const { DATA_DIR: _dataDir, AZURE_STORAGE_ACCOUNT_URL: _accountUrl, ...inherited } = process.env;
// Detached: a Ctrl-C in the terminal reaches this script only, which passes one signal on, so the
// gateway drains once instead of taking a second signal as "exit at once". EXIT_WITH_PARENT: it
// leaves when this script does, even on SIGKILL, as its IPC channel then closes.
const gateway = spawn(process.execPath, ['--import', 'tsx', '--import', EXIT_WITH_PARENT, join(packageRoot(), 'src', 'app', 'main.ts')], {
  cwd: packageRoot(),
  env: { ...inherited, AZURE_STORAGE_CONNECTION_STRING: azurite.connectionString, AZURE_STORAGE_CONTAINER: CONTAINER, CLIENTS_FILE: clientsFile },
  stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  detached: true,
});

let pending = '';
gateway.stderr?.pipe(process.stderr);
gateway.stdout?.setEncoding('utf8').on('data', (text: string) => {
  process.stdout.write(text);
  pending += text;
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    if (!line.includes('"data file gateway listening"')) continue;
    const port = (JSON.parse(line) as { port?: unknown }).port;
    if (typeof port === 'number') printInstructions(port, clientSecret);
  }
});

function printInstructions(port: number, secret: string): void {
  printDemoInstructions(
    process.stdout,
    { port, clientId: CLIENT_ID, clientSecret: secret },
    {
      serving: `the bundled sample data from Azurite (container ${CONTAINER})`,
      notes: [`(a new secret is generated at every start, in a temporary CLIENTS_FILE: ${clientsFile})`],
    },
  );
  process.stdout.write(
    [
      '',
      'Azurite (the Azure Storage emulator, in memory: everything is gone when it stops):',
      `  AZURE_STORAGE_CONNECTION_STRING='${azurite.connectionString}'`,
      `  AZURE_STORAGE_CONTAINER=${CONTAINER}`,
      '',
      'Ctrl-C stops the gateway and Azurite.',
      '',
    ].join('\n'),
  );
}

let stopping = false;
const passOn = (signal: NodeJS.Signals): void => {
  stopping = true;
  if (gateway.exitCode === null && gateway.signalCode === null) gateway.kill(signal);
};
process.on('SIGINT', () => passOn('SIGINT'));
process.on('SIGTERM', () => passOn('SIGTERM'));

gateway.once('exit', (code, signal) => {
  void stopAzurite().finally(() => {
    if (!stopping) process.stderr.write(`the gateway exited (${signal ?? code}); Azurite is stopped\n`);
    process.exit(code ?? 1);
  });
});
