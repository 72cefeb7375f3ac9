import { expect } from 'chai';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';

/*
 * The attack of issue 7: conditional and Range headers with long runs of inner whitespace once cost
 * a second of CPU each (a quadratic trim), before the rate limiter. Each is now answered in the same
 * order of time as a plain request: one over the 8 KiB bound is refused with 431 unread, one under
 * it is parsed in linear time. Measured as medians in one run, compared as a ratio.
 */

const runs = 21;

/**
 * The median times of two actions, run alternately, so that whatever else loads the machine
 * meanwhile weighs on both alike.
 */
async function medians(first: () => Promise<void>, second: () => Promise<void>): Promise<[number, number]> {
  const times: [number[], number[]] = [[], []];
  const timed = async (action: () => Promise<void>, into: number[]): Promise<void> => {
    const start = process.hrtime.bigint();
    await action();
    into.push(Number(process.hrtime.bigint() - start) / 1e6);
  };
  for (let i = 0; i < runs; i += 1) {
    await timed(first, times[0]);
    await timed(second, times[1]);
  }
  const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
  return [median(times[0]), median(times[1])];
}

describe('conditional and Range headers full of whitespace', function () {
  this.timeout(60_000);
  let gateway: TestGateway;

  before(async function () {
    const store = new MemoryBlobStore();
    store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'data/a.csv' })]));
    store.put('data/a.csv', 'a,b\n1,2\n');
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
      it(`answers ${name} with ${spaces} inner spaces ${expected === undefined ? '' : `(${expected}) `}within 3x of a plain request's time`, async function () {
        const [plain, hostile] = await medians(
          async () => {
            expect((await gateway.get('acme', '/download/A')).status).to.equal(200);
          },
          async () => {
            const response = await gateway.get('acme', '/download/A', { [name]: value });
            if (expected !== undefined) expect(response.status).to.equal(expected);
            else expect(response.status).to.be.oneOf([200, 412]);
          },
        );
        expect(hostile / plain, `median ${hostile.toFixed(2)} ms with the header, ${plain.toFixed(2)} ms without`).to.be.below(3);
      });
    }
  }
});
