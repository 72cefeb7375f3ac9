import { expect } from 'chai';
import { charactersRead, expectLinearWork } from '../../support/linearity.js';

/*
 * The count the grammar's linearity tests rest on: it must see a parser that rescans its input,
 * and must not blame one that reads each character once.
 */
describe('counting the characters a parser reads (test/support/linearity.ts)', function () {
  const quadraticTrim = (value: string): string => {
    // Drops one trailing space at a time, copying the rest each time: issue 7's kind of parser.
    let rest = value;
    while (rest.endsWith(' ')) rest = rest.slice(0, -1);
    return rest;
  };
  const linearTrim = (value: string): string => {
    let end = value.length;
    while (end > 0 && value.charCodeAt(end - 1) === 0x20) end -= 1;
    return value.slice(0, end);
  };
  const rescanningSearch = (value: string): number => {
    // A search for "x" from every position: quadratic when there is none.
    let found = 0;
    for (let from = 0; from < value.length; from += 1) if (value.indexOf('x', from) !== -1) found += 1;
    return found;
  };

  it('counts one character per charCodeAt and the characters copied by slice, exactly', function () {
    expect(charactersRead(() => linearTrim('ab   '))).to.equal(4 + 2);
  });

  it('counts the subject of each regular-expression match, test() included', function () {
    expect(charactersRead(() => /^a+$/.test('aaaa'))).to.equal(4 + 1);
  });

  it('leaves the built-ins as they were, even when the action throws', function () {
    const charCodeAt = String.prototype.charCodeAt;
    const exec = RegExp.prototype.exec;
    expect(() =>
      charactersRead(() => {
        throw new Error('refused');
      }),
    ).to.throw('refused');
    expect(String.prototype.charCodeAt).to.equal(charCodeAt);
    expect(RegExp.prototype.exec).to.equal(exec);
  });

  it('passes a parser that reads each character once (counted)', function () {
    expectLinearWork(linearTrim, (n) => `a${' '.repeat(n - 1)}`);
  });

  it('fails a trim that copies its input once per trailing space (counted)', function () {
    expect(() => expectLinearWork(quadraticTrim, (n) => `a${' '.repeat(n - 1)}`, 8192)).to.throw(/characters read/);
  });

  it('fails a search repeated from every position (counted)', function () {
    expect(() => expectLinearWork(rescanningSearch, (n) => 'a'.repeat(n), 8192)).to.throw(/characters read/);
  });
});
