import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { packageRoot } from '../../src/app/package-root.js';
import { publishedFiles, startMirrorGateway, type MirrorGateway, type PublishedFile } from '../support/mirror-gateway.js';
import { endlessBody, stallAfter, startTamperingProxy, type TamperingProxy } from '../support/tampering-proxy.js';
import { deadline } from '../support/deadlines.js';
import { bundleCommand, type BundledCommand } from '../support/bundled-command.js';

/* `dfg` as a subscriber runs it: a child process (client/src/cli/dfg.ts, bundled once) against the real gateway on Azurite. */

interface DfgRun {
  readonly child: ChildProcess;
  /** Resolves with the first stdout line that `match` accepts. */
  line(match: (line: string) => boolean): Promise<string>;
  readonly done: Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>;
}

const RUN_TIMEOUT_MS = deadline(20_000);

/** dfg's source, bundled once for this file (see bundled-command.ts). */
let dfg: BundledCommand | undefined;

function startDfg(args: readonly string[], env: Record<string, string>, cwd: string = packageRoot()): DfgRun {
  if (dfg === undefined) throw new Error('dfg was not bundled');
  // An absolute path, so that dfg can run in any folder.
  const child = spawn(process.execPath, [dfg.path, ...args], {
    cwd,
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: Array<{ match: (line: string) => boolean; resolve: (line: string) => void }> = [];
  child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
    for (const waiter of [...waiters]) {
      const found = stdout.split('\n').find(waiter.match);
      if (found !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(found);
      }
    }
  });
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
  return {
    child,
    done,
    line: (match) =>
      new Promise((resolve, reject) => {
        const found = stdout.split('\n').find(match);
        if (found !== undefined) resolve(found);
        else waiters.push({ match, resolve });
        void done.then(() => reject(new Error(`dfg exited before printing the line; stdout:\n${stdout}\nstderr:\n${stderr}`)));
      }),
  };
}

const runDfg = (args: readonly string[], env: Record<string, string>, cwd?: string) => startDfg(args, env, cwd).done;

