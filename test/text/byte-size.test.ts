import { expect } from 'chai';
import fc from 'fast-check';
import { formatByteSize, InvalidByteSize, parseByteSize } from '../../src/text/byte-size.js';

describe('parseByteSize', function () {
  const cases: [string, number][] = [
    ['0', 0],
    ['1048576', 1048576],
    ['512B', 512],
    ['10 MiB', 10 * 1024 ** 2],
    ['10MiB', 10 * 1024 ** 2],
    ['1.5GiB', 1.5 * 1024 ** 3],
    ['2 TiB', 2 * 1024 ** 4],
    ['4KiB', 4096],
  ];
  for (const [text, bytes] of cases) {
    it(`reads "${text}" as ${bytes} bytes`, function () {
      expect(parseByteSize(text)).to.equal(bytes);
    });
  }

  for (const text of ['', '-1', '10 MB', '10 GB', '10 mib', '1e9', '0.1KiB', '1.5', 'ten', '10  MiB', '99999999999 TiB', '__proto__', 'constructor']) {
    it(`refuses "${text}"`, function () {
      expect(() => parseByteSize(text)).to.throw(InvalidByteSize);
    });
  }

  it('reads N B, N KiB and N MiB as N times the unit, for any whole N (property)', function () {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 30 }), fc.constantFrom('B', 'KiB', 'MiB'), (count, unit) => {
        const factor = { B: 1, KiB: 1024, MiB: 1024 ** 2 }[unit];
        expect(parseByteSize(`${count}${unit}`)).to.equal(count * factor);
      }),
    );
  });

  it('formats a count in the largest readable binary unit', function () {
    expect(formatByteSize(512)).to.equal('512 B');
    expect(formatByteSize(10 * 1024 ** 2)).to.equal('10 MiB');
    expect(formatByteSize(9.5 * 1024 ** 3)).to.equal('9.5 GiB');
  });
});
