import { expect } from 'chai';
import type { Options } from 'express-rate-limit';
import { RequestRefused } from '../../src/adapters/http/error-responses.js';
import { getHeapStatistics } from 'node:v8';
import { BoundedMemoryStore, MEMORY_STORE_MAX_KEYS } from '../../src/adapters/limits/memory-rate-limit-store.js';
import { VerificationQueue, verificationQueueBounds } from '../../src/adapters/http/verification-queue.js';
import { collectGarbage } from '../support/heap.js';

/** Work that runs until the test finishes it, recording when it started. */
function heldWork(log: string[], name: string): { work: () => Promise<string>; finish: () => void } {
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return {
    work: async () => {
      log.push(name);
      await done;
      return name;
    },
    finish: () => finish(),
  };
}

async function refusalOf(promise: Promise<unknown>): Promise<RequestRefused> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(RequestRefused);
    return error as RequestRefused;
  }
  throw new Error('expected a refusal');
}

/** Lets every settled promise's callbacks run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('VerificationQueue (src/adapters/http/verification-queue.ts)', function () {
  it('derives 64 waiting places per verifier and a quarter of them per address', function () {
    expect(verificationQueueBounds(1)).to.deep.equal({ capacity: 64, perAddress: 16 });
    expect(verificationQueueBounds(2)).to.deep.equal({ capacity: 128, perAddress: 32 });
  });

  it('runs at most `concurrency` at once, and starts the next waiting one when one finishes', async function () {
    const started: string[] = [];
    const queue = new VerificationQueue({ concurrency: 2, capacity: 10, perAddress: 10 });
    const jobs = ['a1', 'a2', 'a3'].map((name) => heldWork(started, name));
    const results = jobs.map((job) => queue.run('192.0.2.1', job.work));
    await settle();
    expect(started).to.deep.equal(['a1', 'a2']);
    jobs[0]?.finish();
    await settle();
    expect(started).to.deep.equal(['a1', 'a2', 'a3']);
    for (const job of jobs) job.finish();
    expect(await Promise.all(results)).to.deep.equal(['a1', 'a2', 'a3']);
  });

  it('starts the waiting verification of the address served least recently, not the flood queued first', async function () {
    const started: string[] = [];
    const queue = new VerificationQueue({ concurrency: 1, capacity: 10, perAddress: 10 });
    const flood = ['f1', 'f2', 'f3', 'f4'].map((name) => heldWork(started, name));
    const floodResults = flood.map((job) => queue.run('198.51.100.7', job.work));
    const quiet = heldWork(started, 'q1');
    const other = heldWork(started, 'o1');
    const quietResult = queue.run('203.0.113.1', quiet.work);
    const otherResult = queue.run('203.0.113.2', other.work);
    await settle();
    for (const job of [...flood, quiet, other]) job.finish();
    await Promise.all([...floodResults, quietResult, otherResult]);
    expect(started).to.deep.equal(['f1', 'q1', 'o1', 'f2', 'f3', 'f4']);
  });

  it('refuses at once with 429 rate_limited and Retry-After an address that holds its share, running or waiting', async function () {
    const started: string[] = [];
    const refused: string[] = [];
    const queue = new VerificationQueue({ concurrency: 1, capacity: 10, perAddress: 2, onRefused: (reason) => refused.push(reason) });
    const jobs = ['a1', 'a2'].map((name) => heldWork(started, name));
    const results = jobs.map((job) => queue.run('192.0.2.1', job.work));
    const refusal = await refusalOf(queue.run('192.0.2.1', heldWork(started, 'a3').work));
    expect(refusal.code).to.equal('rate_limited');
    expect(refusal.details.retryAfterSeconds).to.equal(1);
    expect(refused).to.deep.equal(['address_share']);
    // Another address still gets a place.
    const elsewhere = heldWork(started, 'b1');
    const elsewhereResult = queue.run('192.0.2.2', elsewhere.work);
    for (const job of [...jobs, elsewhere]) job.finish();
    await Promise.all([...results, elsewhereResult]);
    // b1's address had not been served yet: it goes before a2.
    expect(started).to.deep.equal(['a1', 'b1', 'a2']);
  });

  it('refuses at once with 503 limits_unavailable and Retry-After once `capacity` verifications wait, from however many addresses', async function () {
    const started: string[] = [];
    const waiting: number[] = [];
    const queue = new VerificationQueue({ concurrency: 1, capacity: 2, perAddress: 5, onWaiting: (count) => waiting.push(count) });
    const jobs = ['a', 'b', 'c'].map((name) => heldWork(started, name));
    const results = jobs.map((job, index) => queue.run(`192.0.2.${index + 1}`, job.work));
    const refusal = await refusalOf(queue.run('192.0.2.9', heldWork(started, 'd').work));
    expect(refusal.code).to.equal('limits_unavailable');
    expect(refusal.details.retryAfterSeconds).to.equal(1);
    for (const job of jobs) job.finish();
    await Promise.all(results);
    expect(started).to.deep.equal(['a', 'b', 'c']);
    expect(waiting).to.deep.equal([1, 2, 1, 0]);
  });

  it('forgets an address once it holds no place, so the addresses remembered stay bounded', async function () {
    const queue = new VerificationQueue({ concurrency: 1, capacity: 1, perAddress: 1 });
    for (let index = 0; index < 100; index += 1) await queue.run(`192.0.2.${index}`, async () => index);
    // Each address held one place and gave it back: a new request from the first is admitted again.
    expect(await queue.run('192.0.2.0', async () => 'again')).to.equal('again');
  });
});

describe('BoundedMemoryStore (src/adapters/limits/memory-rate-limit-store.ts)', function () {
  it('keeps at most its bound of keys, forgetting the one counted least recently', async function () {
    const store = new BoundedMemoryStore(3);
    store.init({ windowMs: 60_000 } as Options);
    for (const key of ['a', 'b', 'c']) await store.increment(key);
    await store.increment('a');
    await store.increment('d');
    expect(store.size).to.equal(3);
    expect(await store.get('b')).to.equal(undefined);
    expect((await store.get('a'))?.totalHits).to.equal(2);
    expect((await store.get('d'))?.totalHits).to.equal(1);
  });

  it('sets aside no memory for its bound: ten empty stores of 100,000 keys take well under 1 MB of heap (lru-cache with max took 30-40 MB)', async function () {
    collectGarbage();
    const before = getHeapStatistics().used_heap_size;
    const stores = Array.from({ length: 10 }, () => {
      const store = new BoundedMemoryStore(MEMORY_STORE_MAX_KEYS);
      store.init({ windowMs: 60_000 } as Options);
      return store;
    });
    collectGarbage();
    const grown = getHeapStatistics().used_heap_size - before;
    expect(stores.every((store) => store.size === 0)).to.equal(true);
    expect(grown).to.be.below(1024 * 1024);
  });

  it('keeps 1,000 keys when a caller brings 100,000 (the bound of the test store)', async function () {
    const store = new BoundedMemoryStore(1000);
    store.init({ windowMs: 60_000 } as Options);
    for (let index = 0; index < 100_000; index += 1) await store.increment(`unregistered:${index}`);
    expect(store.size).to.equal(1000);
  });

  it('takes a request back without going below 0, and leaves a forgotten key forgotten', async function () {
    const store = new BoundedMemoryStore(10);
    store.init({ windowMs: 60_000 } as Options);
    await store.increment('a');
    await store.decrement('a');
    await store.decrement('a');
    expect((await store.get('a'))?.totalHits).to.equal(0);
    await store.decrement('never-counted');
    expect(await store.get('never-counted')).to.equal(undefined);
    expect(store.size).to.equal(1);
  });
});
