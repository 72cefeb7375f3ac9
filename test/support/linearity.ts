import { expect } from 'chai';

/**
 * The characters `action` reads through JavaScript's string and regular-expression built-ins while
 * it runs synchronously: one per `charCodeAt`/`charAt`/`at`/`codePointAt`, the length searched or
 * copied by `startsWith`/`endsWith`/`indexOf`/`lastIndexOf`/`includes`/`slice`/`substring`/
 * `trim*`/`split`/`toLowerCase`/`toUpperCase`/`replace*`/`normalize`/`decodeURIComponent`, and the
 * subject scanned by each regular-expression match (`exec`, which `test`, `match`, `replace` and
 * `split` call). The built-ins are wrapped only for the duration of the call, which is
 * synchronous, so nothing else is counted. A parser that rescans its input (a trim per character,
 * a search from every position) reads a number of characters quadratic in the input's length.
 */
export function charactersRead(action: () => unknown): number {
  const counting = countCharactersRead();
  try {
    action();
  } finally {
    counting.stop();
  }
  return counting.read();
}

/**
 * `charactersRead` over an asynchronous action (a request to a gateway in this process): every
 * character read by JavaScript code of the process meanwhile is counted, the gateway's and the
 * test's own (Node's internals use their own copies of the built-ins and are not counted).
 */
export async function charactersReadDuring(action: () => Promise<unknown>): Promise<number> {
  const counting = countCharactersRead();
  try {
    await action();
  } finally {
    counting.stop();
  }
  return counting.read();
}

function countCharactersRead(): { read(): number; stop(): void } {
  let read = 0;
  const restores: Array<() => void> = [];
  const wrap = <T extends object, K extends keyof T & string>(owner: T, name: K, cost: (self: unknown, args: unknown[], result: unknown) => number): void => {
    const original = owner[name] as unknown as (...args: unknown[]) => unknown;
    const counted = function (this: unknown, ...args: unknown[]): unknown {
      const result = original.apply(this, args);
      read += cost(this, args, result);
      return result;
    };
    Object.defineProperty(owner, name, { value: counted, writable: true, configurable: true });
    restores.push(() => Object.defineProperty(owner, name, { value: original, writable: true, configurable: true }));
  };
  const lengthOf = (value: unknown): number => (typeof value === 'string' ? value.length : String(value).length);
  const one = (): number => 1;
  // A search reads from where it starts to where it finds (or to the end when it finds nothing).
  const fromOf = (args: unknown[]): number => Math.max(0, Math.trunc(Number(args[1] ?? 0)) || 0);
  const searchedForward = (self: unknown, args: unknown[], result: unknown): number =>
    (result === -1 ? Math.max(0, lengthOf(self) - fromOf(args)) : Number(result) - fromOf(args)) + lengthOf(args[0]);
  const searchedBackward = (self: unknown, args: unknown[], result: unknown): number => {
    const from = args[1] === undefined ? lengthOf(self) : Math.min(lengthOf(self), fromOf(args));
    return (result === -1 ? from : from - Number(result)) + lengthOf(args[0]);
  };
  const searchedWhole = (self: unknown, args: unknown[]): number => Math.max(0, lengthOf(self) - fromOf(args)) + lengthOf(args[0]);
  const whole = (self: unknown): number => lengthOf(self);
  const copied = (_self: unknown, _args: unknown[], result: unknown): number => lengthOf(result);
  for (const name of ['charCodeAt', 'charAt', 'at', 'codePointAt'] as const) wrap(String.prototype, name, one);
  for (const name of ['startsWith', 'endsWith'] as const) wrap(String.prototype, name, (_self, args) => lengthOf(args[0]));
  wrap(String.prototype, 'indexOf', searchedForward);
  wrap(String.prototype, 'lastIndexOf', searchedBackward);
  wrap(String.prototype, 'includes', searchedWhole);
  for (const name of ['slice', 'substring', 'substr'] as const) wrap(String.prototype, name, copied);
  for (const name of ['trim', 'trimStart', 'trimEnd', 'split', 'toLowerCase', 'toUpperCase', 'replace', 'replaceAll', 'normalize'] as const) wrap(String.prototype, name, whole);
  wrap(RegExp.prototype, 'exec', (self, args) => Math.max(0, lengthOf(args[0]) - ((self as RegExp).global || (self as RegExp).sticky ? (self as RegExp).lastIndex : 0)) + 1);
  wrap(globalThis, 'decodeURIComponent', (_self, args) => lengthOf(args[0]));
  return {
    read: () => read,
    stop: () => {
      for (const restore of restores.reverse()) restore();
      restores.length = 0;
    },
  };
}

/**
 * Asserts that `parse` does work linear in its input's length, counted (not timed) as the
 * characters it reads through the built-ins (`charactersRead`): one 64 KiB input against sixty-four
 * 1 KiB inputs of the same shape, the same number of characters in all (or one `largeLength`
 * input against 64 of 1/64 of it). A linear parser reads about as many characters for both (a
 * ratio near 1, at most 2 allowed for fixed costs per input); a quadratic one about 64 times more
 * for the large input. Counts are exact, so a busy machine changes nothing; the timing of the same
 * comparison is in `npm run bench -- --only ratios`.
 */
export function expectLinearWork(
  parse: (input: string) => unknown,
  inputOfLength: (length: number) => string,
  /** For inputs bounded below 64 KiB: the large length, the small one being 1/64 of it. */
  largeLength = 64 * 1024,
): void {
  const small = inputOfLength(largeLength / 64);
  const large = inputOfLength(largeLength);
  const smallRead = charactersRead(() => {
    for (let i = 0; i < 64; i += 1) parse(small);
  });
  const largeRead = charactersRead(() => parse(large));
  expect(largeRead, `characters read for one ${largeLength}-character input (${largeRead}) / for sixty-four of ${largeLength / 64} (${smallRead})`).to.be.at.most(
    2 * Math.max(smallRead, 64),
  );
}
