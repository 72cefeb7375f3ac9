import { resolve } from 'node:path';
import { Command, CommanderError } from 'commander';
import {
  defaultIndexPath,
  isValidClientId,
  JsonClientRegistry,
  type StoredClient,
} from '../adapters/clients/json-client-registry.js';
import { generateSecret, hashSecret } from '../adapters/clients/secret-hash.js';
import { newAccessKeyId, OPERATOR_KEY_PREFIX } from '../adapters/s3/s3-credentials.js';
import { JoseSigner } from '../adapters/signing/jose-signer.js';
import { formatByteSize, InvalidByteSize, parseByteSize } from '../text/byte-size.js';
import { InvalidInstant, parseIsoInstant } from '../text/iso-instant.js';
import { InvalidPath } from '../domain/errors.js';
import { validateStoragePath } from '../domain/storage-path.js';
import { FileWebhookRegistry } from '../adapters/webhooks/file-webhook-registry.js';
import { WebhookTargetPolicy } from '../adapters/webhooks/webhook-targets.js';
import { Webhooks } from '../application/webhooks.js';
import { GatewayError } from '../domain/errors.js';
import type { ChangeLog } from '../domain/ports.js';
import { ConfigError, loadConfig, type GatewayConfig } from './config.js';
import { bundledSampleDataDir } from './package-root.js';
import { webhookRegistryFor } from './webhook-registry.js';

/** Where the CLI writes, and what it reads from its environment. `process` fits. */
export interface ClientsCliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  /** The time stamped into `createdAt` and `updatedAt`; the system clock when absent. */
  readonly now?: () => Date;
  /** Standard input, read whole, for `--secret-stdin`. */
  readonly readStdin?: () => Promise<string>;
  /** The fleet's change log, whose head a new webhook endpoint starts after; none (position 0) when absent. */
  readonly changeLog?: Pick<ChangeLog, 'head'>;
}

/**
 * Exit codes: 0 done; 1 the registry says no (unknown client, id already taken) or cannot be used;
 * 2 the command line or environment is wrong (usage, invalid id or secret, CLIENTS_FILE unset).
 */
const EXIT_REFUSED = 1;
const EXIT_USAGE = 2;

/**
 * An imported secret: 16 to 512 printable ASCII characters, no space or control character, so it
 * survives a shell, an HTTP Basic header and form encoding (RFC 6749 section 2.3.1) unchanged.
 */
const IMPORTED_SECRET = /^[\x21-\x7E]{16,512}$/;

class CliFailure extends Error {
  readonly exitCode: number;

  constructor(exitCode: number, message: string) {
    super(message);
    this.exitCode = exitCode;
    this.name = new.target.name;
  }
}

/**
 * When a change reaches a running gateway: it looks at the registry file again once
 * CLIENTS_FILE_RECHECK_SECONDS have passed since its last look (not at once).
 */
const takesEffect = 'within CLIENTS_FILE_RECHECK_SECONDS (1 s by default)';

/**
 * Runs the `clients` command line: `add`, `set`, `list`, `rotate`, `disable`, `enable`, `remove`, `s3-key add|list|revoke`, `webhook add|list|remove`.
 *
 * `args` are the user's arguments only (`process.argv.slice(2)`). Results go to `io.stdout` as
 * `key: value` lines (or JSON for `list --json`); notes and errors go to `io.stderr`.
 * Resolves to the exit code; never calls `process.exit`.
 */
export async function runClientsCli(args: readonly string[], io: ClientsCliIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...args], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has already printed its message or the help.
      return error.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    if (error instanceof CliFailure) {
      io.stderr.write(`error: ${error.message}\n`);
      return error.exitCode;
    }
    io.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_REFUSED;
  }
}

