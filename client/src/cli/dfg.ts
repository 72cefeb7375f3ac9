import { readFileSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { GatewayClientError, isClientError } from '../errors.js';
import { createClient, type GatewayClient } from '../gateway-client.js';
import { transferFile } from '../sync/file-transfer.js';
import { localPathFor, PART_STATE_SUFFIX, PART_SUFFIX } from '../sync/local-path.js';
import type { SyncReport } from '../sync/sync-catalog.js';
import type { ChangeReport } from '../sync/watch-changes.js';
import { ExitCode, exitCodesHelp } from './exit-codes.js';
import { loadCredentials } from './profile.js';
import { createProgressReporter, type ProgressMode } from './progress-reporter.js';
import { formatBytes, formatTable } from './table.js';
import { escapeControls, jsonLine } from './terminal-text.js';

type Output = NodeJS.WritableStream & { readonly isTTY?: boolean };

/** What `dfg` talks to: streams, environment and the stop signal, so tests can run it in-process too. */
export interface DfgIo {
  readonly stdout: Output;
  readonly stderr: Output;
  readonly env: NodeJS.ProcessEnv;
  /** Aborted on Ctrl-C. */
  readonly signal: AbortSignal;
}

const credentialsHelp = `Credentials:
  DFG_URL, DFG_CLIENT_ID, DFG_CLIENT_SECRET, each taking precedence when set; otherwise the profile
  file ($XDG_CONFIG_HOME/dfg/profile.json, by default ~/.config/dfg/profile.json, or --profile)
  holding {"url": "...", "clientId": "...", "clientSecret": "..."}, which must be mode 0600.`;

/** Runs `dfg` with `argv` (the arguments after the program name) and resolves to its exit code. */
export async function runDfg(argv: readonly string[], io: DfgIo): Promise<number> {
  let exitCode: number = ExitCode.success;
  const client = async (profile: string | undefined): Promise<GatewayClient> => {
    const credentials = await loadCredentials(io.env, ...(profile === undefined ? [] : [profile]));
    return createClient({ baseUrl: credentials.url, clientId: credentials.clientId, clientSecret: credentials.clientSecret });
  };
  const program = new Command('dfg')
    .description('Data File Gateway subscriber client: list, download and mirror your catalog')
    .version(clientVersion())
    .option('--profile <file>', 'the profile file (default: $XDG_CONFIG_HOME/dfg/profile.json)')
    .addHelpText('after', `\n${credentialsHelp}\n\n${exitCodesHelp}\n`)
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .showHelpAfterError('(dfg --help for usage)');
  const profileOption = (): string | undefined => program.opts<{ profile?: string }>().profile;
  const print = (text: string): void => {
    io.stdout.write(text);
  };

  program
    .command('catalog')
    .description('every file of your index: symbol, storage path, description')
    .option('--json', 'the gateway\'s JSON answer, for scripts')
    .action(async (options: { json?: boolean }) => {
      const catalog = await (await client(profileOption())).catalog({ signal: io.signal });
      if (options.json === true) print(jsonLine(catalog));
      else print(formatTable(['SYMBOL', 'FILE', 'DESCRIPTION'], catalog.files.map((file) => [file.Symbol, file.FileName, file.Description])));
    });

  program
    .command('list')
    .description('the files of your index that exist in storage, with storage path, size, upload time and ETag')
    .option('--json', 'the gateway\'s JSON answer, for scripts')
    .option('--limit <n>', 'at most this many files (1-10000)', integerIn(1, 10_000))
    .option('--modified-since <time>', 'only files uploaded at or after this ISO 8601 time', isoTime)
    .action(async (options: { json?: boolean; limit?: number; modifiedSince?: string }) => {
      const list = await (await client(profileOption())).list({
        signal: io.signal,
        ...(options.limit !== undefined && { limit: options.limit }),
        ...(options.modifiedSince !== undefined && { modifiedSince: options.modifiedSince }),
      });
      if (options.json === true) print(jsonLine(list));
      else {
        print(
          formatTable(
            ['SYMBOL', 'FILE', 'SIZE', 'UPLOADED', 'ETAG', 'DESCRIPTION'],
            list.files.map((file) => [file.symbol, file.fileName, file.size, file.uploaded, file.etag, file.description]),
          ),
        );
        if (list.truncated) io.stderr.write(`(first ${list.count} files only; dfg count gives the total)\n`);
      }
    });

  program
    .command('count')
    .description('how many files of your index exist in storage')
    .option('--json', 'the gateway\'s JSON answer, for scripts')
    .action(async (options: { json?: boolean }) => {
      const count = await (await client(profileOption())).count({ signal: io.signal });
      print(options.json === true ? jsonLine(count) : `${count.count}\n`);
    });

  program
    .command('account')
    .description('your subscription term and monthly byte quota: used this month, remaining, reset time')
    .option('--json', 'the gateway\'s JSON answer, for scripts')
    .action(async (options: { json?: boolean }) => {
      const account = await (await client(profileOption())).account({ signal: io.signal });
      if (options.json === true) {
        print(`${JSON.stringify(account)}\n`);
        return;
      }
      const rows: Array<[string, string | number | undefined]> = [
        ['client_id', account.clientId],
        ['valid_from', account.term.validFrom ?? '-'],
        ['valid_until', account.term.validUntil ?? '-'],
        ['active', String(account.term.active)],
        ...(account.quota === undefined
          ? [['monthly_bytes', 'unlimited'] as [string, string]]
          : ([
              ['monthly_bytes', account.quota.monthlyBytes],
              ['period', account.quota.period],
              ['used', account.quota.used],
              ['remaining', account.quota.remaining],
              ['resets_at', account.quota.resetsAt],
            ] as Array<[string, string | number]>)),
      ];
      print(formatTable(['FIELD', 'VALUE'], rows));
    });

  program
    .command('info')
    .description('storage properties of one file')
    .argument('<symbol>')
    .option('--json', 'the gateway\'s JSON answer, for scripts')
    .action(async (symbol: string, options: { json?: boolean }) => {
      const info = await (await client(profileOption())).info(symbol, { signal: io.signal });
      if (options.json === true) {
        print(jsonLine(info));
        return;
      }
      const rows: Array<[string, string | number | undefined]> = [
        ['symbol', info.symbol],
        ['size', info.size],
        ['uploaded', info.uploaded],
        ['etag', info.etag],
        ...Object.entries(info.httpMetadata).map(([key, value]): [string, string | undefined] => [key, value]),
        ...Object.entries(info.customMetadata).map(([key, value]): [string, string] => [`metadata.${key}`, value]),
      ];
      print(formatTable(['FIELD', 'VALUE'], rows));
    });

  program
    .command('credentials')
    .description('temporary credentials for the gateway\'s S3-compatible API')
    .requiredOption('--aws', 'print them in the AWS credential_process format (use: credential_process = dfg credentials --aws)')
    .action(async () => {
      const credentials = await (await client(profileOption())).s3Credentials({ signal: io.signal });
      print(`${JSON.stringify(credentials)}\n`);
    });

  program
    .command('download')
    .description('download one file (resumable, size- and MD5-checked); -o - writes it to stdout')
    .argument('<symbol>')
    .option('-o, --output <file>', 'where to write it (default: its plain file name in the current folder, never a name starting with "." nor one that exists)')
    .action(async (symbol: string, options: { output?: string }) => {
      const gateway = await client(profileOption());
      if (options.output === '-') {
        const result = await gateway.download(symbol, { signal: io.signal });
        // fetch holds a body to its Content-Length; without one, nothing would bound what reaches stdout.
        if (result.size === undefined) {
          result.body.destroy();
          throw new GatewayClientError('protocol_error', `download ${symbol}: the answer has no size (Content-Length), so its end could not be checked`);
        }
        await pipeline(result.body, io.stdout, { end: false });
        return;
      }
      const info = await gateway.info(symbol, { signal: io.signal });
      const output = options.output ?? (await freeFileNameFor(gateway, symbol, io.signal));
      const md5 = info.httpMetadata.contentMd5;
      const result = await transferFile(gateway, {
        symbol,
        destination: resolve(output),
        expected: { etag: info.etag, size: info.size, ...(md5 !== undefined && { md5 }), ...(info.sha256 !== undefined && { sha256: info.sha256 }) },
        signal: io.signal,
        maxAttempts: 3,
      });
      if (result.outcome === 'downloaded') io.stderr.write(`${escapeControls(output)}: ${formatBytes(result.size)}${result.resumedFrom > 0 ? ` (resumed at ${result.resumedFrom})` : ''}\n`);
    });

  program
    .command('sync')
    .description('mirror your catalog into <dir>: only new and changed files move, verified, resumable')
    .argument('<dir>')
    .addOption(new Option('--concurrency <n>', 'transfers at once (halved on 429, restored slowly)').argParser(integerIn(1, 64)).default(4))
    .option('--include <glob...>', 'only storage paths matching one of these globs')
    .option('--exclude <glob...>', 'leave storage paths matching these globs alone')
    .option('--modified-since <time>', 'only files uploaded at or after this ISO 8601 time', isoTime)
    .option('--dry-run', 'say what would be done, change nothing')
    .option('--delete', 'delete local files (that dfg wrote) whose path left the catalog')
    .addOption(new Option('--max-delete <n>', 'refuse to delete anything when more files than this would go').argParser(integerIn(0, 1_000_000)).default(100))
    .addOption(new Option('--progress <mode>', 'bars (on a terminal), json (JSON lines on stdout; the default off a terminal) or none').choices(['bars', 'json', 'none']))
    .option('-q, --quiet', 'no progress output (failures still go to stderr)')
    .option('--watch', 'after the mirror, follow the change feed: new and updated files are downloaded and verified, withdrawn ones deleted only with --delete; one line per event; Ctrl-C stops')
    .action(async (dir: string, options: SyncCommandOptions, command: Command) => {
      // Said on stderr as commander says its own usage errors (an error thrown here would be silent).
      if (options.watch === true && options.dryRun === true) command.error('error: --watch cannot be combined with --dry-run', { exitCode: ExitCode.usage, code: 'dfg.usage' });
      const gateway = await client(profileOption());
      const mode: ProgressMode = options.quiet === true ? 'none' : (options.progress ?? (io.stderr.isTTY === true ? 'bars' : 'json'));
      if (options.watch === true) {
        exitCode = await watchCommand(gateway, dir, options, mode, io);
        return;
      }
      const reporter = createProgressReporter(mode, io.stdout, io.stderr);
      let report: SyncReport;
      try {
        report = await gateway.sync({
          dir: resolve(dir),
          concurrency: options.concurrency,
          include: options.include ?? [],
          exclude: options.exclude ?? [],
          ...(options.modifiedSince !== undefined && { modifiedSince: options.modifiedSince }),
          dryRun: options.dryRun === true,
          delete: options.delete === true,
          maxDelete: options.maxDelete,
          signal: io.signal,
          onEvent: reporter.onEvent,
        });
      } finally {
        reporter.stop();
      }
      for (const file of report.files) {
        if (file.outcome === 'failed') io.stderr.write(`failed: ${escapeControls(file.path)}: ${escapeControls(file.error?.message ?? 'unknown error')}\n`);
        else if (options.dryRun === true && mode !== 'json') io.stdout.write(`${file.outcome === 'would_delete' ? 'would delete' : file.outcome === 'would_download' ? 'would download' : 'unchanged'}: ${escapeControls(file.path)}\n`);
      }
      if (report.deleteRefused !== undefined) io.stderr.write(`${report.deleteRefused}\n`);
      if (report.listingTruncated) io.stderr.write('the listing was truncated at 10000 files: narrow it with --modified-since\n');
      if (mode !== 'json' && options.quiet !== true) {
        io.stderr.write(
          `${report.downloaded} downloaded (${formatBytes(report.bytesTransferred)}), ${report.unchanged} unchanged, ${report.deleted} deleted, ${report.failed} failed${report.interrupted ? ', interrupted' : ''}\n`,
        );
      }
      exitCode = report.interrupted
        ? ExitCode.interrupted
        : report.authFailed
          ? ExitCode.authFailure
          : report.failed > 0 || report.deleteRefused !== undefined || report.listingTruncated
            ? ExitCode.failure
            : ExitCode.success;
    });

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help' ? ExitCode.success : ExitCode.usage;
    }
    io.stderr.write(`dfg: ${escapeControls(error instanceof Error ? error.message : String(error))}\n`);
    if (io.signal.aborted || isClientError(error, 'aborted')) return ExitCode.interrupted;
    if (isClientError(error, 'auth_failed')) return ExitCode.authFailure;
    if (isClientError(error, 'invalid_profile')) return ExitCode.usage;
    return ExitCode.failure;
  }
}

