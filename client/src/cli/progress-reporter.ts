import { basename } from 'node:path';
import cliProgress from 'cli-progress';
import type { SyncEvent } from '../sync/sync-catalog.js';
import { formatBytes } from './table.js';
import { escapeControls, jsonLine } from './terminal-text.js';

export type ProgressMode = 'bars' | 'json' | 'none';

export interface ProgressReporter {
  readonly onEvent: (event: SyncEvent) => void;
  /** Stops drawing (bars must be stopped before anything else is printed). */
  stop(): void;
}

/**
 * `json`: every sync event as one JSON line on `out` (for scripts and logs; progress lines come at
 * most every 200 ms per file). `bars`: cli-progress bars on a terminal, one overall and one per
 * file in flight, with bytes and rate. `none`: nothing.
 */
export function createProgressReporter(mode: ProgressMode, out: NodeJS.WritableStream, terminal: NodeJS.WritableStream): ProgressReporter {
  if (mode === 'none') return { onEvent: () => undefined, stop: () => undefined };
  if (mode === 'json') {
    return {
      onEvent: (event) => {
        out.write(jsonLine({ time: new Date().toISOString(), ...event }));
      },
      stop: () => undefined,
    };
  }
  return barsReporter(terminal);
}

function barsReporter(terminal: NodeJS.WritableStream): ProgressReporter {
  const startedAt = Date.now();
  const rate = (bytes: number, since: number): string => `${formatBytes(Math.round(bytes / Math.max(0.001, (Date.now() - since) / 1000)))}/s`;
  const multibar = new cliProgress.MultiBar(
    {
      stream: terminal,
      format: '{name} |{bar}| {percentage}% {done}/{total_text} {rate}',
      hideCursor: true,
      clearOnComplete: false,
      autopadding: true,
      barsize: 30,
    },
    cliProgress.Presets.shades_classic,
  );
  let overall: cliProgress.SingleBar | undefined;
  let overallDone = 0;
  const files = new Map<string, { bar: cliProgress.SingleBar; received: number; offset: number; since: number }>();
  const updateOverall = (): void =>
    overall?.update(overallDone, { done: formatBytes(overallDone), rate: rate(overallDone, startedAt) });

  return {
    onEvent: (event) => {
      switch (event.type) {
        case 'plan':
          overall = multibar.create(Math.max(1, event.bytes), 0, {
            name: `all ${event.toTransfer} files`.padEnd(24).slice(0, 24),
            done: '0 B',
            total_text: formatBytes(event.bytes),
            rate: '',
          });
          break;
        case 'file-start': {
          const size = event.size ?? 0;
          const bar = multibar.create(Math.max(1, size), event.offset, {
            name: escapeControls(basename(event.path)).padEnd(24).slice(0, 24),
            done: formatBytes(event.offset),
            total_text: formatBytes(size),
            rate: '',
          });
          files.get(event.path)?.bar.stop();
          files.set(event.path, { bar, received: event.offset, offset: event.offset, since: Date.now() });
          break;
        }
        case 'file-progress': {
          const file = files.get(event.path);
          if (file === undefined) break;
          overallDone += event.received - file.received;
          file.received = event.received;
          file.bar.update(event.received, { done: formatBytes(event.received), rate: rate(event.received - file.offset, file.since) });
          updateOverall();
          break;
        }
        case 'file-done': {
          const file = files.get(event.report.path);
          if (file !== undefined) {
            multibar.remove(file.bar);
            files.delete(event.report.path);
          }
          break;
        }
        default:
          break;
      }
    },
    stop: () => multibar.stop(),
  };
}
