import { expect } from 'chai';
import fc from 'fast-check';
import { parseHttpDate } from '../../../src/http-wire/grammar/http-date.js';
import { expectLinearWork } from '../../support/linearity.js';

describe('HTTP dates (src/http-wire/grammar/http-date.ts)', function () {
  const expected = Date.UTC(1994, 10, 6, 8, 49, 37);

  describe('the three formats RFC 9110 section 5.6.7 requires recipients to accept', function () {
    for (const value of ['Sun, 06 Nov 1994 08:49:37 GMT', 'Sunday, 06-Nov-94 08:49:37 GMT', 'Sun Nov  6 08:49:37 1994', '  Sun, 06 Nov 1994 08:49:37 GMT\t']) {
      it(`reads ${JSON.stringify(value)}`, function () {
        expect(parseHttpDate(value, 2024)?.getTime()).to.equal(expected);
      });
    }
  });

  describe('RFC 850 two-digit years', function () {
    it('places a year more than 50 years ahead in the past century', function () {
      expect(parseHttpDate('Monday, 01-Jan-80 00:00:00 GMT', 2026)?.getUTCFullYear()).to.equal(1980);
    });

    it('places a year up to 50 years ahead in the current century', function () {
      expect(parseHttpDate('Friday, 01-Jan-60 00:00:00 GMT', 2026)?.getUTCFullYear()).to.equal(2060);
    });
  });

  describe('values that are not HTTP dates', function () {
    const values = [
      '1',
      'now',
      '2024-05-01T12:00:00Z',
      'Sun, 06 Nov 1994 08:49:37 UTC',
      'sun, 06 Nov 1994 08:49:37 GMT',
      'Sun, 31 Feb 1994 08:49:37 GMT',
      'Sun, 06 Nov 1994 24:00:00 GMT',
      'Sun,  06 Nov 1994 08:49:37 GMT',
      `Sun, 06 Nov 1994 08:49:37 GMT${' '.repeat(100)}x`,
    ];
    for (const value of values) {
      it(`refuses ${JSON.stringify(value.slice(0, 40))}`, function () {
        expect(parseHttpDate(value, 2024)).to.equal(undefined);
      });
    }
  });

  it('reads back every date that Date#toUTCString writes, to the second (property)', function () {
    fc.assert(
      fc.property(fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }), (date) => {
        const wholeSeconds = Math.floor(date.getTime() / 1000) * 1000;
        expect(parseHttpDate(date.toUTCString(), 2026)?.getTime()).to.equal(wholeSeconds);
      }),
    );
  });

  describe('on pathological input', function () {
    it('reads a number of characters linear in the input (counted) for a date followed by a long run of spaces and junk', function () {
      expectLinearWork((value) => parseHttpDate(value, 2026), (n) => `Sun, 06 Nov 1994 08:49:37 GMT${' '.repeat(n - 30)}`.slice(0, n - 1) + 'x');
    });

    it('reads a number of characters linear in the input (counted) for spaces only', function () {
      expectLinearWork((value) => parseHttpDate(value, 2026), (n) => ' '.repeat(n));
    });
  });
});
