import { expect } from 'chai';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { BlobStore } from '../../src/domain/ports.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { charactersReadDuring } from '../support/linearity.js';

/*
 * The attack of issue 7: conditional and Range headers with long runs of inner whitespace once cost
 * a second of CPU each (a quadratic trim), before the rate limiter. Each now costs the work of a
 * plain request and a read of the header: one over the 8 KiB bound is refused with 431 unread, one
 * under it is parsed in linear time. Counted, not timed: the characters the whole request makes
 * this process's JavaScript read (the gateway's and the test's own; `charactersReadDuring`), and
 * the calls the gateway makes to storage. The timing of the same comparison is in
 * `npm run bench -- --only ratios`.
 */

/**
 * Characters read per character of the header, beyond what a plain request reads. Several layers
 * read the header a few times each (the parse, the log, the routing; 4 to 7 times in all when
 * this was written); a quadratic trim of 8,000 spaces would read some 32 million characters, 4,000
 * per character of the header.
 */
const readsPerHeaderCharacter = 16;

/** The fewest characters read in three runs of `action`: the first run of a kind may compile a contract validator. */
async function fewestCharactersRead(action: () => Promise<void>): Promise<number> {
  let fewest = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 3; run += 1) fewest = Math.min(fewest, await charactersReadDuring(action));
  return fewest;
}

/** `store` with every call to it counted in `calls`, by method name. */
function countingStore(store: BlobStore, calls: string[]): BlobStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(property));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

describe('conditional and Range headers full of whitespace', function () {
  this.timeout(60_000);
  let gateway: TestGateway;
  const storageCalls: string[] = [];

  before(async function () {
    const memory = new MemoryBlobStore();
    memory.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'data/a.csv' })]));
    memory.put('data/a.csv', 'a,b\n1,2\n');
    const store = countingStore(memory, storageCalls);
    gateway = await startGateway({ store, clients: [{ clientId: 'acme', secret: 'acme-secret-acme-secret' }], env: { DOWNLOAD_RATE_LIMIT: '100000' } });
    await gateway.get('acme', '/download/A');
  });

  after(async function () {
    await gateway?.close();
  });

  const headers = (spaces: number): Array<[string, string]> => {
    const run = ' '.repeat(spaces);
    return [
      ['if-none-match', `"a"${run}x`],
      ['range', `bytes=0-0${run}x`],
      ['if-modified-since', `Wed, 01 May 2024 12:00:00 GMT${run}x`],
      ['if-match', `"a"${run}x`],
      ['if-range', `"a"${run}x`],
    ];
  };

  it('answers 431 headers_too_large on both download routes, GET and HEAD, for a header over 8 KiB', async function () {
    const long = { 'if-none-match': `"a"${' '.repeat(9000)}"b"` };
    for (const [path, method] of [
      ['/download/A', 'GET'],
      ['/download/A', 'HEAD'],
      ['/data/a.csv', 'GET'],
      ['/data/a.csv', 'HEAD'],
    ] as const) {
      const response = await gateway.get('acme', path, long, method);
      expect(response.status, `${method} ${path}`).to.equal(431);
      if (method === 'GET') expect(JSON.parse(response.body.toString()).code).to.equal('headers_too_large');
    }
  });

  for (const [spaces, expected] of [
    [15_000, 431],
    [8_000, undefined],
  ] as const) {
    for (const [name, value] of headers(spaces)) {
      it(`answers ${name} with ${spaces} inner spaces ${expected === undefined ? '' : `(${expected}) `}with no more storage calls than a plain request and at most ${readsPerHeaderCharacter} characters read per character of the header (counted)`, async function () {
        const plain = async (): Promise<void> => {
          expect((await gateway.get('acme', '/download/A')).status).to.equal(200);
        };
        const hostile = async (): Promise<void> => {
          const response = await gateway.get('acme', '/download/A', { [name]: value });
          if (expected !== undefined) expect(response.status).to.equal(expected);
          else expect(response.status).to.be.oneOf([200, 412]);
        };
        const plainRead = await fewestCharactersRead(plain);
        const hostileRead = await fewestCharactersRead(hostile);
        storageCalls.length = 0;
        await plain();
        const plainCalls = storageCalls.splice(0);
        await hostile();
        const hostileCalls = storageCalls.splice(0);

        expect(hostileCalls.length, `storage calls with the header (${hostileCalls.join(', ')}) and without (${plainCalls.join(', ')})`).to.be.at.most(plainCalls.length);
        expect(hostileRead - plainRead, `characters read with the header (${hostileRead}) beyond those without (${plainRead}), for a ${value.length}-character header`).to.be.at.most(
          readsPerHeaderCharacter * value.length,
        );
      });
    }
  }
});