function buildProgram(io: ClientsCliIo): Command {
  const now = (): string => (io.now ?? (() => new Date()))().toISOString();
  const registry = (): JsonClientRegistry => {
    const file = io.env['CLIENTS_FILE'];
    if (file === undefined || file === '') {
      throw new CliFailure(
        EXIT_USAGE,
        'CLIENTS_FILE is not set: set it to the path of the client registry JSON file (created on the first `add`), e.g. CLIENTS_FILE=./clients.json',
      );
    }
    return new JsonClientRegistry(resolve(file));
  };
  const out = (line: string): void => {
    io.stdout.write(`${line}\n`);
  };
  const note = (line: string): void => {
    io.stderr.write(`${line}\n`);
  };

  const program = new Command('clients')
    .description('Manage the subscribers of the Data File Gateway (the registry file named by CLIENTS_FILE).')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .showHelpAfterError('(run with --help for usage)');

  program
    .command('add')
    .description('register a client and print its secret once')
    .argument('<client_id>', '1-64 characters of A-Z a-z 0-9 . _ -, not starting with "."')
    .option(
      '--secret <secret>',
      'import an existing secret instead of generating one (16-512 printable ASCII characters, no spaces); prefer --secret-stdin',
    )
    .option('--secret-stdin', 'read the secret to import from standard input, so it never shows in `ps` or shell history')
    .option('--index <path>', 'storage path of the client index CSV (default: indexes/<client_id>.csv)')
    .option('--valid-from <instant>', 'start of the subscription term, ISO 8601, UTC unless a zone is written (default: unbounded)')
    .option('--valid-until <instant>', 'end of the subscription term (exclusive), ISO 8601 (default: unbounded)')
    .option('--monthly-bytes <size>', 'bytes per calendar month (UTC), e.g. 500GiB; units B KiB MiB GiB TiB (default: unlimited)')
    .action(async (clientId: string, options: SecretOptions & SubscriptionOptions & { index?: string }) => {
      checkClientId(clientId);
      const indexPath = options.index ?? defaultIndexPath(clientId);
      checkIndexPath(indexPath);
      const subscription = parseSubscriptionOptions(options);
      const secret = await chooseSecret(options, io);
      const store = registry();
      // Hashed before the registry is locked, so that the lock is held for milliseconds.
      const secretHash = await hashSecret(secret.value);
      const stamp = now();
      await store.modify((file) => {
        if (Object.hasOwn(file.clients, clientId)) {
          throw new CliFailure(EXIT_REFUSED, `client "${clientId}" already exists in ${store.path}`);
        }
        const added = applySubscription({ secretHash, indexPath, enabled: true, createdAt: stamp, updatedAt: stamp }, subscription);
        checkTermOrder(added);
        file.clients[clientId] = added;
        return { result: undefined, write: true };
      });
      out(`client_id: ${clientId}`);
      out(`index_path: ${indexPath}`);
      printSubscription(applySubscription({} as StoredClient, subscription), out, { onlySet: true });
      printSecret(secret, out, note);
    });

  program
    .command('set')
    .description("change an existing client's subscription term or monthly byte quota (`none` clears a bound or the quota)")
    .argument('<client_id>')
    .option('--valid-from <instant>', 'start of the subscription term, ISO 8601, or none')
    .option('--valid-until <instant>', 'end of the subscription term (exclusive), ISO 8601, or none')
    .option('--monthly-bytes <size>', 'bytes per calendar month (UTC), e.g. 500GiB, or none')
    .action(async (clientId: string, options: SubscriptionOptions) => {
      const subscription = parseSubscriptionOptions(options);
      if (Object.keys(subscription).length === 0) {
        throw new CliFailure(EXIT_USAGE, 'set: give at least one of --valid-from, --valid-until, --monthly-bytes');
      }
      let result: StoredClient | undefined;
      await update(registry(), clientId, (stored) => {
        const changed = applySubscription(stored, subscription);
        checkTermOrder(changed);
        result = changed;
        return sameSubscription(stored, changed) ? stored : { ...changed, updatedAt: now() };
      });
      out(`client_id: ${clientId}`);
      if (result !== undefined) printSubscription(result, out, { onlySet: false });
      note(`Every gateway instance applies the change ${takesEffect}.`);
    });

  program
    .command('list')
    .description('list the clients (never their secrets or hashes)')
    .option('--json', 'print a JSON array instead of a table')
    .action(async (options: { json?: boolean }) => {
      const file = await registry().load();
      const rows = Object.entries(file.clients)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([clientId, stored]) => ({
          clientId,
          enabled: stored.enabled,
          indexPath: stored.indexPath,
          createdAt: stored.createdAt,
          updatedAt: stored.updatedAt,
          validFrom: stored.validFrom ?? null,
          validUntil: stored.validUntil ?? null,
          monthlyBytes: stored.monthlyBytes ?? null,
        }));
      if (options.json === true) {
        out(JSON.stringify(rows, null, 2));
        return;
      }
      const header = ['CLIENT_ID', 'ENABLED', 'INDEX_PATH', 'VALID_FROM', 'VALID_UNTIL', 'MONTHLY_BYTES', 'UPDATED_AT'];
      const table = [
        header,
        ...rows.map((row) => [
          row.clientId,
          String(row.enabled),
          row.indexPath,
          row.validFrom ?? '-',
          row.validUntil ?? '-',
          row.monthlyBytes === null ? '-' : formatByteSize(row.monthlyBytes),
          row.updatedAt,
        ]),
      ];
      const widths = header.map((_, column) => Math.max(...table.map((cells) => (cells[column] ?? '').length)));
      for (const cells of table) {
        out(cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd());
      }
    });

  program
    .command('rotate')
    .description(`replace a client secret; a running gateway refuses tokens issued with the old one ${takesEffect}`)
    .argument('<client_id>')
    .option('--secret <secret>', 'import this secret instead of generating one (same rules as add)')
    .option('--secret-stdin', 'read the secret to import from standard input')
    .action(async (clientId: string, options: SecretOptions) => {
      const secret = await chooseSecret(options, io);
      const secretHash = await hashSecret(secret.value);
      await update(registry(), clientId, (stored) => ({ ...stored, secretHash, updatedAt: now() }));
      out(`client_id: ${clientId}`);
      printSecret(secret, out, note);
      note(`Tokens issued with the previous secret are no longer accepted: a running gateway refuses them ${takesEffect}.`);
    });

  for (const enabled of [false, true]) {
    program
      .command(enabled ? 'enable' : 'disable')
      .description(enabled ? `let a disabled client obtain tokens again (${takesEffect})` : `stop a client from obtaining or using tokens (${takesEffect})`)
      .argument('<client_id>')
      .action(async (clientId: string) => {
        await update(registry(), clientId, (stored) =>
          stored.enabled === enabled ? stored : { ...stored, enabled, updatedAt: now() },
        );
        out(`client_id: ${clientId}`);
        out(`enabled: ${enabled}`);
        note(enabled ? `A running gateway issues it tokens again ${takesEffect}.` : `A running gateway refuses it tokens, and its tokens, ${takesEffect}.`);
      });
  }

  const s3Key = program.command('s3-key').description("manage a client's access keys for the S3-compatible API (S3_API=on)");

  s3Key
    .command('add')
    .description('issue an access key and print its secret once (needs TOKEN_SIGNING_KEY: the secret is derived from it, never stored)')
    .argument('<client_id>')
    .action(async (clientId: string) => {
      const signer = new JoseSigner({ rootKey: signingKeyOf(io.env), clock: { now: io.now ?? (() => new Date()) } });
      const store = registry();
      const accessKeyId = newAccessKeyId(OPERATOR_KEY_PREFIX);
      const stamp = now();
      await update(store, clientId, (stored) => ({
        ...stored,
        accessKeys: { ...stored.accessKeys, [accessKeyId]: { createdAt: stamp } },
        updatedAt: stamp,
      }));
      out(`client_id: ${clientId}`);
      out(`access_key_id: ${accessKeyId}`);
      out(`secret_access_key: ${signer.s3SecretAccessKey(accessKeyId)}`);
      note('Store the secret_access_key now: it is not kept and will not be shown again.');
    });

  s3Key
    .command('list')
    .description("list a client's access key ids (never their secrets)")
    .argument('<client_id>')
    .option('--json', 'print a JSON array instead of lines')
    .action(async (clientId: string, options: { json?: boolean }) => {
      const file = await registry().load();
      const stored = Object.hasOwn(file.clients, clientId) ? file.clients[clientId] : undefined;
      if (stored === undefined) throw new CliFailure(EXIT_REFUSED, `no client "${clientId}" in ${registry().path}`);
      const keys = Object.entries(stored.accessKeys ?? {})
        .map(([accessKeyId, key]) => ({ accessKeyId, createdAt: key.createdAt }))
        .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
      if (options.json === true) {
        out(JSON.stringify(keys, null, 2));
        return;
      }
      out('ACCESS_KEY_ID         CREATED_AT');
      for (const key of keys) out(`${key.accessKeyId.padEnd(20)}  ${key.createdAt}`);
    });

  s3Key
    .command('revoke')
    .description('revoke an access key: every instance refuses it within CLIENTS_FILE_RECHECK_SECONDS')
    .argument('<client_id>')
    .argument('<access_key_id>')
    .action(async (clientId: string, accessKeyId: string) => {
      await update(registry(), clientId, (stored) => {
        if (!Object.hasOwn(stored.accessKeys ?? {}, accessKeyId)) {
          throw new CliFailure(EXIT_REFUSED, `client "${clientId}" has no access key ${accessKeyId}`);
        }
        const accessKeys = { ...stored.accessKeys };
        delete accessKeys[accessKeyId];
        return { ...stored, accessKeys, updatedAt: now() };
      });
      out(`client_id: ${clientId}`);
      out(`access_key_id: ${accessKeyId}`);
      out('revoked: true');
    });

  const webhook = program
    .command('webhook')
    .description("manage a client's webhook endpoints (the same store as the gateway's: Azure Table, or webhooks.json beside CLIENTS_FILE)");

  /** The use case over the gateway's own store, signer and change log head; the environment is the gateway's. */
  const webhooksOf = (): { webhooks: Webhooks; where: string } => {
    let config: GatewayConfig;
    try {
      config = loadConfig(io.env, bundledSampleDataDir());
    } catch (error) {
      if (error instanceof ConfigError) throw new CliFailure(EXIT_USAGE, error.message);
      throw error;
    }
    const clock = { now: io.now ?? (() => new Date()) };
    const signer = new JoseSigner({ rootKey: signingKeyOf(io.env), clock });
    const registry = webhookRegistryFor(config);
    const webhooks = new Webhooks({
      registry,
      // Without the change log, the endpoint starts at position 0: delivery passes over every change
      // found before its registration (createdAt), so it still gets only what happens after.
      log: io.changeLog ?? headlessLog,
      targets: new WebhookTargetPolicy({ allowPrivate: config.webhooks.allowPrivate }),
      signer,
      clock,
    });
    return { webhooks, where: registry instanceof FileWebhookRegistry ? registry.path : 'the webhooks table' };
  };
  const knownClient = async (clientId: string): Promise<void> => {
    const file = await registry().load();
    if (!Object.hasOwn(file.clients, clientId)) throw new CliFailure(EXIT_REFUSED, `no client "${clientId}" in ${registry().path}`);
  };

  webhook
    .command('add')
    .description('register an endpoint for a client and print its signing secret once (needs TOKEN_SIGNING_KEY: derived, never stored)')
    .argument('<client_id>')
    .argument('<url>', 'https URL of a public address (http or private addresses only with WEBHOOK_ALLOW_PRIVATE=on)')
    .action(async (clientId: string, url: string) => {
      await knownClient(clientId);
      const { webhooks } = webhooksOf();
      const { endpoint, secret } = await webhooks.register(clientId, url).catch(asCliFailure);
      out(`client_id: ${clientId}`);
      out(`id: ${endpoint.id}`);
      out(`url: ${endpoint.url}`);
      out(`secret: ${secret}`);
      note('Store the secret now: it is not kept and will not be shown again. The endpoint gets the events found from now on.');
    });

  webhook
    .command('list')
    .description("list a client's endpoints: enabled or not and why, where deliveries stand (never secrets)")
    .argument('<client_id>')
    .option('--json', 'print a JSON array instead of lines')
    .action(async (clientId: string, options: { json?: boolean }) => {
      await knownClient(clientId);
      const endpoints = await webhooksOf().webhooks.list(clientId);
      const rows = endpoints.map((endpoint) => ({
        id: endpoint.id,
        url: endpoint.url,
        enabled: endpoint.enabled,
        disabledReason: endpoint.disabled?.reason ?? null,
        disabledDetail: endpoint.disabled?.detail ?? null,
        disabledAt: endpoint.disabled?.at.toISOString() ?? null,
        createdAt: endpoint.createdAt.toISOString(),
        delivered: endpoint.delivery.delivered,
        attempts: endpoint.delivery.attempts,
        // A disabled endpoint is never tried again, whatever its delivery state last said.
        nextAttemptAt: endpoint.enabled ? (endpoint.delivery.nextAttemptAt?.toISOString() ?? null) : null,
      }));
      if (options.json === true) {
        out(JSON.stringify(rows, null, 2));
        return;
      }
      for (const row of rows) {
        out(`${row.id}  ${row.enabled ? 'enabled' : `disabled (${row.disabledReason ?? 'unknown'}: ${row.disabledDetail ?? ''})`}  ${row.url}`);
        const failed = `${row.attempts} failed attempt${row.attempts === 1 ? '' : 's'}`;
        if (!row.enabled) out(`  ${row.attempts > 0 ? `${failed}; ` : ''}disabled at ${row.disabledAt ?? 'an unknown time'}: never tried again (remove it and add it again to resume)`);
        else if (row.attempts > 0) out(`  ${failed}, next at ${row.nextAttemptAt ?? 'the next round'}`);
      }
    });

  webhook
    .command('remove')
    .description('remove an endpoint: it gets no event from the next delivery round on')
    .argument('<client_id>')
    .argument('<id>')
    .action(async (clientId: string, id: string) => {
      await knownClient(clientId);
      await webhooksOf().webhooks.remove(clientId, id).catch(asCliFailure);
      out(`client_id: ${clientId}`);
      out(`id: ${id}`);
      out('removed: true');
    });

  program
    .command('remove')
    .description(`delete a client from the registry (a running gateway refuses its tokens ${takesEffect})`)
    .argument('<client_id>')
    .action(async (clientId: string) => {
      await update(registry(), clientId, () => undefined);
      out(`client_id: ${clientId}`);
      out('removed: true');
      note(`A running gateway refuses its tokens ${takesEffect}.`);
    });

  return program;
}

