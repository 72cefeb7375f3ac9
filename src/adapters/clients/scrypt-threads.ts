import { Worker } from 'node:worker_threads';

/** scrypt's parameters, as `crypto.scrypt` takes them. */
export interface ScryptOptions {
  readonly N: number;
  readonly r: number;
  readonly p: number;
  readonly maxmem: number;
}

interface Job {
  readonly secret: string;
  readonly salt: Uint8Array;
  readonly keyLength: number;
  readonly options: ScryptOptions;
}

type Answer = { readonly key: Uint8Array } | { readonly error: string };

/** What each thread runs: plain CommonJS, so that it loads the same from `dist` and under tsx. */
const threadSource = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
parentPort.on('message', ({ secret, salt, keyLength, options }) => {
  let answer;
  try {
    answer = { key: scryptSync(secret, salt, keyLength, options) };
  } catch (error) {
    answer = { error: String((error && error.message) || error) };
  }
  parentPort.postMessage(answer);
});
`;

/**
 * scrypt on at most `size` threads of its own, one derivation per thread at a time.
 *
 * Why not Node's thread pool (`crypto.scrypt`): each derivation takes 16 MiB (128 * N * r) from
 * the C allocator of whichever pool thread runs it, and glibc keeps that memory in the thread's
 * arena once freed; with 4 pool threads, a gateway issuing tokens held about 110 MiB more RSS
 * than before its first one (measured: 142 to 256 MiB over 40 token requests, one at a time).
 * On threads of its own it holds one arena's worth per thread (the 2,000-client fleet of
 * BENCHMARKS.md). The threads start on first use, and keep the process alive only while they derive.
 */
export class ScryptThreads {
  readonly #size: number;
  readonly #idle: Worker[] = [];
  #started = 0;

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`ScryptThreads needs at least one thread, not ${size}`);
    this.#size = size;
  }

  /**
   * The derived key. Callers keep at most `size` derivations in flight (the secret hasher's own
   * concurrency bound); one more is refused rather than queued.
   */
  async derive(secret: string, salt: Uint8Array, keyLength: number, options: ScryptOptions): Promise<Buffer> {
    const thread = this.#idle.pop() ?? this.#start();
    // Referenced while it works, so that a process waiting only for the key does not exit.
    thread.ref();
    const answer = await new Promise<Answer>((resolve, reject) => {
      const onExit = (code: number): void => {
        thread.off('message', onMessage);
        reject(new Error(`the scrypt thread exited with ${code}`));
      };
      const onMessage = (message: Answer): void => {
        thread.off('exit', onExit);
        resolve(message);
      };
      thread.once('message', onMessage);
      thread.once('exit', onExit);
      thread.postMessage({ secret, salt, keyLength, options } satisfies Job);
    }).catch((error: unknown) => {
      this.#started -= 1;
      throw error;
    });
    thread.unref();
    this.#idle.push(thread);
    if ('error' in answer) throw new Error(answer.error);
    return Buffer.from(answer.key.buffer, answer.key.byteOffset, answer.key.byteLength);
  }

  /** Ends the threads (tests; a server just exits). */
  async close(): Promise<void> {
    const threads = this.#idle.splice(0);
    this.#started -= threads.length;
    await Promise.all(threads.map((thread) => thread.terminate()));
  }

  #start(): Worker {
    if (this.#started >= this.#size) throw new Error(`more than ${this.#size} scrypt derivations at once`);
    this.#started += 1;
    // A small heap: the work is in OpenSSL's memory, the thread's JavaScript only passes messages.
    // None of the process's flags either (a loader, --cpu-prof writing over the process's own profile).
    return new Worker(threadSource, { eval: true, execArgv: [], resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 1 } });
  }
}
