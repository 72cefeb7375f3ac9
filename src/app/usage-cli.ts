#!/usr/bin/env node
/**
 * `npm run usage -- <audit file>... [--month YYYY-MM | --since <date>] [--until <date>] [--json]`:
 * per client, the downloads, bytes and distinct files of a period, and the bytes counted against
 * the monthly quota, from audit records; with CLIENTS_FILE set, every registered client with its
 * quota and whether its term is in force. Exit codes: 0 done, 1 a file could not be read, 2 bad usage.
 */
import { resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { JsonClientRegistry } from '../adapters/clients/json-client-registry.js';
import { parseIsoInstant } from '../text/iso-instant.js';
import { formatUsageJson, formatUsageTable, usageReport, type SubscriptionOf } from './usage-report.js';

/** `YYYY-MM`: the calendar month, UTC, as the quota counts it. */
function month(value: string): { since: Date; until: Date } {
  const match = /^(\d{4})-(\d{2})$/.exec(value);
  const monthNumber = match === null ? 0 : Number(match[2]);
  if (match === null || monthNumber < 1 || monthNumber > 12) throw new InvalidArgumentError('--month must be YYYY-MM, e.g. 2026-11');
  const year = Number(match[1]);
  return { since: new Date(Date.UTC(year, monthNumber - 1, 1)), until: new Date(Date.UTC(year, monthNumber, 1)) };
}

async function subscriptions(): Promise<ReadonlyMap<string, SubscriptionOf> | undefined> {
  const file = process.env['CLIENTS_FILE'];
  if (file === undefined || file === '') return undefined;
  const registry = await new JsonClientRegistry(resolve(file)).load();
  return new Map(
    Object.entries(registry.clients).map(([clientId, stored]) => [
      clientId,
      {
        ...(stored.monthlyBytes !== undefined && { monthlyBytes: stored.monthlyBytes }),
        ...(stored.validFrom !== undefined && { validFrom: parseIsoInstant(stored.validFrom) }),
        ...(stored.validUntil !== undefined && { validUntil: parseIsoInstant(stored.validUntil) }),
      },
    ]),
  );
}

function date(name: string) {
  return (value: string): Date => {
    if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2})?)?$/.test(value) || Number.isNaN(Date.parse(value))) {
      throw new InvalidArgumentError(`${name} must be an ISO 8601 date or date-time (2026-11-01, 2026-11-01T00:00:00Z)`);
    }
    return new Date(value);
  };
}

const program = new Command('usage')
  .description(
    'Per-client usage (downloads, bytes, distinct files, bytes counted against the monthly quota) from audit files (AUDIT_LOG_FILE or captured stdout); with CLIENTS_FILE set, every registered client with its quota and whether its term is in force.',
  )
  .argument('<file...>', 'audit files, JSON lines; other lines are skipped')
  .option('--month <YYYY-MM>', 'the calendar month (UTC) the monthly quota counts: --since its first day, --until the next month\'s', month)
  .option('--since <date>', 'first moment counted, inclusive (ISO 8601; a date alone is midnight UTC)', date('--since'))
  .option('--until <date>', 'first moment not counted, exclusive (ISO 8601)', date('--until'))
  .option('--json', 'print JSON instead of a table')
  .exitOverride();

try {
  program.parse(process.argv);
  const options = program.opts<{ month?: { since: Date; until: Date }; since?: Date; until?: Date; json?: boolean }>();
  if (options.month !== undefined && (options.since !== undefined || options.until !== undefined)) {
    process.stderr.write('error: use either --month or --since/--until\n');
    process.exit(2);
  }
  const since = options.month?.since ?? options.since;
  const until = options.month?.until ?? options.until;
  const registered = await subscriptions();
  const report = await usageReport(
    program.args,
    { ...(since !== undefined && { since }), ...(until !== undefined && { until }) },
    registered === undefined ? undefined : { subscriptions: registered, now: new Date() },
  );
  process.stdout.write(options.json === true ? `${formatUsageJson(report)}\n` : `${formatUsageTable(report)}\n`);
  if (report.otherLines > 0) process.stderr.write(`(${report.otherLines} lines were not download records and were skipped)\n`);
} catch (error) {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
