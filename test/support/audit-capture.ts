import { Writable } from 'node:stream';
import { createAuditTrail, type AuditRecord, type AuditTrail, type DownloadAuditRecord } from '../../src/adapters/audit/audit-trail.js';

export type CapturedAuditRecord = AuditRecord & { time: string; msg: string };
export type CapturedDownloadRecord = DownloadAuditRecord & { time: string; msg: string };

/** An audit trail whose records the test reads back, through the real JSON-lines writer. */
export function capturedAudit(): { audit: AuditTrail; records: () => CapturedAuditRecord[]; downloads: () => CapturedDownloadRecord[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter((line) => line !== ''));
      callback();
    },
  });
  const records = (): CapturedAuditRecord[] => lines.map((line) => JSON.parse(line) as CapturedAuditRecord);
  return {
    audit: createAuditTrail(sink),
    records,
    downloads: () => records().filter((record): record is CapturedDownloadRecord => record.event === 'download'),
  };
}