/**
 * The server key S3 secrets are derived from: the gateway's TOKEN_SIGNING_KEY, which the CLI must
 * be given exactly as every instance has it.
 */
/** A change log whose head is unknown (0): for `webhook add` without the fleet's log. */
const headlessLog: Pick<ChangeLog, 'head'> = { head: async () => 0 };

/** A refusal of the domain (a URL refused, the bound reached, an unknown endpoint) as the CLI's exit 1. */
function asCliFailure(error: unknown): never {
  if (error instanceof GatewayError) throw new CliFailure(EXIT_REFUSED, error.message);
  throw error;
}

function signingKeyOf(env: ClientsCliIo['env']): Uint8Array {
  const key = env['TOKEN_SIGNING_KEY']?.trim();
  if (key === undefined || Buffer.byteLength(key, 'utf8') < 32) {
    throw new CliFailure(
      EXIT_USAGE,
      "TOKEN_SIGNING_KEY is not set (or shorter than 32 bytes): set it to the gateway's own value; S3 secrets are derived from it",
    );
  }
  return new TextEncoder().encode(key);
}

interface SubscriptionOptions {
  readonly validFrom?: string;
  readonly validUntil?: string;
  readonly monthlyBytes?: string;
}

/** Each flag given: a value to store, or `null` to clear it (`none`). */
interface SubscriptionChange {
  validFrom?: string | null;
  validUntil?: string | null;
  monthlyBytes?: number | null;
}

