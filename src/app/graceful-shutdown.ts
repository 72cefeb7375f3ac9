import type { Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';

export interface GracefulShutdownOptions {
  readonly server: Server;
  /** Turned not ready at the first signal, so that the load balancer stops sending traffic. */
  readonly readiness: { markShuttingDown(): void };
  /** Called at the first signal: long polls answer now rather than hold the drain for their whole wait. */
  readonly onDrain?: () => void;
  /** How long requests in flight (long downloads included) may still finish. */
  readonly graceMs: number;
  readonly logger: Logger;
  /** Last words before the process exits: flush logs and audit, close Redis, flush telemetry. */
  readonly cleanUp: () => Promise<void>;
  readonly exit: (code: number) => void;
  readonly signals?: readonly NodeJS.Signals[];
}

/**
 * How long, once the server has closed, the answers cut by the grace period may take to emit their
 * `close` (their connections are already destroyed: it takes a few ticks, never a network wait).
 */
const CUT_ANSWERS_CLOSE_TIMEOUT_MS = 2000;

/**
 * SIGTERM and SIGINT drain the instance: `/ready` turns 503 at once; the server stops accepting
 * connections and closes the idle keep-alive ones; answers still in flight carry `Connection:
 * close` and may finish for up to the grace period, after which the remaining connections are
 * closed. Every answer has then emitted `close` (so each download it cut has its audit record)
 * before `cleanUp` flushes the logs and the audit trail. The process then exits 0. A second signal
 * exits at once, with 1.
 */
export function drainOnSignals(options: GracefulShutdownOptions): void {
  let draining = false;
  const finish = async (code: number): Promise<void> => {
    try {
      await options.cleanUp();
    } finally {
      options.exit(code);
    }
  };
  // Answers not yet begun when draining starts (or begun after) close their connection, and a
  // keep-alive connection whose answer ends while draining is closed as soon as it is idle.
  const inFlight = new Set<ServerResponse>();
  let allClosed: (() => void) | undefined;
  options.server.on('request', (_req, res: ServerResponse) => {
    inFlight.add(res);
    if (draining) res.setHeader('Connection', 'close');
    res.once('close', () => {
      inFlight.delete(res);
      if (draining) setImmediate(() => options.server.closeIdleConnections());
      if (inFlight.size === 0) allClosed?.();
    });
  });
  /**
   * Resolves once every answer has closed. The server's own `close` comes as soon as the last
   * connection is gone, before the answers those connections carried have emitted theirs (and
   * written their audit records); a listener added after the audit's runs after it.
   */
  const answersClosed = (): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        options.logger.warn({ open: inFlight.size }, 'answers still open after the drain: exiting without them');
        resolve();
      }, CUT_ANSWERS_CLOSE_TIMEOUT_MS);
      timer.unref();
      allClosed = () => {
        clearTimeout(timer);
        // The answers' other `close` listeners (the audit's) have run: this one was added last.
        setImmediate(resolve);
      };
      if (inFlight.size === 0) allClosed();
    });
  const onSignal = (signal: NodeJS.Signals): void => {
    if (draining) {
      options.logger.warn({ signal }, 'second signal: exiting at once');
      void finish(1);
      return;
    }
    draining = true;
    options.readiness.markShuttingDown();
    options.onDrain?.();
    for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    const graceOver = setTimeout(() => {
      options.logger.warn('grace period over: closing the connections still open');
      options.server.closeAllConnections();
    }, options.graceMs);
    graceOver.unref();
    options.server.close(() => {
      clearTimeout(graceOver);
      void answersClosed().then(() => {
        options.logger.info('drained: exiting');
        return finish(0);
      });
    });
    options.server.closeIdleConnections();
    // Said once the listening socket is closed: whoever reads the line finds new connections refused.
    options.logger.info({ signal, graceSeconds: options.graceMs / 1000 }, 'shutting down: draining the requests in flight');
  };
  for (const signal of options.signals ?? (['SIGTERM', 'SIGINT'] as const)) process.on(signal, onSignal);
}