describe('the dfg command', function () {
  const files = publishedFiles(5, { size: 20_000 });
  let mirror: MirrorGateway;
  let proxy: TamperingProxy;
  let home: string;
  let dir: string;
  /** Credentials in the environment only (no profile file exists under `home`). */
  let env: Record<string, string>;

  before(async function () {
    dfg = await bundleCommand(join(packageRoot(), 'client', 'src', 'cli', 'dfg.ts'), join(packageRoot(), 'client', 'package.json'));
    mirror = await startMirrorGateway(files);
    proxy = await startTamperingProxy(mirror.gateway.port);
  });

  after(async function () {
    // Optional chaining: when `before` failed, its own failure is the one to report.
    await proxy?.close();
    await mirror?.close();
    await dfg?.remove();
  });

  beforeEach(async function () {
    home = await mkdtemp(join(tmpdir(), 'dfg-home-'));
    dir = join(home, 'mirror');
    env = { HOME: home, DFG_URL: proxy.url, DFG_CLIENT_ID: mirror.clientId, DFG_CLIENT_SECRET: mirror.secret };
  });

  afterEach(async function () {
    await rm(home, { recursive: true, force: true });
  });

  const writeProfile = async (profile: object, mode: number): Promise<string> => {
    const path = join(home, '.config', 'dfg', 'profile.json');
    await mkdir(join(home, '.config', 'dfg'), { recursive: true });
    await writeFile(path, JSON.stringify(profile));
    await chmod(path, mode);
    return path;
  };
  const expectMirrored = async (expected: readonly PublishedFile[]): Promise<void> => {
    for (const file of expected) expect((await readFile(join(dir, ...file.path.split('/')))).equals(file.bytes), file.path).to.equal(true);
  };

  describe('account', function () {
    it('prints the caller\'s term and quota as a table, and the gateway\'s JSON with --json', async function () {
      const table = await runDfg(['account'], env);
      expect(table.code, table.stderr).to.equal(0);
      expect(table.stdout).to.match(new RegExp(`^client_id\\s+${mirror.clientId}$`, 'm'));
      expect(table.stdout).to.match(/^monthly_bytes\s+unlimited$/m);
      const json = await runDfg(['account', '--json'], env);
      expect(JSON.parse(json.stdout)).to.deep.equal({ clientId: mirror.clientId, term: { active: true } });
    });
  });

  describe('credentials', function () {
    it('when the profile file is readable by others (0644), refuses it with exit 2 and says chmod 600, never printing the secret', async function () {
      const path = await writeProfile({ url: proxy.url, clientId: mirror.clientId, clientSecret: mirror.secret }, 0o644);

      const result = await runDfg(['count'], { HOME: home });

      expect(result.code).to.equal(2);
      expect(result.stderr).to.contain(`chmod 600 ${path}`);
      expect(result.stderr + result.stdout).not.to.contain(mirror.secret);
    });

    it('when the profile file is 0600 under $XDG_CONFIG_HOME, uses it', async function () {
      const xdg = join(home, 'xdg');
      await mkdir(join(xdg, 'dfg'), { recursive: true });
      await writeFile(join(xdg, 'dfg', 'profile.json'), JSON.stringify({ url: proxy.url, clientId: mirror.clientId, clientSecret: mirror.secret }), { mode: 0o600 });

      const result = await runDfg(['count', '--json'], { HOME: home, XDG_CONFIG_HOME: xdg });

      expect(result.code, result.stderr).to.equal(0);
      expect(JSON.parse(result.stdout)).to.deep.equal({ count: files.length });
    });

    it('when DFG_CLIENT_SECRET is set, it takes precedence over the profile\'s secret', async function () {
      await writeProfile({ url: proxy.url, clientId: mirror.clientId, clientSecret: 'a-stale-secret-from-the-profile' }, 0o600);

      const result = await runDfg(['count'], { HOME: home, DFG_CLIENT_SECRET: mirror.secret });

      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout.trim()).to.equal(String(files.length));
    });

    it('when there is neither a profile nor the variables, exits 2 naming both', async function () {
      const result = await runDfg(['count'], { HOME: home });

      expect(result.code).to.equal(2);
      expect(result.stderr).to.contain('profile.json').and.contain('DFG_URL');
    });

    it('when the gateway refuses the secret, exits 3', async function () {
      const result = await runDfg(['sync', dir], { ...env, DFG_CLIENT_SECRET: 'wrong-secret-wrong-secret' });

      expect(result.code).to.equal(3);
      expect(result.stderr).to.contain('invalid_client');
    });
  });

  describe('usage', function () {
    for (const args of [['sync'], ['sync', 'x', '--concurrency', '0'], ['list', '--modified-since', 'yesterday'], ['frobnicate']]) {
      it(`when run as dfg ${args.join(' ')}, exits 2`, async function () {
        expect((await runDfg(args, env)).code).to.equal(2);
      });
    }

    it('when run as dfg sync x --watch --dry-run, says on stderr that they cannot be combined, and exits 2', async function () {
      const result = await runDfg(['sync', join(home, 'never'), '--watch', '--dry-run'], env);

      expect(result.code).to.equal(2);
      expect(result.stderr).to.contain('--watch cannot be combined with --dry-run');
      expect(result.stdout).to.equal('');
    });

    it('when asked for --help, lists the commands and the exit codes, and exits 0', async function () {
      const result = await runDfg(['--help'], env);

      expect(result.code).to.equal(0);
      for (const text of ['catalog', 'download', 'sync', 'Exit codes', '130']) expect(result.stdout).to.contain(text);
    });
  });

  describe('catalog, list, info, download', function () {
    it('when run on a pipe with --json, print the gateway\'s JSON; without it, a table', async function () {
      const [list, table, info] = await Promise.all([runDfg(['list', '--json'], env), runDfg(['catalog'], env), runDfg(['info', 'SYM2', '--json'], env)]);

      expect(JSON.parse(list.stdout)).to.have.property('count', files.length);
      expect(table.stdout.split('\n')[0]).to.match(/^SYMBOL\s+FILE\s+DESCRIPTION$/);
      expect(table.stdout).to.contain('data/even/file-2.bin');
      expect(JSON.parse(info.stdout)).to.include({ symbol: 'SYM2', size: files[2]?.bytes.length });
    });

    it('when list prints a table, each file has its storage path (the fileName of /list)', async function () {
      const result = await runDfg(['list'], env);

      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout.split('\n')[0]).to.match(/^SYMBOL\s+FILE\s+SIZE\s+UPLOADED\s+ETAG\s+DESCRIPTION$/);
      expect(result.stdout).to.match(/^SYM2\s+data\/even\/file-2\.bin\s/m);
    });

    it('when asked to download a symbol with -o, writes exactly its bytes there', async function () {
      const output = join(home, 'one.bin');

      const result = await runDfg(['download', 'SYM3', '-o', output], env);

      expect(result.code, result.stderr).to.equal(0);
      expect((await readFile(output)).equals(files[3]?.bytes ?? Buffer.alloc(0))).to.equal(true);
    });

    it('when a download to stdout (-o -) comes with no size and an endless body, writes nothing and exits 1', async function () {
      const unsized = await startTamperingProxy(mirror.gateway.port, (exchange) =>
        exchange.path.startsWith('/download/') ? { replaceBody: endlessBody().stream } : undefined,
      );
      try {
        const result = await runDfg(['download', 'SYM0', '-o', '-'], { ...env, DFG_URL: unsized.url });

        expect(result.code).to.equal(1);
        expect(result.stderr).to.contain('no size');
        expect(result.stdout).to.equal('');
      } finally {
        await unsized.close();
      }
    });
  });

  describe('download without -o, when the gateway names the file', function () {
    /** A proxy whose /catalog gives SYM0..SYM2 these FileNames (a hostile or broken gateway). */
    const catalogNaming = (names: readonly string[]) =>
      startTamperingProxy(mirror.gateway.port, (exchange) =>
        exchange.path === '/catalog'
          ? {
              rewrite: (body) => {
                const catalog = JSON.parse(body.toString('utf8')) as { files: Array<{ Symbol: string; FileName: string }> };
                for (const [index, name] of names.entries()) {
                  const file = catalog.files.find((entry) => entry.Symbol === `SYM${index}`);
                  if (file !== undefined) file.FileName = name;
                }
                return JSON.stringify(catalog);
              },
            }
          : undefined,
      );

    it('when the name is x/.bashrc, refuses with exit 1 asking for -o and leaves the .bashrc that is there', async function () {
      const hostile = await catalogNaming(['x/.bashrc']);
      try {
        await writeFile(join(home, '.bashrc'), 'mine\n');

        const result = await runDfg(['download', 'SYM0'], { ...env, DFG_URL: hostile.url }, home);

        expect(result.code).to.equal(1);
        expect(result.stderr).to.contain('-o');
        expect(await readFile(join(home, '.bashrc'), 'utf8')).to.equal('mine\n');
        expect((await readdir(home)).sort()).to.deep.equal(['.bashrc']);
      } finally {
        await hostile.close();
      }
    });

    it('when the name is ../evil, refuses with exit 1 asking for -o and writes nothing, here or above', async function () {
      const hostile = await catalogNaming(['data/x', '../evil']);
      const here = join(home, 'here');
      await mkdir(here);
      try {
        const result = await runDfg(['download', 'SYM1'], { ...env, DFG_URL: hostile.url }, here);

        expect(result.code).to.equal(1);
        expect(result.stderr).to.contain('-o');
        expect(await readdir(here)).to.deep.equal([]);
        expect(await readdir(home)).to.deep.equal(['here']);
      } finally {
        await hostile.close();
      }
    });

    it('when a file of that name exists (dfg did not write it), refuses with exit 1 asking for -o and leaves it', async function () {
      await writeFile(join(home, 'file-2.bin'), 'an unrelated file\n');

      const result = await runDfg(['download', 'SYM2'], env, home);

      expect(result.code).to.equal(1);
      expect(result.stderr).to.contain('file-2.bin').and.contain('-o');
      expect(await readFile(join(home, 'file-2.bin'), 'utf8')).to.equal('an unrelated file\n');
    });

    it('when a <name>.part is there that dfg did not write (no <name>.part.json), refuses with exit 1 asking for -o and leaves it', async function () {
      await writeFile(join(home, 'file-2.bin.part'), 'someone else\'s file\n');

      const result = await runDfg(['download', 'SYM2'], env, home);

      expect(result.code).to.equal(1);
      expect(result.stderr).to.contain('file-2.bin.part').and.contain('-o');
      expect(await readFile(join(home, 'file-2.bin.part'), 'utf8')).to.equal('someone else\'s file\n');
    });

    it('when the name is a plain one and free, writes the file under its base name in the current folder', async function () {
      const result = await runDfg(['download', 'SYM2'], env, home);

      expect(result.code, result.stderr).to.equal(0);
      expect((await readFile(join(home, 'file-2.bin'))).equals(files[2]?.bytes ?? Buffer.alloc(0))).to.equal(true);
    });
  });

  describe('when the gateway\'s answer is malformed', function () {
    const answers: Record<string, string> = {
      '/catalog': JSON.stringify({ clientId: 'mirror', count: 1, files: [{ Symbol: 7, FileName: null }] }),
      '/count': 'this is not JSON',
      '/info/SYM0': JSON.stringify({}),
      '/list?limit=10000': JSON.stringify({ files: null, count: 0, limit: 10000, truncated: false }),
    };
    let broken: TamperingProxy;

    before(async function () {
      broken = await startTamperingProxy(mirror.gateway.port, (exchange) => {
        const answer = answers[exchange.path];
        return answer === undefined ? undefined : { rewrite: () => answer };
      });
    });

    after(async function () {
      await broken.close();
    });

    for (const [args, says] of [
      [['catalog'], 'files[0].Symbol is not a string'],
      [['count'], 'not JSON'],
      [['info', 'SYM0'], 'symbol is not a string'],
      // Its /list is broken (a sync without --delete reads no /catalog).
      [['sync', 'DIR', '--quiet'], 'files'],
    ] as const) {
      it(`when dfg ${args.join(' ')} gets one, exits 1 saying what is wrong (${says}), never with a TypeError`, async function () {
        const result = await runDfg(args.map((arg) => (arg === 'DIR' ? dir : arg)), { ...env, DFG_URL: broken.url });

        expect(result.code).to.equal(1);
        expect(result.stderr).to.contain('malformed answer from the gateway').and.contain(says);
        expect(result.stderr).not.to.contain('TypeError');
      });
    }
  });

  describe('when the gateway\'s text holds terminal control characters', function () {
    const description = 'red \u001b[31m alert \u009b2J \u007f end';
    const hostilePath = 'data/\u001b]0;owned\u0007\u009bx.bin';
    /** Anything a terminal would act on: C0 (but the line feed that ends each line), DEL, C1. */
    const rawControl = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
    let hostile: TamperingProxy;

    before(async function () {
      // The same text in /catalog (what `dfg catalog` prints) and in /list (the paths a sync mirrors).
      hostile = await startTamperingProxy(mirror.gateway.port, (exchange) => {
        if (exchange.path === '/catalog') {
          return {
            rewrite: (body) => {
              const catalog = JSON.parse(body.toString('utf8')) as { files: Array<{ Symbol: string; FileName: string; Description: string }> };
              for (const file of catalog.files) {
                if (file.Symbol === 'SYM0') file.Description = description;
                if (file.Symbol === 'SYM1') file.FileName = hostilePath;
              }
              return JSON.stringify(catalog);
            },
          };
        }
        if (exchange.path.startsWith('/list?')) {
          return {
            rewrite: (body) => {
              const list = JSON.parse(body.toString('utf8')) as { files: Array<{ symbol: string; fileName: string; description: string }> };
              for (const file of list.files) {
                if (file.symbol === 'SYM0') file.description = description;
                if (file.symbol === 'SYM1') file.fileName = hostilePath;
              }
              return JSON.stringify(list);
            },
          };
        }
        return undefined;
      });
    });

    after(async function () {
      await hostile.close();
    });

    it('when printed as a table, shows them escaped (\\u001b), never raw', async function () {
      const result = await runDfg(['catalog'], { ...env, DFG_URL: hostile.url });

      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).not.to.match(rawControl);
      expect(result.stdout).to.contain('red \\u001b[31m alert \\u009b2J \\u007f end');
    });

    it('when printed as JSON, escapes them too, and the JSON still parses to the gateway\'s values', async function () {
      const result = await runDfg(['catalog', '--json'], { ...env, DFG_URL: hostile.url });

      expect(result.stdout).not.to.match(rawControl);
      const catalog = JSON.parse(result.stdout) as { files: Array<{ Symbol: string; FileName: string; Description: string }> };
      expect(catalog.files.find((file) => file.Symbol === 'SYM0')?.Description).to.equal(description);
      expect(catalog.files.find((file) => file.Symbol === 'SYM1')?.FileName).to.equal(hostilePath);
    });

    it('when a sync reports the file it refused, in messages and in progress lines, escapes them', async function () {
      const [quiet, json] = [await runDfg(['sync', dir, '--quiet'], { ...env, DFG_URL: hostile.url }), await runDfg(['sync', dir, '--progress', 'json'], { ...env, DFG_URL: hostile.url })];

      expect(quiet.code).to.equal(1);
      expect(quiet.stderr).to.contain('failed: data/\\u001b]0;owned\\u0007\\u009bx.bin');
      for (const output of [quiet.stdout, quiet.stderr, json.stdout, json.stderr]) expect(output).not.to.match(rawControl);
    });
  });

  describe('when a signal arrives while bodies keep coming', function () {
    /** Far more than any test writes: the gateway "announces" a file this big, and the body never ends. */
    const HUGE = 2 ** 40;
    /** What a client that stopped reading at the signal can still take: socket and stream buffers. */
    const AFTER_SIGNAL_BOUND = 64 * 1024 * 1024;
    const READING = 16 * 1024 * 1024;

    // A dfg that ignores the signal is killed after RUN_TIMEOUT_MS: the test must outlive that to report it.
    this.timeout(RUN_TIMEOUT_MS + 20_000);

    /** A proxy that says every file is HUGE bytes (in /info and /list) and answers each download with an endless body. */
    async function endlessProxy(): Promise<{ proxy: TamperingProxy; bodies: Array<ReturnType<typeof endlessBody>>; reading: (count: number) => Promise<void> }> {
      const bodies: Array<ReturnType<typeof endlessBody>> = [];
      const readers: Array<{ count: number; resolve: () => void }> = [];
      const check = (): void => {
        const reading = bodies.filter((body) => body.produced() >= READING).length;
        for (const reader of [...readers]) {
          if (reading >= reader.count) {
            readers.splice(readers.indexOf(reader), 1);
            reader.resolve();
          }
        }
      };
      const hugeSizes = (body: Buffer): string => {
        const answer = JSON.parse(body.toString('utf8')) as { size?: number; files?: Array<{ size?: number }> };
        if (answer.size !== undefined) answer.size = HUGE;
        for (const file of answer.files ?? []) file.size = HUGE;
        return JSON.stringify(answer);
      };
      const proxy = await startTamperingProxy(mirror.gateway.port, (exchange) => {
        if (exchange.path.startsWith('/info/') || exchange.path.startsWith('/list')) return { rewrite: hugeSizes };
        if (!exchange.path.startsWith('/download/')) return undefined;
        const body = endlessBody(check);
        bodies.push(body);
        return { headers: { 'content-length': String(HUGE) }, replaceBody: body.stream };
      });
      return { proxy, bodies, reading: (count) => new Promise((resolve) => { readers.push({ count, resolve }); check(); }) };
    }
    const produced = (bodies: ReadonlyArray<ReturnType<typeof endlessBody>>): number => bodies.reduce((sum, body) => sum + body.produced(), 0);

    it('when Ctrl-C (SIGINT) comes during a download, stops reading at once, keeps the .part and exits 130', async function () {
      const { proxy: endless, bodies, reading } = await endlessProxy();
      const output = join(home, 'huge.bin');
      try {
        const run = startDfg(['download', 'SYM0', '-o', output], { ...env, DFG_URL: endless.url });
        await reading(1);
        expect((await stat(`${output}.part`)).size).to.be.greaterThan(0);
        const atSignal = produced(bodies);
        run.child.kill('SIGINT');
        const result = await run.done;

        expect(result.code, result.stderr).to.equal(130);
        expect(produced(bodies) - atSignal, 'bytes the endless body produced after the signal').to.be.below(AFTER_SIGNAL_BOUND);
        expect((await stat(`${output}.part`)).size).to.be.greaterThan(0);
      } finally {
        await endless.close();
      }
    });

    it('when SIGTERM comes during a sync of four endless transfers, stops them all, keeps every .part and exits 130', async function () {
      const { proxy: endless, bodies, reading } = await endlessProxy();
      try {
        const run = startDfg(['sync', dir, '--concurrency', '4', '--quiet'], { ...env, DFG_URL: endless.url });
        await reading(4);
        const atSignal = produced(bodies);
        run.child.kill('SIGTERM');
        const result = await run.done;

        expect(result.code, result.stderr).to.equal(130);
        expect(bodies).to.have.length(4);
        expect(produced(bodies) - atSignal, 'bytes the endless bodies produced after the signal').to.be.below(AFTER_SIGNAL_BOUND);
        const parts = (await readdir(dir, { recursive: true })).filter((entry) => entry.endsWith('.part'));
        expect(parts).to.have.length(4);
      } finally {
        await endless.close();
      }
    });
  });

  describe('sync', function () {
    it('when run with --progress json, every line of stdout parses as JSON, from the plan to the summary, and exits 0', async function () {
      const result = await runDfg(['sync', dir, '--progress', 'json'], env);

      expect(result.code, result.stderr).to.equal(0);
      const events = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; report?: { downloaded?: number } });
      expect(events[0]?.type).to.equal('plan');
      expect(events.at(-1)).to.deep.include({ type: 'done' });
      expect(events.at(-1)?.report?.downloaded).to.equal(files.length);
      expect(events.filter((event) => event.type === 'file-done')).to.have.length(files.length);
      await expectMirrored(files);
    });

    it('when one file cannot be written (a folder stands in its place), mirrors the others and exits 1', async function () {
      const blocked = files[1] as PublishedFile;
      await mkdir(join(dir, ...blocked.path.split('/'), 'in-the-way'), { recursive: true });

      const result = await runDfg(['sync', dir, '--quiet'], env);

      expect(result.code).to.equal(1);
      expect(result.stderr).to.contain(`failed: ${blocked.path}`);
      await expectMirrored(files.filter((file) => file !== blocked));
    });

    it('when not on a terminal, reports JSON lines; when a file left the catalog, deletes it only with --delete and within --max-delete', async function () {
      const first = await runDfg(['sync', dir], env);
      expect(first.code).to.equal(0);
      // stdout is a pipe here, so without --progress the progress is JSON lines.
      expect(first.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { type: string }).type).at(-1)).to.equal('done');
      const leaving = files[4] as PublishedFile;
      await mirror.setIndex(files.filter((file) => file !== leaving));
      const leavingPath = join(dir, ...leaving.path.split('/'));
      try {
        expect((await runDfg(['sync', dir, '--quiet'], env)).code, 'without --delete').to.equal(0);
        await stat(leavingPath);

        const refused = await runDfg(['sync', dir, '--quiet', '--delete', '--max-delete', '0'], env);
        expect(refused.code).to.equal(1);
        expect(refused.stderr).to.contain('--max-delete 0');
        await stat(leavingPath);

        const dryRun = await runDfg(['sync', dir, '--delete', '--dry-run', '--progress', 'none'], env);
        expect(dryRun.stdout).to.contain(`would delete: ${leaving.path}`);
        await stat(leavingPath);

        expect((await runDfg(['sync', dir, '--quiet', '--delete'], env)).code).to.equal(0);
        const gone = await stat(leavingPath).then(() => false, () => true);
        expect(gone).to.equal(true);
      } finally {
        await mirror.setIndex(files);
      }
    });

    it('when interrupted by Ctrl-C mid-file, exits 130 keeping the .part, and the next run resumes it with Range', async function () {
      const big: PublishedFile = { symbol: 'BIG', path: 'big/big.bin', bytes: Buffer.alloc(2_000_000, 7) };
      big.bytes.write('unique head', 0);
      await mirror.publish(big.path, big.bytes);
      await mirror.setIndex([big]);
      const stalling = await startTamperingProxy(mirror.gateway.port, (exchange) =>
        exchange.path.startsWith('/download/') ? { body: stallAfter(400_000) } : undefined,
      );
      try {
        const run = startDfg(['sync', dir, '--progress', 'json'], { ...env, DFG_URL: stalling.url });
        await run.line((line) => line.includes('"file-progress"') && (JSON.parse(line) as { received: number }).received > 0);
        run.child.kill('SIGINT');
        const interrupted = await run.done;

        expect(interrupted.code).to.equal(130);
        const partSize = (await stat(join(dir, 'big', 'big.bin.part'))).size;
        expect(partSize).to.be.greaterThan(0).and.at.most(400_000);

        const before = proxy.downloads().length;
        const resumed = await runDfg(['sync', dir, '--quiet'], env);

        expect(resumed.code, resumed.stderr).to.equal(0);
        const [download] = proxy.downloads().slice(before);
        expect(download?.requestHeaders['range']).to.equal(`bytes=${partSize}-`);
        expect(download?.status).to.equal(206);
        expect((await readFile(join(dir, 'big', 'big.bin'))).equals(big.bytes)).to.equal(true);
        const leftover = await stat(join(dir, 'big', 'big.bin.part')).then(() => true, () => false);
        expect(leftover).to.equal(false);
      } finally {
        await stalling.close();
        await mirror.setIndex(files);
      }
    });
  });
});