const NONE = 'none';

/** The flags' values, checked with the same grammar the gateway reads; a bad value fails naming its flag. */
function parseSubscriptionOptions(options: SubscriptionOptions): SubscriptionChange {
  const change: SubscriptionChange = {};
  const instant = (flag: string, text: string): string | null => {
    if (text.trim() === NONE) return null;
    try {
      return parseIsoInstant(text).toISOString();
    } catch (error) {
      if (!(error instanceof InvalidInstant)) throw error;
      throw new CliFailure(EXIT_USAGE, `invalid ${flag}: ${error.message}, or none`);
    }
  };
  if (options.validFrom !== undefined) change.validFrom = instant('--valid-from', options.validFrom);
  if (options.validUntil !== undefined) change.validUntil = instant('--valid-until', options.validUntil);
  if (options.monthlyBytes !== undefined) {
    if (options.monthlyBytes.trim() === NONE) change.monthlyBytes = null;
    else {
      try {
        change.monthlyBytes = parseByteSize(options.monthlyBytes);
      } catch (error) {
        if (!(error instanceof InvalidByteSize)) throw error;
        throw new CliFailure(EXIT_USAGE, `invalid --monthly-bytes: ${error.message}, or none`);
      }
    }
  }
  return change;
}

function applySubscription(stored: StoredClient, change: SubscriptionChange): StoredClient {
  const next: Record<string, unknown> = { ...stored };
  for (const field of ['validFrom', 'validUntil', 'monthlyBytes'] as const) {
    const value = change[field];
    if (value === undefined) continue;
    if (value === null) delete next[field];
    else next[field] = value;
  }
  return next as unknown as StoredClient;
}

