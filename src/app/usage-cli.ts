#!/usr/bin/env node
/**
 * `npm run usage -- <audit file>... [--since <date>] [--until <date>] [--json]`: per client, the
 * downloads, bytes and distinct files of a period, from audit records. Exit codes: 0 done, 1 a
 * file could not be read, 2 bad usage.
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { formatUsageJson, formatUsageTable, usageReport } from './usage-report.js';

function date(name: string) {
  return (value: string): Date => {
    if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2})?)?$/.test(value) || Number.isNaN(Date.parse(value))) {
      throw new InvalidArgumentError(`${name} must be an ISO 8601 date or date-time (2026-11-01, 2026-11-01T00:00:00Z)`);
    }
    return new Date(value);
  };
}

const program = new Command('usage')
  .description('Per-client usage (downloads, bytes, distinct files) from audit files (AUDIT_LOG_FILE or captured stdout).')
  .argument('<file...>', 'audit files, JSON lines; other lines are skipped')
  .option('--since <date>', 'first moment counted, inclusive (ISO 8601; a date alone is midnight UTC)', date('--since'))
  .option('--until <date>', 'first moment not counted, exclusive (ISO 8601)', date('--until'))
  .option('--json', 'print JSON instead of a table')
  .exitOverride();

try {
  program.parse(process.argv);
  const options = program.opts<{ since?: Date; until?: Date; json?: boolean }>();
  const report = await usageReport(program.args, {
    ...(options.since !== undefined && { since: options.since }),
    ...(options.until !== undefined && { until: options.until }),
  });
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
