import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { termStatus } from '../domain/subscription.js';

/** One client's usage in the period. */
export interface ClientUsage {
  readonly clientId: string;
  /** Downloads that were completed (whole files and ranges), through either API. */
  readonly downloads: number;
  /** Of `downloads`, those through the S3-compatible API (S3_API=on). */
  readonly s3Downloads: number;
  /** Downloads the subscriber broke off, having received part of the bytes. */
  readonly interrupted: number;
  /**
   * Direct links handed out (`GET /link`, `?redirect=true`, the portal's): a storage link's bytes are
   * moved by storage, so they are not in `bytes`; each use of a gateway-signed link is a download.
   */
  readonly links: number;
  /** Body bytes handed to the subscriber's connections, by every download. */
  readonly bytes: number;
  /** Distinct files of which bytes were sent or to which a link was given. */
  readonly files: number;
  /**
   * What the monthly quota ledger kept for the client: each download's body bytes delivered, on
   * every door (each use of a gateway-signed link included; making a link costs nothing), written
   * once the unsent bytes of an aborted download were given back. The ledger counts the same bytes.
   */
  readonly quotaBytes: number;
  /** The client's monthly byte quota from the registry (`null`: none, or no registry given). */
  readonly monthlyBytes: number | null;
  /** Whether the subscription term is in force at the time of the report (`null`: no registry given or not in it). */
  readonly termActive: boolean | null;
  readonly validFrom: string | null;
  readonly validUntil: string | null;
}

/** A registered client's subscription, to set usage against. */
export interface SubscriptionOf {
  readonly monthlyBytes?: number;
  readonly validFrom?: Date;
  readonly validUntil?: Date;
}

export interface UsagePeriod {
  /** Inclusive. */
  readonly since?: Date;
  /** Exclusive. */
  readonly until?: Date;
}

export interface UsageReport {
  readonly clients: readonly ClientUsage[];
  /** Lines read that are not download audit records (logs, token records, broken lines). */
  readonly otherLines: number;
}

interface Totals {
  downloads: number;
  s3Downloads: number;
  interrupted: number;
  links: number;
  bytes: number;
  quotaBytes: number;
  readonly files: Set<string>;
}

/**
 * Per-client usage from audit files (`AUDIT_LOG_FILE`, or captured stdout: other lines are
 * skipped): the JSON lines with `"event": "download"` whose `time` falls in the period. With the
 * registry's `subscriptions` (and the time of the report), every registered client is listed with
 * its quota and whether its term is in force, used or not.
 */
export async function usageReport(
  files: readonly string[],
  period: UsagePeriod,
  registry?: { readonly subscriptions: ReadonlyMap<string, SubscriptionOf>; readonly now: Date },
): Promise<UsageReport> {
  const byClient = new Map<string, Totals>();
  const emptyTotals = (): Totals => ({ downloads: 0, s3Downloads: 0, interrupted: 0, links: 0, bytes: 0, quotaBytes: 0, files: new Set() });
  for (const clientId of registry?.subscriptions.keys() ?? []) byClient.set(clientId, emptyTotals());
  let otherLines = 0;
  for (const file of files) {
    const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) {
      const record = downloadRecordOf(line);
      if (record === undefined) {
        if (line.trim() !== '') otherLines += 1;
        continue;
      }
      // A HEAD moves no file: the subscriber only asked about it.
      if (record.method === 'HEAD') continue;
      const time = Date.parse(record.time);
      if (period.since !== undefined && time < period.since.getTime()) continue;
      if (period.until !== undefined && time >= period.until.getTime()) continue;
      let totals = byClient.get(record.clientId);
      if (totals === undefined) {
        totals = emptyTotals();
        byClient.set(record.clientId, totals);
      }
      if (record.outcome === 'completed') totals.downloads += 1;
      if (record.outcome === 'completed' && record.interface === 's3') totals.s3Downloads += 1;
      if (record.outcome === 'aborted' && record.bytesSent > 0) totals.interrupted += 1;
      if (record.outcome === 'linked') totals.links += 1;
      totals.bytes += record.bytesSent;
      totals.quotaBytes += record.quotaBytes;
      if ((record.bytesSent > 0 || record.outcome === 'linked') && record.path !== null) totals.files.add(record.path);
    }
  }
  const clients = [...byClient.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([clientId, totals]) => ({
      clientId,
      downloads: totals.downloads,
      s3Downloads: totals.s3Downloads,
      interrupted: totals.interrupted,
      links: totals.links,
      bytes: totals.bytes,
      files: totals.files.size,
      quotaBytes: totals.quotaBytes,
      ...subscriptionFields(registry?.subscriptions.get(clientId), registry?.now),
    }));
  return { clients, otherLines };
}