function sameSubscription(a: StoredClient, b: StoredClient): boolean {
  return a.validFrom === b.validFrom && a.validUntil === b.validUntil && a.monthlyBytes === b.monthlyBytes;
}

/** A term is `[validFrom, validUntil)`: an empty one would be a client that can never connect. */
function checkTermOrder(stored: StoredClient): void {
  if (stored.validFrom !== undefined && stored.validUntil !== undefined && stored.validFrom >= stored.validUntil) {
    throw new CliFailure(EXIT_USAGE, `--valid-until (${stored.validUntil}) must come after --valid-from (${stored.validFrom})`);
  }
}

function printSubscription(stored: StoredClient, out: (line: string) => void, options: { readonly onlySet: boolean }): void {
  if (!options.onlySet || stored.validFrom !== undefined) out(`valid_from: ${stored.validFrom ?? NONE}`);
  if (!options.onlySet || stored.validUntil !== undefined) out(`valid_until: ${stored.validUntil ?? NONE}`);
  if (!options.onlySet || stored.monthlyBytes !== undefined) {
    out(`monthly_bytes: ${stored.monthlyBytes === undefined ? NONE : `${stored.monthlyBytes} (${formatByteSize(stored.monthlyBytes)})`}`);
  }
}

interface ChosenSecret {
  readonly value: string;
  readonly generated: boolean;
}

