import type { Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';

export interface GracefulShutdownOptions {
  readonly server: Server;
  /** Turned not ready at the first signal, so that the load balancer stops sending traffic. */
  readonly readiness: { markShuttingDown(): void };
  /** How long requests in flight (long downloads included) may still finish. */
  readonly graceMs: number;
  readonly logger: Logger;
  /** Last words before the process exits: flush logs and audit, close Redis, flush telemetry. */
  readonly cleanUp: () => Promise<void>;
  readonly exit: (code: number) => void;
  readonly signals?: readonly NodeJS.Signals[];
}

/**
 * SIGTERM and SIGINT drain the instance: `/ready` turns 503 at once; the server stops accepting
 * connections and closes the idle keep-alive ones; answers still in flight carry `Connection:
 * close` and may finish for up to the grace period, after which the remaining connections are
 * closed. The process then exits 0. A second signal exits at once, with 1.
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
  options.server.on('request', (_req, res: ServerResponse) => {
    inFlight.add(res);
    if (draining) res.setHeader('Connection', 'close');
    res.once('close', () => {
      inFlight.delete(res);
      if (draining) setImmediate(() => options.server.closeIdleConnections());
    });
  });
  const onSignal = (signal: NodeJS.Signals): void => {
    if (draining) {
      options.logger.warn({ signal }, 'second signal: exiting at once');
      void finish(1);
      return;
    }
    draining = true;
    options.readiness.markShuttingDown();
    for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    options.logger.info({ signal, graceSeconds: options.graceMs / 1000 }, 'shutting down: draining the requests in flight');
    const graceOver = setTimeout(() => {
      options.logger.warn('grace period over: closing the connections still open');
      options.server.closeAllConnections();
    }, options.graceMs);
    graceOver.unref();
    options.server.close(() => {
      clearTimeout(graceOver);
      options.logger.info('drained: exiting');
      void finish(0);
    });
    options.server.closeIdleConnections();
  };
  for (const signal of options.signals ?? (['SIGTERM', 'SIGINT'] as const)) process.on(signal, onSignal);
}
