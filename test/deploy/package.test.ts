import { execFile } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { expect } from 'chai';
import yauzl from 'yauzl';
import { packageRoot } from '../../src/app/package-root.js';
import { sendRaw } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { startGatewayProcess, type GatewayProcess } from '../support/server-process.js';

/*
 * `npm run package` builds the zip App Service runs as it is (`az webapp deploy --type zip`, with
 * WEBSITE_RUN_FROM_PACKAGE=1): this test builds it, reads it, unpacks it into an empty folder and
 * runs what an operator runs from it, the server and the clients CLI, with no TypeScript, no dev
 * dependency and no build step in sight.
 */

const run = promisify(execFile);

interface ZipEntry {
  readonly name: string;
  /** Unix permission bits, e.g. 0o755. */
  readonly mode: number;
}

function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => yauzl.open(path, { lazyEntries: true }, (error, zip) => (error ? reject(error) : resolve(zip))));
}

/** Unpacks the zip into `folder`: with Info-ZIP's unzip where there is one (seconds for 40 000 files), else with yauzl. */
async function unpack(path: string, folder: string): Promise<void> {
  if (existsSync('/usr/bin/unzip')) {
    await run('/usr/bin/unzip', ['-q', path, '-d', folder], { maxBuffer: 64 * 1024 * 1024 });
    return;
  }
  await readZip(path, folder);
}

/** Every entry of the zip; with `into`, also writes each file there with its mode. */
async function readZip(path: string, into?: string): Promise<ZipEntry[]> {
  const zip = await openZip(path);
  const entries: ZipEntry[] = [];
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', resolve);
    zip.on('entry', (entry: yauzl.Entry) => {
      const mode = (entry.externalFileAttributes >>> 16) & 0o777;
      entries.push({ name: entry.fileName, mode });
      if (into === undefined) return zip.readEntry();
      const target = join(into, entry.fileName);
      zip.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        mkdir(dirname(target), { recursive: true })
          .then(() => pipeline(stream, createWriteStream(target)))
          .then(() => chmod(target, mode))
          .then(() => zip.readEntry(), reject);
      });
    });
    zip.readEntry();
  });
  return entries;
}