interface SecretOptions {
  readonly secret?: string;
  readonly secretStdin?: boolean;
}

async function chooseSecret(options: SecretOptions, io: ClientsCliIo): Promise<ChosenSecret> {
  if (options.secret !== undefined && options.secretStdin === true) {
    throw new CliFailure(EXIT_USAGE, 'use either --secret or --secret-stdin, not both');
  }
  let imported = options.secret;
  if (options.secretStdin === true) {
    if (io.readStdin === undefined) throw new CliFailure(EXIT_USAGE, '--secret-stdin: no standard input to read');
    // One line: the secret, with its line ending (LF or CRLF) removed.
    imported = (await io.readStdin()).replace(/\r?\n$/, '');
  }
  if (imported === undefined) return { value: generateSecret(), generated: true };
  if (!IMPORTED_SECRET.test(imported)) {
    // The message never repeats the secret: it may be a real credential with a typo.
    throw new CliFailure(
      EXIT_USAGE,
      `the imported secret must be 16 to 512 printable ASCII characters without spaces (got ${imported.length} characters)`,
    );
  }
  return { value: imported, generated: false };
}

function printSecret(secret: ChosenSecret, out: (line: string) => void, note: (line: string) => void): void {
  if (secret.generated) {
    out(`client_secret: ${secret.value}`);
    note('Store the client_secret now: it is kept only as a hash and will not be shown again.');
  } else {
    note('The imported secret was stored as a hash; it is not shown.');
  }
}

function checkClientId(clientId: string): void {
  if (!isValidClientId(clientId)) {
    throw new CliFailure(
      EXIT_USAGE,
      `invalid client id ${JSON.stringify(clientId)}: use 1 to 64 characters of A-Z a-z 0-9 . _ -, not starting with "."`,
    );
  }
}

/**
 * The index path must be a storage path the gateway will serve: the same domain rule as request
 * paths and index rows, so that an operator's typo (`indexes/100%.csv`) is refused here rather
 * than blamed on the subscriber at every request.
 */
function checkIndexPath(indexPath: string): void {
  try {
    validateStoragePath(indexPath);
  } catch (error) {
    if (!(error instanceof InvalidPath)) throw error;
    throw new CliFailure(
      EXIT_USAGE,
      `invalid --index ${JSON.stringify(indexPath)}: ${error.message}; use a relative storage path such as indexes/acme.csv`,
    );
  }
}

/** Applies `change` to one client under the registry's lock; `undefined` removes it. Unknown client: exit 1. */
async function update(
  store: JsonClientRegistry,
  clientId: string,
  change: (stored: StoredClient) => StoredClient | undefined,
): Promise<void> {
  await store.modify((file) => {
    const stored = Object.hasOwn(file.clients, clientId) ? file.clients[clientId] : undefined;
    if (stored === undefined) {
      throw new CliFailure(EXIT_REFUSED, `no client "${clientId}" in ${store.path}`);
    }
    const changed = change(stored);
    if (changed === stored) return { result: undefined, write: false };
    if (changed === undefined) delete file.clients[clientId];
    else file.clients[clientId] = changed;
    return { result: undefined, write: true };
  });
}
