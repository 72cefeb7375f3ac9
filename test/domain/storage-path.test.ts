import { expect } from 'chai';
import { MAX_SEGMENT_LENGTH, validateStoragePath } from '../../src/domain/storage-path.js';
import { expectInvalidPath, GOOD_REQUEST_PATHS, LONGEST_PATH } from '../support/request-paths.js';

describe('validateStoragePath', () => {
  describe('when the path is safe', () => {
    for (const [, decoded] of GOOD_REQUEST_PATHS) {
      it(`returns ${JSON.stringify(decoded.slice(0, 40))} unchanged`, () => {
        expect(validateStoragePath(decoded)).to.equal(decoded);
      });
    }
  });

  describe('when the path is unsafe', () => {
    const cases: [string, string, RegExp][] = [
      ['it is empty', '', /empty/],
      ['it is too long', `${LONGEST_PATH}a`, /longer than 1024/],
      ['a segment is too long', 'a'.repeat(MAX_SEGMENT_LENGTH + 1), /Segment 1 .* longer than 255/],
      ['it has a lone high surrogate', 'a\uD800b', /surrogate/],
      ['it has a lone low surrogate', '\uDC00', /surrogate/],
      ['it has U+FFFD', 'relat\uFFFDrio.csv', /U\+FFFD/],
      ['it has a NUL', 'a\u0000.csv', /control character \(U\+0000\)/],
      ['it has a line feed', 'a\nb', /control character \(U\+000A\)/],
      ['it has a DEL', 'a\u007fb', /control character \(U\+007F\)/],
      ['it has a backslash', 'a\\b', /backslash/],
      ['it has a percent-encoded dot pair', '%2e%2e/x', /"%"/],
      ['it has a literal percent sign', '50%off.csv', /"%"/],
      ['it starts with a slash', '/a', /starts with "\/"/],
      ['it ends with a slash', 'a/', /ends with "\/"/],
      ['it has an empty segment', 'a//b', /Segment 2 .* empty/],
      ['it has a parent segment', 'a/../b', /Segment 2 .* "\.\."/],
      ['it has a current segment', './a', /Segment 1 .* "\."/],
      ['it has a segment of dots only', 'a/b/....', /Segment 3 .* "\.\.\.\."/],
      ['it has too many segments', Array.from({ length: 255 }, () => 'a').join('/'), /more than 254 segments/],
    ];
    for (const [condition, raw, message] of cases) {
      it(`throws InvalidPath saying what is wrong when ${condition}`, () => {
        expect(expectInvalidPath(() => validateStoragePath(raw)).message).to.match(message);
      });
    }
  });
});
