import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { DownloadSettled, GatewayEvent, TokenRequested, WebhookDisabled } from '../../application/events.js';

export type { DownloadInterface, DownloadOutcome, TokenOutcome } from '../../application/events.js';

/**
 * One download attempt, as the vendor bills and audits it: the core's `download.settled` event, its
 * fields as the event names them (`quotaBytes` is what the ledger kept once the unsent bytes were
 * given back).
 */
export type DownloadAuditRecord = { readonly event: 'download' } & Omit<DownloadSettled, 'type'>;

/** One token request (the core's `token.requested` event). Never a secret or a token. */
export type TokenAuditRecord = { readonly event: 'token' } & Omit<TokenRequested, 'type'>;

/**
 * A client's monthly byte quota reached 80 % or 100 % (once per share and period; `used` counts
 * bytes reserved, links included), so that an operator can alert on it.
 */
export interface QuotaAuditRecord {
  readonly event: 'quota';
  /** The request whose reservation crossed the share. */
  readonly requestId: string;
  readonly clientId: string;
  /** The calendar month, UTC: `2026-11`. */
  readonly period: string;
  readonly percent: number;
  readonly limit: number;
  readonly used: number;
}

/** A webhook endpoint disabled by delivery (the core's `webhook.disabled` event): it answered 410, or its retries were spent. */
export type WebhookAuditRecord = { readonly event: 'webhook'; readonly action: 'disabled' } & Omit<WebhookDisabled, 'type'>;

export type AuditRecord = DownloadAuditRecord | TokenAuditRecord | QuotaAuditRecord | WebhookAuditRecord;

/** Where audit records go. */
export interface AuditTrail {
  record(record: AuditRecord): void;
  /** Flushes and closes any file; records after it go to stdout only. */
  close(): Promise<void>;
}

/**
 * The audit trail: one JSON line per record (with `"time"` in ISO 8601, `"level": 30` and `"msg": "audit"`) on
 * the given destination (stdout, shared with the logs), whatever LOG_LEVEL is, and appended to
 * `file` when AUDIT_LOG_FILE is set.
 */
export function createAuditTrail(destination: DestinationStream, file?: string): AuditTrail {
  let fileStream: WriteStream | undefined;
  if (file !== undefined) {
    mkdirSync(dirname(file), { recursive: true });
    fileStream = createWriteStream(file, { flags: 'a', mode: 0o600 });
  }
  const streams = fileStream === undefined ? destination : pino.multistream([{ stream: destination }, { stream: fileStream }]);
  const logger: Logger = pino({ level: 'info', base: null, timestamp: pino.stdTimeFunctions.isoTime }, streams);
  return {
    record(record) {
      logger.info(record, 'audit');
    },
    close: () =>
      new Promise((resolve) => {
        if (fileStream === undefined) return resolve();
        fileStream.end(() => resolve());
      }),
  };
}

/** An audit trail that keeps nothing: for tests that do not look at it. */
export const noAudit: AuditTrail = { record: () => undefined, close: async () => undefined };

/**
 * The audit records of the core's events: one per settled download (its `quotaBytes` what the
 * ledger kept) and one per quota alert share crossed. Subscribe it to the event bus.
 */
export function auditEvents(audit: AuditTrail): (event: GatewayEvent) => void {
  return (event) => {
    switch (event.type) {
      case 'download.settled': {
        const { type: _type, ...fields } = event;
        audit.record({ event: 'download', ...fields });
        return;
      }
      case 'token.requested': {
        const { type: _type, ...fields } = event;
        audit.record({ event: 'token', ...fields });
        return;
      }
      case 'webhook.disabled': {
        const { type: _type, ...fields } = event;
        audit.record({ event: 'webhook', action: 'disabled', ...fields });
        return;
      }
      case 'quota.threshold': {
        const { standing } = event;
        audit.record({
          event: 'quota',
          requestId: event.requestId,
          clientId: event.clientId,
          period: standing.period.key,
          percent: event.percent,
          limit: standing.limit,
          used: standing.used,
        });
        return;
      }
    }
  };
}
