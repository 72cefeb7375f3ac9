import { expect } from 'chai';
import fc from 'fast-check';
import { InvalidInstant, parseIsoInstant } from '../../src/text/iso-instant.js';

describe('parseIsoInstant', function () {
  const cases: [string, string][] = [
    ['2026-12-01', '2026-12-01T00:00:00.000Z'],
    ['2026-12-01T21:00', '2026-12-01T21:00:00.000Z'],
    ['2026-12-01T21:00:30Z', '2026-12-01T21:00:30.000Z'],
    ['2026-12-01T21:00:30.25Z', '2026-12-01T21:00:30.250Z'],
    ['2026-12-01T21:00:30.123456789Z', '2026-12-01T21:00:30.123Z'],
    ['2026-12-01T18:00:00-03:00', '2026-12-01T21:00:00.000Z'],
    ['2026-12-01 21:00', '2026-12-01T21:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    [' 2026-12-01 ', '2026-12-01T00:00:00.000Z'],
    ['0099-01-01', '0099-01-01T00:00:00.000Z'],
  ];
  for (const [text, iso] of cases) {
    it(`reads "${text}" as ${iso} (UTC when no zone is written)`, function () {
      expect(parseIsoInstant(text).toISOString()).to.equal(iso);
    });
  }

  for (const text of ['', '2026-13-01', '2026-02-29', '2026-04-31', '2026-12-01T24:00', '2026-12-01T21:60', '2026-12-01T21:00:60',
    '2026-12-01T21', '2026/12/01', '01-12-2026', '2026-12-01T21:00+0300', '2026-12-01T21:00+24:00', 'tomorrow', '2026-12-01x']) {
    it(`refuses "${text}" with a message showing an example`, function () {
      expect(() => parseIsoInstant(text)).to.throw(InvalidInstant, /ISO 8601.*2026-12-01T21:00:00Z/);
    });
  }

  it('agrees with Date for every valid UTC date-time (property)', function () {
    fc.assert(
      fc.property(fc.date({ min: new Date('1000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }), (date) => {
        expect(parseIsoInstant(date.toISOString()).getTime()).to.equal(date.getTime());
      }),
    );
  });

  it('refuses long hostile input in time linear in its length (counted as no match, not timed)', function () {
    // The length bound refuses before the pattern runs; a pattern without it would still be linear.
    expect(() => parseIsoInstant(`2026-12-01T${'0'.repeat(100_000)}`)).to.throw(InvalidInstant);
    expect(() => parseIsoInstant(' '.repeat(100_000))).to.throw(InvalidInstant);
  });
});
