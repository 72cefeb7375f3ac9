import { expect } from 'chai';
import { decodeRequestPath } from '../../../src/http-wire/grammar/request-path.js';
import { expectLinearWork } from '../../support/linearity.js';
import { expectInvalidPath, GOOD_REQUEST_PATHS, HOSTILE_REQUEST_PATHS } from '../../support/request-paths.js';

describe('decodeRequestPath', () => {
  describe('when the request path is hostile', () => {
    for (const [condition, raw] of HOSTILE_REQUEST_PATHS) {
      it(`throws InvalidPath for ${condition} (${JSON.stringify(raw.slice(0, 24))})`, () => {
        expectInvalidPath(() => decodeRequestPath(raw));
      });
    }
  });

  describe('when the request path is safe', () => {
    for (const [raw, decoded] of GOOD_REQUEST_PATHS) {
      it(`returns ${JSON.stringify(decoded.slice(0, 40))} for ${JSON.stringify(raw.slice(0, 40))}`, () => {
        expect(decodeRequestPath(raw)).to.equal(decoded);
      });
    }
  });

  describe('when the path has an encoded separator', () => {
    it('says so in the message', () => {
      expect(expectInvalidPath(() => decodeRequestPath('a%2fb')).message).to.match(/encoded "\/"/);
    });
  });

  describe('when the escape is malformed', () => {
    it('says so in the message', () => {
      expect(expectInvalidPath(() => decodeRequestPath('%zz')).message).to.match(/malformed/);
    });
  });
});


describe('decodeRequestPath on pathological input', () => {
  const attempt = (raw: string): void => {
    try {
      decodeRequestPath(raw);
    } catch {
      // Refused, as it should be: only the work done matters here.
    }
  };
  for (const [shape, inputOfLength] of [
    ['dots and slashes', (n: number) => './'.repeat(n / 2)],
    ['escapes', (n: number) => '%41'.repeat(n / 3)],
    ['dots and spaces in one segment', (n: number) => `${'. '.repeat(n / 2 - 1)}x`],
    ['a malformed escape at the end', (n: number) => `${'a'.repeat(n - 1)}%`],
  ] as const) {
    it(`reads a number of characters linear in the input (counted) for ${shape}`, () => {
      expectLinearWork(attempt, inputOfLength);
    });
  }
});