/**
 * `dfg sync --watch`: the mirror (its progress as `sync` shows it), then one line per event of the
 * feed on stdout: JSON lines when stdout is not a terminal, else `<type> <path>: <outcome>`. Runs
 * until Ctrl-C, which exits 130.
 */
async function watchCommand(gateway: GatewayClient, dir: string, options: SyncCommandOptions, mode: ProgressMode, io: DfgIo): Promise<number> {
  const json = io.stdout.isTTY !== true;
  let reporter = createProgressReporter(mode, io.stdout, io.stderr);
  const onChange = (report: ChangeReport): void => {
    if (json) {
      const { type: event, ...rest } = report;
      io.stdout.write(jsonLine({ time: new Date().toISOString(), type: 'change', event, ...rest }));
    } else {
      const bytes = report.outcome === 'downloaded' ? ` (${formatBytes(report.bytes)})` : '';
      io.stdout.write(`${report.type.replace('file.', '')} ${escapeControls(report.path)}: ${report.outcome}${bytes}\n`);
    }
    if (report.outcome === 'failed') io.stderr.write(`failed: ${escapeControls(report.path)}: ${escapeControls(report.error?.message ?? 'unknown error')}\n`);
  };
  try {
    await gateway.watch({
      dir: resolve(dir),
      concurrency: options.concurrency,
      include: options.include ?? [],
      exclude: options.exclude ?? [],
      delete: options.delete === true,
      maxDelete: options.maxDelete,
      signal: io.signal,
      onEvent: (event) => reporter.onEvent(event),
      onMirrored: (report) => {
        reporter.stop();
        for (const file of report.files) {
          if (file.outcome === 'failed') io.stderr.write(`failed: ${escapeControls(file.path)}: ${escapeControls(file.error?.message ?? 'unknown error')}\n`);
        }
        if (report.deleteRefused !== undefined) io.stderr.write(`${report.deleteRefused}\n`);
        if (mode !== 'json' && options.quiet !== true) {
          io.stderr.write(`${report.downloaded} downloaded (${formatBytes(report.bytesTransferred)}), ${report.unchanged} unchanged, ${report.deleted} deleted, ${report.failed} failed; following the change feed (Ctrl-C stops)\n`);
        }
        // A later mirror (after an expired cursor) reports afresh.
        reporter = createProgressReporter(mode, io.stdout, io.stderr);
      },
      onChange,
      onOutage: (error, retryInMs) => {
        io.stderr.write(`dfg: ${escapeControls(error.message)}; trying again in ${Math.round(retryInMs / 1000)} s\n`);
      },
    });
  } finally {
    reporter.stop();
  }
  return io.signal.aborted ? ExitCode.interrupted : ExitCode.success;
}

