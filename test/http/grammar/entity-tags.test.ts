import { expect } from 'chai';
import fc from 'fast-check';
import { parseEntityTag, parseEntityTagCondition } from '../../../src/http-wire/grammar/entity-tags.js';
import type { EntityTag, EntityTagCondition } from '../../../src/domain/download-policy.js';
import { expectLinearWork } from '../../support/linearity.js';

/** RFC 9110 section 8.8.3: etagc = %x21 / %x23-7E / obs-text. */
const etagCharacter = fc.oneof(
  fc.constantFrom('!'),
  fc.integer({ min: 0x23, max: 0x7e }).map((code) => String.fromCharCode(code)),
  fc.integer({ min: 0x80, max: 0xff }).map((code) => String.fromCharCode(code)),
);
const entityTag = fc.record({
  weak: fc.boolean(),
  opaque: fc.array(etagCharacter, { maxLength: 12 }).map((characters) => `"${characters.join('')}"`),
});
/** Optional whitespace, sometimes pathologically long. */
const ows = fc.oneof(fc.constantFrom('', ' ', '\t', '  \t '), fc.integer({ min: 0, max: 2000 }).map((n) => ' '.repeat(n)));
const written = (tag: EntityTag): string => `${tag.weak ? 'W/' : ''}${tag.opaque}`;

/**
 * The reference model: RFC 9110's list rule read literally. Split at commas that are outside
 * quotes, trim OWS, drop empty elements, and each element must be one whole entity tag.
 */
function referenceCondition(value: string): EntityTagCondition | undefined {
  const trimmed = value.replace(/^[ \t]+/, '').split('').reverse().join('').replace(/^[ \t]+/, '').split('').reverse().join('');
  if (trimmed === '') return undefined;
  if (trimmed === '*') return { kind: 'any' };
  const elements: string[] = [];
  let current = '';
  let quoted = false;
  for (const character of trimmed) {
    if (character === '"') quoted = !quoted;
    if (character === ',' && !quoted) {
      elements.push(current);
      current = '';
    } else {
      current += character;
    }
  }
  elements.push(current);
  const tags: EntityTag[] = [];
  for (const element of elements) {
    const text = element.replace(/^[ \t]+/, '').split('').reverse().join('').replace(/^[ \t]+/, '').split('').reverse().join('');
    if (text === '') continue;
    const match = /^(W\/)?("[\x21\x23-\x7e\x80-\xff]*")$/.exec(text);
    if (match === null) return { kind: 'malformed' };
    tags.push({ weak: match[1] !== undefined, opaque: match[2] ?? '' });
  }
  return tags.length === 0 ? { kind: 'malformed' } : { kind: 'tags', tags };
}

describe('entity tags (src/http-wire/grammar/entity-tags.ts)', function () {
  describe('parseEntityTag', function () {
    const valid: Array<[string, EntityTag]> = [
      ['"abc"', { weak: false, opaque: '"abc"' }],
      ['W/"abc"', { weak: true, opaque: '"abc"' }],
      ['  "0x8DC2A4F5B1C2D3E"\t', { weak: false, opaque: '"0x8DC2A4F5B1C2D3E"' }],
      ['""', { weak: false, opaque: '""' }],
      ['"a,b"', { weak: false, opaque: '"a,b"' }],
      ['"\u00e9"', { weak: false, opaque: '"\u00e9"' }],
    ];
    for (const [value, tag] of valid) {
      it(`reads ${JSON.stringify(value)}`, function () {
        expect(parseEntityTag(value)).to.deep.equal(tag);
      });
    }
    for (const value of ['abc', '"abc', 'abc"', 'w/"abc"', 'W/ "abc"', '"a b"', '"a"b', '"a" "b"', '"a"x', '', 'W/', '"\u0100"']) {
      it(`refuses ${JSON.stringify(value)}`, function () {
        expect(parseEntityTag(value)).to.equal(undefined);
      });
    }
  });

  describe('parseEntityTagCondition (If-Match, If-None-Match)', function () {
    it('reads a blank value as no condition at all', function () {
      expect(parseEntityTagCondition(' \t ')).to.equal(undefined);
    });

    it('reads "*" as any representation', function () {
      expect(parseEntityTagCondition(' * ')).to.deep.equal({ kind: 'any' });
    });

    it('reads a list with empty elements and tags holding commas', function () {
      expect(parseEntityTagCondition(', "a,b" ,, W/"c",')).to.deep.equal({
        kind: 'tags',
        tags: [
          { weak: false, opaque: '"a,b"' },
          { weak: true, opaque: '"c"' },
        ],
      });
    });

    for (const value of ['"a" "b"', '*, "a"', '"a";', 'abc', ',,,', '"a", b']) {
      it(`reads ${JSON.stringify(value)} as malformed`, function () {
        expect(parseEntityTagCondition(value)).to.deep.equal({ kind: 'malformed' });
      });
    }

    it('reads any list of tags, whatever whitespace and empty elements surround them (property)', function () {
      fc.assert(
        fc.property(fc.array(fc.tuple(ows, entityTag, ows, fc.integer({ min: 1, max: 3 })), { minLength: 1, maxLength: 20 }), (parts) => {
          const value = parts.map(([before, tag, after, commas]) => `${before}${written(tag)}${after}${','.repeat(commas)}`).join('');
          expect(parseEntityTagCondition(value)).to.deep.equal({ kind: 'tags', tags: parts.map(([, tag]) => tag) });
        }),
      );
    });

    it('agrees with the reference model on arbitrary header values (property)', function () {
      const alphabet = fc.constantFrom('"', ',', ' ', '\t', 'W', '/', 'a', '*', 'x', '\u00e9', '=');
      fc.assert(
        fc.property(fc.array(alphabet, { maxLength: 40 }).map((characters) => characters.join('')), (value) => {
          expect(parseEntityTagCondition(value), JSON.stringify(value)).to.deep.equal(referenceCondition(value));
        }),
        { numRuns: 2000 },
      );
    });

    describe('on pathological input', function () {
      const shapes: Array<[string, (length: number) => string]> = [
        ['a tag, a long run of spaces, then junk', (n) => `"a"${' '.repeat(n - 4)}x`],
        ['only spaces', (n) => ' '.repeat(n)],
        ['only commas and spaces', (n) => ', '.repeat(n / 2)],
        ['many tags', (n) => '"a",'.repeat(n / 4)],
        ['an unterminated tag', (n) => `"${'a'.repeat(n - 1)}`],
      ];
      for (const [shape, inputOfLength] of shapes) {
        it(`reads a number of characters linear in the input (counted) for ${shape}`, function () {
          expectLinearWork(parseEntityTagCondition, inputOfLength);
        });
      }
    });
  });
});
