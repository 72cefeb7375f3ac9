import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a test receiver was sent. */
export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** An answer the receiver gives: a status and headers. */
export interface Answer {
  readonly status: number;
  readonly headers?: Record<string, string>;
}

/** A local webhook receiver: records every POST and answers from `answers` in turn (200 once they run out). */
export interface TestReceiver {
  readonly url: string;
  readonly received: Received[];
  readonly answers: Answer[];
  close(): Promise<void>;
}

export async function startReceiver(answers: Answer[] = []): Promise<TestReceiver> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const answer = answers.shift() ?? { status: 200 };
      res.writeHead(answer.status, answer.headers ?? {}).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    answers,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