interface SyncCommandOptions {
  readonly concurrency: number;
  readonly include?: string[];
  readonly exclude?: string[];
  readonly modifiedSince?: string;
  readonly dryRun?: boolean;
  readonly delete?: boolean;
  readonly maxDelete: number;
  readonly progress?: ProgressMode;
  readonly quiet?: boolean;
  readonly watch?: boolean;
}

/**
 * Where `dfg download <symbol>` without `-o` writes: the base name of the symbol's storage path, in
 * the current folder. The name comes from the server, so it is used only when the whole path is one
 * a mirror would accept (`localPathFor`), the name does not start with "." (no `.bashrc`, no
 * `.ssh`), and nothing of that name is there yet (nor a `.part` of it that an interrupted dfg did not
 * leave): dfg never replaces a file it was not told to.
 */
async function freeFileNameFor(gateway: GatewayClient, symbol: string, signal: AbortSignal): Promise<string> {
  const catalog = await gateway.catalog({ signal });
  const fileName = catalog.files.find((file) => file.Symbol === symbol)?.FileName;
  if (fileName === undefined) throw new GatewayClientError('http_error', `${symbol} is not in your catalog`);
  const useO = `choose where to write it with -o (dfg download ${symbol} -o <file>)`;
  let name: string;
  try {
    name = basename(localPathFor(process.cwd(), fileName));
  } catch (error) {
    throw new GatewayClientError('unsafe_path', `${symbol}'s storage path ${JSON.stringify(fileName)} is not a safe file name here: ${useO}`, { cause: error });
  }
  if (name.startsWith('.')) {
    throw new GatewayClientError('unsafe_path', `${symbol}'s file name ${JSON.stringify(name)} starts with ".": dfg does not write such a name by itself; ${useO}`);
  }
  const exists = (path: string): Promise<boolean> => lstat(path).then(() => true, (error: NodeJS.ErrnoException) => error.code !== 'ENOENT');
  if (await exists(name)) throw new GatewayClientError('unsafe_path', `${name} already exists and dfg does not replace a file by itself: ${useO}`);
  // A part with its state is one an interrupted dfg left (resumed now); without the state it is someone else's file.
  const part = name + PART_SUFFIX;
  if ((await exists(part)) && !(await exists(name + PART_STATE_SUFFIX))) {
    throw new GatewayClientError('unsafe_path', `${part} exists and dfg did not write it: ${useO}`);
  }
  return name;
}

