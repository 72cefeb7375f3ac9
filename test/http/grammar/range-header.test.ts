import { expect } from 'chai';
import fc from 'fast-check';
import { MAX_RANGES, parseRangeHeader } from '../../../src/http-wire/grammar/range-header.js';
import type { RangeSpec } from '../../../src/domain/download-policy.js';
import { expectLinearWork } from '../../support/linearity.js';

/** The reference model: RFC 9110 section 14.1.1's grammar, element by element, with BigInt arithmetic. */
function referenceRange(value: string): RangeSpec[] | undefined {
  const equals = value.indexOf('=');
  if (equals === -1 || value.slice(0, equals).toLowerCase() !== 'bytes') return undefined;
  const elements = value
    .slice(equals + 1)
    .split(',')
    .map((element) => element.replace(/^[ \t]*/, '').split('').reverse().join('').replace(/^[ \t]*/, '').split('').reverse().join(''))
    .filter((element) => element !== '');
  if (elements.length === 0 || elements.length > MAX_RANGES) return undefined;
  const specs: RangeSpec[] = [];
  for (const element of elements) {
    const suffix = /^-([0-9]+)$/.exec(element);
    if (suffix !== null) {
      specs.push({ kind: 'suffix', length: Number(suffix[1]) });
      continue;
    }
    const int = /^([0-9]+)-([0-9]*)$/.exec(element);
    if (int === null) return undefined;
    const [, first = '', last = ''] = int;
    if (last === '') {
      specs.push({ kind: 'int', first: Number(first) });
      continue;
    }
    if (BigInt(last) < BigInt(first)) return undefined;
    specs.push({ kind: 'int', first: Number(first), last: Number(last) });
  }
  return specs;
}

describe('the Range header (src/http-wire/grammar/range-header.ts)', function () {
  const cases: Array<[string, RangeSpec[] | undefined]> = [
    ['bytes=0-99', [{ kind: 'int', first: 0, last: 99 }]],
    ['bytes=100-', [{ kind: 'int', first: 100 }]],
    ['bytes=-500', [{ kind: 'suffix', length: 500 }]],
    ['BYTES=0-0', [{ kind: 'int', first: 0, last: 0 }]],
    ['bytes= 0-1 ,\t, 5-6 ', [{ kind: 'int', first: 0, last: 1 }, { kind: 'int', first: 5, last: 6 }]],
    ['bytes=5-3', undefined],
    ['bytes=0 -1', undefined],
    ['bytes=a-b', undefined],
    ['bytes=--1', undefined],
    ['bytes=', undefined],
    ['bytes=,,', undefined],
    ['items=0-1', undefined],
    ['bytes 0-1', undefined],
    ['bytes =0-1', undefined],
    ['bytes=99999999999999999999-99999999999999999998', undefined],
    [`bytes=${'0,'.repeat(MAX_RANGES)}`, undefined],
  ];
  for (const [value, specs] of cases) {
    it(`reads ${JSON.stringify(value.slice(0, 50))} as ${specs === undefined ? 'to be ignored' : JSON.stringify(specs)}`, function () {
      expect(parseRangeHeader(value)).to.deep.equal(specs);
    });
  }

  it(`keeps up to ${MAX_RANGES} ranges and ignores a set of ${MAX_RANGES + 1}`, function () {
    const list = (count: number): string => `bytes=${Array.from({ length: count }, (_, i) => `${2 * i}-${2 * i}`).join(',')}`;
    expect(parseRangeHeader(list(MAX_RANGES))).to.have.length(MAX_RANGES);
    expect(parseRangeHeader(list(MAX_RANGES + 1))).to.equal(undefined);
  });

  it('agrees with the reference model on arbitrary values, huge numbers and whitespace included (property)', function () {
    const digits = fc.oneof(fc.nat({ max: 2000 }).map(String), fc.stringMatching(/^[0-9]{15,40}$/));
    const element = fc.oneof(
      fc.tuple(digits, fc.constantFrom('-'), fc.option(digits, { nil: '' })).map((parts) => parts.join('')),
      digits.map((n) => `-${n}`),
      fc.constantFrom('', ' ', '\t', 'x', '-', '5-3', ' 1-2 ', '1 - 2'),
    );
    const value = fc
      .tuple(fc.constantFrom('bytes=', 'Bytes=', 'bytes =', 'items='), fc.array(element, { maxLength: 8 }))
      .map(([unit, elements]) => unit + elements.join(','));
    fc.assert(
      fc.property(value, (header) => {
        expect(parseRangeHeader(header), header).to.deep.equal(referenceRange(header));
      }),
      { numRuns: 3000 },
    );
  });

  describe('on pathological input', function () {
    const shapes: Array<[string, (length: number) => string]> = [
      ['a range followed by a long run of spaces and junk', (n) => `bytes=0-0${' '.repeat(n - 10)}x`],
      ['a long run of spaces inside the set', (n) => `bytes=${' '.repeat(n - 10)}0-0`],
      ['a huge number', (n) => `bytes=${'9'.repeat(n - 8)}-1`],
      ['many commas', (n) => `bytes=${','.repeat(n - 6)}`],
    ];
    for (const [shape, inputOfLength] of shapes) {
      it(`reads a number of characters linear in the input (counted) for ${shape}`, function () {
        expectLinearWork(parseRangeHeader, inputOfLength);
      });
    }
  });
});