describe('npm run package (the deployable zip)', function () {
  // tsc, then `npm ci --omit=dev` in a staging folder, then zipping some 40 000 files.
  this.timeout(600_000);
  let scratch: string;
  let zipPath: string;
  let entries: ZipEntry[];
  let app: string;

  before(async function () {
    scratch = await mkdtemp(join(tmpdir(), 'dfg-package-test-'));
    zipPath = join(scratch, 'gateway.zip');
    await run('npm', ['run', 'package', '--silent', '--', '--out', zipPath], { cwd: packageRoot(), maxBuffer: 64 * 1024 * 1024 });
    app = join(scratch, 'wwwroot');
    entries = await readZip(zipPath);
    await unpack(zipPath, app);
  });

  after(async function () {
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  });

  describe('its content', function () {
    it('holds the compiled server and CLIs, the built portal, openapi.yaml, package.json and its lock file at the root', function () {
      const names = new Set(entries.map((entry) => entry.name));

      for (const name of ['dist/src/app/main.js', 'dist/src/app/clients-cli.js', 'dist/src/app/usage-cli.js', 'dist/portal/index.html', 'openapi.yaml', 'package.json', 'package-lock.json']) {
        expect(names.has(name), name).to.equal(true);
      }
    });

    it('holds the production dependencies, the reference page\'s swagger-ui-dist included', function () {
      const names = new Set(entries.map((entry) => entry.name));

      for (const name of ['node_modules/express/package.json', 'node_modules/@azure/storage-blob/package.json', 'node_modules/swagger-ui-dist/swagger-ui-bundle.js']) {
        expect(names.has(name), name).to.equal(true);
      }
    });

    it('leaves out sources, tests, sample data, build state and dev dependencies', function () {
      const unwanted = entries
        .map((entry) => entry.name)
        .filter(
          (name) =>
            /^(src|test|bench|deploy|portal|sample-data|\.github|\.ci)\//.test(name) ||
            (name.endsWith('.tsbuildinfo') && !name.startsWith('node_modules/')) ||
            /^node_modules\/(mocha|typescript|tsx|azurite|chai|nock|playwright-core|@redocly\/cli|@stoplight\/spectral-cli|@hey-api\/openapi-ts|yazl|vite|preact|axe-core)\//.test(name) ||
            name.startsWith('node_modules/.bin/'),
        );

      expect(unwanted).to.deep.equal([]);
    });

    it('keeps the bin entries executable', function () {
      const modes = new Map(entries.map((entry) => [entry.name, entry.mode]));

      for (const name of ['dist/src/app/main.js', 'dist/src/app/clients-cli.js', 'dist/src/app/usage-cli.js']) {
        expect(modes.get(name), name).to.equal(0o755);
      }
    });
  });

  describe('unpacked into an empty folder', function () {
    let data: string;
    let clientsFile: string;

    before(async function () {
      data = join(scratch, 'data');
      clientsFile = join(scratch, 'home', 'clients.json');
      await mkdir(join(data, 'indexes'), { recursive: true });
      await writeFile(join(data, 'indexes', 'acme.csv'), buildIndexCsv([buildIndexRow({ Symbol: 'CURVE', FileName: 'curve.csv' })]));
      await writeFile(join(data, 'curve.csv'), 'date,rate\n');
    });

    it('registers and lists clients with its clients CLI, run as a command (its bin entry)', async function () {
      const cli = join(app, 'dist', 'src', 'app', 'clients-cli.js');
      const env = { ...process.env, CLIENTS_FILE: clientsFile, PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}` };

      const added = await run(cli, ['add', 'acme'], { cwd: app, env });
      const listed = await run(cli, ['list'], { cwd: app, env });

      expect(added.stdout).to.match(/^client_secret: \S{43}$/m);
      expect(listed.stdout).to.match(/^acme\s+true\s+indexes\/acme\.csv/m);
    });

    describe('its server (node dist/src/app/main.js, the template\'s start command)', function () {
      let server: GatewayProcess;

      before(async function () {
        server = await startGatewayProcess(
          { DATA_DIR: data, CLIENTS_FILE: clientsFile, TOKEN_SIGNING_KEY: 'k'.repeat(48) },
          { nodeArgs: ['dist/src/app/main.js'], cwd: app },
        );
      });

      after(async function () {
        await server?.stop();
      });

      it('answers the health check path GET /ready with 200', async function () {
        expect((await sendRaw(server.port, 'GET', '/ready', {})).status).to.equal(200);
      });

      it('serves /docs and its scripts from the packaged swagger-ui-dist', async function () {
        const page = await sendRaw(server.port, 'GET', '/docs', {});
        const bundle = await sendRaw(server.port, 'GET', '/docs/swagger-ui-bundle.js', {});

        expect(page.status).to.equal(200);
        expect(bundle.status).to.equal(200);
        expect(bundle.headers['content-type']).to.equal('text/javascript; charset=utf-8');
      });

      it('serves the subscriber portal (/portal) and its script from the packaged dist/portal', async function () {
        const page = await sendRaw(server.port, 'GET', '/portal', {});
        const script = /src="(\/portal\/assets\/[^"]+\.js)"/.exec(page.body.toString('utf8'))?.[1] ?? '';
        const bundle = await sendRaw(server.port, 'GET', script, {});

        expect(page.status).to.equal(200);
        expect(bundle.status).to.equal(200);
        expect(bundle.headers['content-type']).to.equal('text/javascript; charset=utf-8');
      });
    });

    it('stops at start, naming the variable, when App Service left a Key Vault reference unresolved', async function () {
      const env = { PATH: process.env['PATH'] ?? '', DATA_DIR: data, CLIENTS_FILE: clientsFile, TOKEN_SIGNING_KEY: '@Microsoft.KeyVault(SecretUri=https://dfg-kv.vault.azure.net/secrets/token-signing-key/)' };

      const failure = await run(process.execPath, ['dist/src/app/main.js'], { cwd: app, env }).then(
        () => undefined,
        (error: unknown) => error as { code: number; stderr: string },
      );

      expect(failure?.code).to.equal(1);
      expect(failure?.stderr).to.match(/^Configuration error: TOKEN_SIGNING_KEY: is an unresolved Key Vault reference/m);
    });
  });
});