function integerIn(min: number, max: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!/^\d+$/.test(value) || number < min || number > max) throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    return number;
  };
}

function isoTime(value: string): string {
  // ISO 8601 with a date; the gateway wants RFC 3339, so it is normalised to UTC.
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(Date.parse(value))) throw new InvalidArgumentError('must be an ISO 8601 time, e.g. 2026-11-01T00:00:00Z');
  return new Date(value).toISOString();
}

function clientVersion(): string {
  // src/cli (run by tsx) and dist/src/cli (built) sit at different depths below package.json.
  for (const relative of ['../../package.json', '../../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(fileURLToPath(new URL(relative, import.meta.url)), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'data-file-gateway-client' && manifest.version !== undefined) return manifest.version;
    } catch {
      // not at this depth
    }
  }
  return 'unknown';
}

/** The process entry point: real streams, Ctrl-C aborts (a second one exits at once), the exit code becomes the process's. */
export async function main(): Promise<void> {
  const interrupt = new AbortController();
  const onSignal = (): void => {
    if (interrupt.signal.aborted) process.exit(ExitCode.interrupted);
    interrupt.abort(new GatewayClientError('aborted', 'interrupted'));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const code = await runDfg(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, signal: interrupt.signal });
  // Open keep-alive sockets must not hold the exit back; stdout is flushed first (it may be a pipe).
  process.stdout.write('', () => process.exit(code));
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
