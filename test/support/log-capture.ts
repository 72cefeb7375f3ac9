import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

/** A pino logger whose every line is kept, parsed, for tests to read and wait on. */
export interface CapturedLog {
  readonly logger: Logger;
  /** The stream itself, for other writers (the audit trail) that share the output. */
  readonly stream: Writable;
  readonly lines: ReadonlyArray<Record<string, unknown>>;
  /** Every byte written, as text: what a grep of the process's output would see. */
  text(): string;
  /** Resolves with the first line, already written or still to come, for which `match` holds. */
  waitFor(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

export function captureLog(level: pino.LevelWithSilent = 'trace'): CapturedLog {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  const waiters: Array<{ match: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      const text = chunk.toString('utf8');
      raw.push(text);
      for (const part of text.split('\n')) {
        if (part.trim() === '') continue;
        const line = JSON.parse(part) as Record<string, unknown>;
        lines.push(line);
        for (const waiter of [...waiters]) {
          if (waiter.match(line)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(line);
          }
        }
      }
      callback();
    },
  });
  return {
    logger: pino({ level }, sink),
    stream: sink,
    lines,
    text: () => raw.join(''),
    waitFor: (match) =>
      new Promise((resolve) => {
        const seen = lines.find(match);
        if (seen !== undefined) resolve(seen);
        else waiters.push({ match, resolve });
      }),
  };
}