function subscriptionFields(
  subscription: SubscriptionOf | undefined,
  now: Date | undefined,
): Pick<ClientUsage, 'monthlyBytes' | 'termActive' | 'validFrom' | 'validUntil'> {
  if (subscription === undefined || now === undefined) return { monthlyBytes: null, termActive: null, validFrom: null, validUntil: null };
  return {
    monthlyBytes: subscription.monthlyBytes ?? null,
    termActive: termStatus(subscription, now).kind === 'active',
    validFrom: subscription.validFrom?.toISOString() ?? null,
    validUntil: subscription.validUntil?.toISOString() ?? null,
  };
}

interface DownloadLine {
  readonly time: string;
  readonly clientId: string;
  readonly path: string | null;
  readonly method: string;
  readonly bytesSent: number;
  readonly quotaBytes: number;
  readonly outcome: string;
  /** `native` when absent (records from before the S3 API). */
  readonly interface: string;
}

function downloadRecordOf(line: string): DownloadLine | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const record = parsed as Record<string, unknown>;
  if (record['event'] !== 'download' || typeof record['clientId'] !== 'string' || typeof record['time'] !== 'string') return undefined;
  // A byte count is a whole number of 0 or more: JSON.parse turns 1e999 into Infinity, and a negative one would lower a total.
  const bytesSent = record['bytesSent'];
  if (typeof bytesSent !== 'number' || !Number.isSafeInteger(bytesSent) || bytesSent < 0) return undefined;
  if (typeof record['outcome'] !== 'string' || typeof record['method'] !== 'string' || Number.isNaN(Date.parse(record['time']))) return undefined;
  // Records written before the quota existed have no quotaBytes: their bytes sent are what a quota would have counted.
  const quotaBytes = record['quotaBytes'] ?? bytesSent;
  if (typeof quotaBytes !== 'number' || !Number.isSafeInteger(quotaBytes) || quotaBytes < 0) return undefined;
  return {
    time: record['time'],
    clientId: record['clientId'],
    method: record['method'],
    path: typeof record['path'] === 'string' ? record['path'] : null,
    bytesSent,
    quotaBytes,
    outcome: record['outcome'],
    interface: typeof record['interface'] === 'string' ? record['interface'] : 'native',
  };
}

/**
 * `text` with C0, DEL and C1 control characters written as `\uXXXX`: a client id comes from whoever
 * wrote the audit file's lines, and a terminal acts on ESC (U+001B) and CSI (U+009B) sequences.
 */
function escapeControls(text: string, controls = /[\u0000-\u001f\u007f-\u009f]/g): string {
  return text.replace(controls, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The report's clients as indented JSON, safe on a terminal: JSON.stringify escapes C0 controls in
 * strings but leaves DEL and C1 raw, which a `\u` escape carries (it parses back the same).
 */
export function formatUsageJson(report: UsageReport): string {
  return escapeControls(JSON.stringify(report.clients, null, 2), /[\u007f-\u009f]/g);
}

/** The report as an aligned text table, bytes also in MiB, control characters escaped. */
export function formatUsageTable(report: UsageReport): string {
  const rows = [
    ['CLIENT_ID', 'DOWNLOADS', 'S3', 'INTERRUPTED', 'LINKS', 'BYTES', 'MIB', 'FILES', 'QUOTA_USED', 'MONTHLY_BYTES', 'USED_%', 'TERM_ACTIVE'],
    ...report.clients.map((client) => [
      escapeControls(client.clientId),
      String(client.downloads),
      String(client.s3Downloads),
      String(client.interrupted),
      String(client.links),
      String(client.bytes),
      (client.bytes / 1024 / 1024).toFixed(1),
      String(client.files),
      String(client.quotaBytes),
      client.monthlyBytes === null ? '-' : String(client.monthlyBytes),
      client.monthlyBytes === null || client.monthlyBytes === 0 ? '-' : ((client.quotaBytes / client.monthlyBytes) * 100).toFixed(1),
      client.termActive === null ? '-' : client.termActive ? 'yes' : 'no',
    ]),
  ];
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows
    .map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  '))
    .join('\n');
}
