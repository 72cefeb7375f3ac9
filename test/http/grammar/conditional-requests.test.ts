import { expect } from 'chai';

import { parseDownloadRequest } from '../../../src/http-wire/grammar/download-request.js';
import { MAX_RANGES } from '../../../src/http-wire/grammar/range-header.js';
import { expectLinearWork } from '../../support/linearity.js';
import { decideDownload, type DownloadDecision, type DownloadedFile } from '../../../src/domain/download-policy.js';

/** A download request as its header values arrive on the wire. */
interface RawRequest {
  readonly method?: 'GET' | 'HEAD' | undefined;
  readonly ifMatch?: string | undefined;
  readonly ifNoneMatch?: string | undefined;
  readonly ifModifiedSince?: string | undefined;
  readonly ifUnmodifiedSince?: string | undefined;
  readonly range?: string | undefined;
  readonly ifRange?: string | undefined;
}

/** Well after FILE was modified, and in the same century, for RFC 850 two-digit years. */
const NOW = new Date('2026-01-01T00:00:00Z');

/** The headers parsed at the HTTP edge, then decided by the domain: the path every download takes. */
function decide(file: DownloadedFile, raw: RawRequest, now: Date = NOW): DownloadDecision {
  const headers: Record<string, string | undefined> = {
    'if-match': raw.ifMatch,
    'if-none-match': raw.ifNoneMatch,
    'if-modified-since': raw.ifModifiedSince,
    'if-unmodified-since': raw.ifUnmodifiedSince,
    range: raw.range,
    'if-range': raw.ifRange,
  };
  return decideDownload(file, parseDownloadRequest(raw.method ?? 'GET', (name) => headers[name], now), now);
}

// The .500 checks that HTTP dates, which have whole seconds, are compared with the truncated time.
const FILE: DownloadedFile = { etag: '"abc"', size: 1000, lastModified: new Date('2024-05-01T12:00:00.500Z') };
const LAST_MODIFIED = 'Wed, 01 May 2024 12:00:00 GMT';
const SECOND_BEFORE = 'Wed, 01 May 2024 11:59:59 GMT';
const SECOND_AFTER = 'Wed, 01 May 2024 12:00:01 GMT';

function buildFile(overrides: Partial<DownloadedFile> = {}): DownloadedFile {
  return { ...FILE, ...overrides };
}

function buildRequest(overrides: RawRequest = {}): RawRequest {
  return { method: 'GET', ...overrides };
}

const FULL: DownloadDecision = { kind: 'full' };
const NOT_MODIFIED: DownloadDecision = { kind: 'notModified' };

function partial(start: number, end: number): DownloadDecision {
  return { kind: 'partial', range: { start, end } };
}

function unsatisfiable(size: number): DownloadDecision {
  return { kind: 'rangeNotSatisfiable', size };
}

function expectPreconditionFailed(decision: DownloadDecision): void {
  expect(decision.kind).to.equal('preconditionFailed');
  if (decision.kind === 'preconditionFailed') expect(decision.reason).to.be.a('string').and.not.equal('');
}

describe('conditional and Range headers of a download, parsed at the edge and decided by DownloadPolicy', () => {
  describe('when the request has no conditional or Range header', () => {
    for (const method of ['GET', 'HEAD'] as const) {
      it(`decides full for ${method}`, () => {
        expect(decide(FILE, buildRequest({ method }))).to.deep.equal(FULL);
      });
    }
  });

  describe('when If-Match matches strongly', () => {
    const values = ['"abc"', '*', ' * ', '"x", "abc"', '"x","abc"', ' "x" ,  "abc" ', '"x",\t"abc"', ', "abc"'];
    for (const ifMatch of values) {
      it(`decides full for If-Match: ${ifMatch}`, () => {
        expect(decide(FILE, buildRequest({ ifMatch }))).to.deep.equal(FULL);
      });
    }

    it('decides full when the matching tag contains a comma', () => {
      const file = buildFile({ etag: '"a,b"' });
      expect(decide(file, buildRequest({ ifMatch: '"x", "a,b"' }))).to.deep.equal(FULL);
    });
  });

  describe('when If-Match does not match strongly', () => {
    const values = [
      ['another tag', '"xyz"'],
      ['the same tag marked weak', 'W/"abc"'],
      ['a list holding the tag only as weak', '"x", W/"abc"'],
      ['the tag in another case', '"ABC"'],
      ['an unquoted tag (malformed)', 'abc'],
      ['"*" inside a list (malformed)', '*, "abc"'],
      ['a lower-case weak prefix (malformed)', 'w/"abc"'],
    ];
    for (const [condition, ifMatch] of values) {
      it(`decides preconditionFailed for ${condition}`, () => {
        expectPreconditionFailed(decide(FILE, buildRequest({ ifMatch })));
      });
    }

    it('decides preconditionFailed when the current tag is weak, even for the same weak tag', () => {
      const file = buildFile({ etag: 'W/"abc"' });
      expectPreconditionFailed(decide(file, buildRequest({ ifMatch: 'W/"abc"' })));
    });

    it('decides preconditionFailed for HEAD too', () => {
      expectPreconditionFailed(decide(FILE, buildRequest({ method: 'HEAD', ifMatch: '"xyz"' })));
    });
  });

  describe('when If-Match is blank', () => {
    it('treats it as absent and decides full', () => {
      expect(decide(FILE, buildRequest({ ifMatch: '  ' }))).to.deep.equal(FULL);
    });
  });

  describe('when If-Unmodified-Since is a valid date', () => {
    const cases: [string, string, 'full' | 'preconditionFailed'][] = [
      ['equals the last modification, truncated to the second', LAST_MODIFIED, 'full'],
      ['is later than the last modification', SECOND_AFTER, 'full'],
      ['is a second before the last modification', SECOND_BEFORE, 'preconditionFailed'],
      ['is an RFC 850 date before the last modification', 'Wednesday, 01-May-24 11:59:59 GMT', 'preconditionFailed'],
      ['is an RFC 850 date equal to the last modification', 'Wednesday, 01-May-24 12:00:00 GMT', 'full'],
      ['is an asctime date before the last modification', 'Wed May  1 11:59:59 2024', 'preconditionFailed'],
      ['is an asctime date equal to the last modification', 'Wed May  1 12:00:00 2024', 'full'],
      ['has surrounding whitespace', `  ${SECOND_BEFORE} `, 'preconditionFailed'],
    ];
    for (const [condition, ifUnmodifiedSince, kind] of cases) {
      it(`decides ${kind} when the date ${condition}`, () => {
        expect(decide(FILE, buildRequest({ ifUnmodifiedSince })).kind).to.equal(kind);
      });
    }

    it('reads a two-digit RFC 850 year more than 50 years ahead as the past century', () => {
      // "94" would be 2094; RFC 9110 section 5.6.7 makes it 1994, long before the file changed.
      const request = buildRequest({ ifUnmodifiedSince: 'Sunday, 06-Nov-94 08:49:37 GMT' });
      expectPreconditionFailed(decide(FILE, request, new Date('2024-06-01T00:00:00Z')));
      expectPreconditionFailed(decide(FILE, request));
    });
  });

  describe('when If-Unmodified-Since is not a valid date', () => {
    const values = [
      'yesterday',
      '1',
      '2024-05-01T11:00:00Z',
      'Wed, 01 May 2024 11:59:59',
      'wed, 01 may 2024 11:59:59 gmt',
      'Wed, 31 Feb 2024 11:59:59 GMT',
      'Wed, 01 May 2024 24:00:00 GMT',
      `${SECOND_BEFORE}, ${SECOND_BEFORE}`,
    ];
    for (const ifUnmodifiedSince of values) {
      it(`ignores it and decides full for "${ifUnmodifiedSince}"`, () => {
        expect(decide(FILE, buildRequest({ ifUnmodifiedSince }))).to.deep.equal(FULL);
      });
    }
  });

  describe('when If-Match and If-Unmodified-Since are both present', () => {
    it('ignores If-Unmodified-Since when If-Match matches', () => {
      const request = buildRequest({ ifMatch: '"abc"', ifUnmodifiedSince: SECOND_BEFORE });
      expect(decide(FILE, request)).to.deep.equal(FULL);
    });

    it('decides preconditionFailed when If-Match fails, whatever If-Unmodified-Since says', () => {
      const request = buildRequest({ ifMatch: '"xyz"', ifUnmodifiedSince: SECOND_AFTER });
      expectPreconditionFailed(decide(FILE, request));
    });
  });

  describe('when If-None-Match matches weakly', () => {
    const values = ['"abc"', 'W/"abc"', '*', '"x", W/"abc"', ' "x" , "abc" '];
    for (const method of ['GET', 'HEAD'] as const) {
      for (const ifNoneMatch of values) {
        it(`decides notModified for ${method} with If-None-Match: ${ifNoneMatch}`, () => {
          expect(decide(FILE, buildRequest({ method, ifNoneMatch }))).to.deep.equal(NOT_MODIFIED);
        });
      }
    }

    it('decides notModified when the current tag is weak and the listed one strong', () => {
      const file = buildFile({ etag: 'W/"abc"' });
      expect(decide(file, buildRequest({ ifNoneMatch: '"abc"' }))).to.deep.equal(NOT_MODIFIED);
    });
  });

  describe('when If-None-Match does not match', () => {
    const values = ['"xyz"', '"x", "y"', 'W/"xyz"', '"ABC"', 'abc'];
    for (const ifNoneMatch of values) {
      it(`decides full for If-None-Match: ${ifNoneMatch}`, () => {
        expect(decide(FILE, buildRequest({ ifNoneMatch }))).to.deep.equal(FULL);
      });
    }
  });

  describe('when If-Modified-Since is a valid date', () => {
    const cases: [string, string, DownloadDecision][] = [
      ['equals the last modification, truncated to the second', LAST_MODIFIED, NOT_MODIFIED],
      ['is later than the last modification', SECOND_AFTER, NOT_MODIFIED],
      ['is a second before the last modification', SECOND_BEFORE, FULL],
      ['is an asctime date equal to the last modification', 'Wed May  1 12:00:00 2024', NOT_MODIFIED],
      ['is an RFC 850 date before the last modification', 'Wednesday, 01-May-24 11:59:59 GMT', FULL],
    ];
    for (const method of ['GET', 'HEAD'] as const) {
      for (const [condition, ifModifiedSince, decision] of cases) {
        it(`decides ${decision.kind} for ${method} when the date ${condition}`, () => {
          expect(decide(FILE, buildRequest({ method, ifModifiedSince }))).to.deep.equal(decision);
        });
      }
    }
  });

  describe('when If-Modified-Since is later than the current time', () => {
    const now = new Date('2024-05-01T12:00:03.900Z');

    it('ignores it and decides full', () => {
      const request = buildRequest({ ifModifiedSince: 'Wed, 01 May 2024 12:00:04 GMT' });
      expect(decide(FILE, request, now)).to.deep.equal(FULL);
    });

    it('decides notModified when the date is not after the current time', () => {
      const request = buildRequest({ ifModifiedSince: 'Wed, 01 May 2024 12:00:03 GMT' });
      expect(decide(FILE, request, now)).to.deep.equal(NOT_MODIFIED);
    });
  });

  describe('when If-Modified-Since is not a valid date', () => {
    for (const ifModifiedSince of ['never', '1', '2024-05-01T12:00:00Z', 'Wed, 01 May 2024 12:00:00 UTC']) {
      it(`ignores it and decides full for "${ifModifiedSince}"`, () => {
        expect(decide(FILE, buildRequest({ ifModifiedSince }))).to.deep.equal(FULL);
      });
    }
  });

  describe('when several conditions disagree (RFC 9110 section 13.2.2 order)', () => {
    it('decides preconditionFailed when If-Match fails, even though If-None-Match matches', () => {
      expectPreconditionFailed(decide(FILE, buildRequest({ ifMatch: '"xyz"', ifNoneMatch: '"abc"' })));
    });

    it('decides preconditionFailed when If-Unmodified-Since fails, even though If-None-Match matches', () => {
      const request = buildRequest({ ifUnmodifiedSince: SECOND_BEFORE, ifNoneMatch: '"abc"' });
      expectPreconditionFailed(decide(FILE, request));
    });

    it('decides notModified when If-None-Match matches, even though If-Modified-Since says modified', () => {
      const request = buildRequest({ ifNoneMatch: '"abc"', ifModifiedSince: SECOND_BEFORE });
      expect(decide(FILE, request)).to.deep.equal(NOT_MODIFIED);
    });

    it('decides full when If-None-Match does not match, even though If-Modified-Since says not modified', () => {
      const request = buildRequest({ ifNoneMatch: '"xyz"', ifModifiedSince: SECOND_AFTER });
      expect(decide(FILE, request)).to.deep.equal(FULL);
    });

    it('decides notModified when If-Match matches and If-None-Match matches', () => {
      const request = buildRequest({ ifMatch: '"abc"', ifNoneMatch: '"abc"' });
      expect(decide(FILE, request)).to.deep.equal(NOT_MODIFIED);
    });

    it('decides preconditionFailed rather than partial when If-Match fails and Range is valid', () => {
      expectPreconditionFailed(decide(FILE, buildRequest({ ifMatch: '"xyz"', range: 'bytes=0-9' })));
    });

    it('decides notModified rather than partial when If-None-Match matches and Range is valid', () => {
      const request = buildRequest({ ifNoneMatch: '"abc"', range: 'bytes=0-9' });
      expect(decide(FILE, request)).to.deep.equal(NOT_MODIFIED);
    });

    it('decides notModified rather than rangeNotSatisfiable when If-Modified-Since holds', () => {
      const request = buildRequest({ ifModifiedSince: LAST_MODIFIED, range: 'bytes=5000-' });
      expect(decide(FILE, request)).to.deep.equal(NOT_MODIFIED);
    });

    it('decides partial when If-Match matches and Range is valid', () => {
      const request = buildRequest({ ifMatch: '"abc"', range: 'bytes=0-9' });
      expect(decide(FILE, request)).to.deep.equal(partial(0, 9));
    });
  });

  describe('when Range selects satisfiable bytes of a GET', () => {
    const cases: [string, string, DownloadDecision][] = [
      ['a closed range', 'bytes=0-499', partial(0, 499)],
      ['the first byte', 'bytes=0-0', partial(0, 0)],
      ['the last byte', 'bytes=999-999', partial(999, 999)],
      ['an open range', 'bytes=500-', partial(500, 999)],
      ['a range past the end (clamped)', 'bytes=990-2000', partial(990, 999)],
      ['a last position beyond Number precision (clamped)', 'bytes=10-99999999999999999999', partial(10, 999)],
      ['a suffix', 'bytes=-200', partial(800, 999)],
      ['a suffix as long as the file', 'bytes=-1000', partial(0, 999)],
      ['a suffix longer than the file (whole file)', 'bytes=-5000', partial(0, 999)],
      ['an upper-case unit', 'Bytes=0-9', partial(0, 9)],
      ['leading zeros', 'bytes=007-010', partial(7, 10)],
      ['two disjoint ranges (coalesced)', 'bytes=0-1,5-6', partial(0, 6)],
      ['ranges with whitespace around them', 'bytes= 0-1 , 5-6', partial(0, 6)],
      ['ranges with tabs around them', 'bytes=\t0-1\t,\t5-6', partial(0, 6)],
      ['out-of-order ranges', 'bytes=500-599,0-99', partial(0, 599)],
      ['overlapping ranges', 'bytes=0-500,200-300', partial(0, 500)],
      ['adjacent ranges', 'bytes=0-9,10-19', partial(0, 19)],
      ['a range and a suffix', 'bytes=100-199,-100', partial(100, 999)],
      ['a range and an over-long suffix', 'bytes=900-950,-5000', partial(0, 999)],
      ['a satisfiable and an unsatisfiable range', 'bytes=0-1,2000-3000', partial(0, 1)],
      ['an unsatisfiable range before a satisfiable one', 'bytes=2000-,10-19', partial(10, 19)],
      ['a zero suffix and a satisfiable range', 'bytes=-0,10-19', partial(10, 19)],
      ['empty list elements', 'bytes=0-1,,5-6,', partial(0, 6)],
      [`${MAX_RANGES} ranges`, `bytes=${rangesOfOneByte(MAX_RANGES)}`, partial(0, 2 * (MAX_RANGES - 1))],
    ];
    for (const [condition, range, decision] of cases) {
      it(`decides ${describeDecision(decision)} for ${condition} (${abbreviate(range)})`, () => {
        expect(decide(FILE, buildRequest({ range }))).to.deep.equal(decision);
      });
    }
  });

  describe('when no range of a GET is satisfiable', () => {
    const cases: [string, string][] = [
      ['an open range starting at the size', 'bytes=1000-'],
      ['a closed range starting at the size', 'bytes=1000-2000'],
      ['a zero-length suffix', 'bytes=-0'],
      ['several unsatisfiable ranges', 'bytes=1000-1001,2000-,-0'],
      ['a first position beyond Number precision', 'bytes=99999999999999999999-'],
    ];
    for (const [condition, range] of cases) {
      it(`decides rangeNotSatisfiable with the size for ${condition} (${range})`, () => {
        expect(decide(FILE, buildRequest({ range }))).to.deep.equal(unsatisfiable(1000));
      });
    }
  });

  describe('when Range is invalid, of another unit or abusive', () => {
    const cases: [string, string][] = [
      ['another unit', 'items=0-9'],
      ['no "="', 'bytes 0-9'],
      ['no range', 'bytes='],
      ['only commas', 'bytes=,,'],
      ['a non-numeric range', 'bytes=abc'],
      ['a last position before the first', 'bytes=5-3'],
      ['a last position before the first, beyond Number precision', 'bytes=99999999999999999999-99999999999999999998'],
      ['one invalid range in a list', 'bytes=0-1,5-3'],
      ['whitespace inside a range', 'bytes=0 - 1'],
      ['a double minus', 'bytes=--5'],
      ['three positions', 'bytes=1-2-3'],
      ['a lone minus', 'bytes=-'],
      ['a hexadecimal position', 'bytes=0x10-'],
      ['a negative first position', 'bytes=-1-2'],
      ['a decimal point', 'bytes=1.5-2'],
      ['whitespace before "="', 'bytes =0-9'],
      ['an empty value', ''],
      [`more than ${MAX_RANGES} ranges`, `bytes=${rangesOfOneByte(MAX_RANGES + 1)}`],
    ];
    for (const [condition, range] of cases) {
      it(`ignores Range and decides full for ${condition} (${abbreviate(range)})`, () => {
        expect(decide(FILE, buildRequest({ range }))).to.deep.equal(FULL);
      });
    }
  });

  describe('when the request is a HEAD with Range', () => {
    for (const range of ['bytes=0-9', 'bytes=5000-', 'bytes=-0']) {
      it(`ignores Range and decides full (${range})`, () => {
        expect(decide(FILE, buildRequest({ method: 'HEAD', range }))).to.deep.equal(FULL);
      });
    }
  });

  describe('when the file is empty', () => {
    const empty = buildFile({ size: 0 });

    it('decides full without Range', () => {
      expect(decide(empty, buildRequest())).to.deep.equal(FULL);
    });

    for (const range of ['bytes=0-', 'bytes=0-0', 'bytes=-5', 'bytes=-0', 'bytes=0-9,-1']) {
      it(`decides rangeNotSatisfiable with size 0 for ${range}`, () => {
        expect(decide(empty, buildRequest({ range }))).to.deep.equal(unsatisfiable(0));
      });
    }

    it('ignores an invalid Range and decides full', () => {
      expect(decide(empty, buildRequest({ range: 'bytes=5-3' }))).to.deep.equal(FULL);
    });
  });

  describe('when If-Range holds', () => {
    const values = [
      ['the current entity tag', '"abc"'],
      ['the last modification date, truncated to the second', LAST_MODIFIED],
      ['the last modification date as an asctime date', 'Wed May  1 12:00:00 2024'],
    ];
    for (const [condition, ifRange] of values) {
      it(`decides partial when If-Range is ${condition}`, () => {
        expect(decide(FILE, buildRequest({ range: 'bytes=0-9', ifRange }))).to.deep.equal(partial(0, 9));
      });
    }

    it('decides rangeNotSatisfiable when the range is unsatisfiable', () => {
      const request = buildRequest({ range: 'bytes=5000-', ifRange: '"abc"' });
      expect(decide(FILE, request)).to.deep.equal(unsatisfiable(1000));
    });

    it('decides full when there is no Range', () => {
      expect(decide(FILE, buildRequest({ ifRange: '"abc"' }))).to.deep.equal(FULL);
    });
  });

  describe('when If-Range does not hold', () => {
    const values = [
      ['another entity tag', '"xyz"'],
      ['the current tag marked weak', 'W/"abc"'],
      ['a list of tags', '"abc", "xyz"'],
      ['a date a second before the last modification', SECOND_BEFORE],
      ['a date a second after the last modification', SECOND_AFTER],
      ['neither a tag nor a date', 'abc'],
    ];
    for (const [condition, ifRange] of values) {
      it(`ignores Range and decides full when If-Range is ${condition}`, () => {
        expect(decide(FILE, buildRequest({ range: 'bytes=0-9', ifRange }))).to.deep.equal(FULL);
      });
    }

    it('decides full rather than rangeNotSatisfiable for an unsatisfiable range', () => {
      const request = buildRequest({ range: 'bytes=5000-', ifRange: '"xyz"' });
      expect(decide(FILE, request)).to.deep.equal(FULL);
    });

    it('decides full when the current tag is weak, even for the same weak tag', () => {
      const file = buildFile({ etag: 'W/"abc"' });
      expect(decide(file, buildRequest({ range: 'bytes=0-9', ifRange: 'W/"abc"' }))).to.deep.equal(FULL);
    });
  });
});

/** `count` one-byte ranges at even offsets, in reverse order: `198-198,196-196,...,0-0` for 100. */
function rangesOfOneByte(count: number): string {
  return Array.from({ length: count }, (_, index) => 2 * (count - 1 - index))
    .map((position) => `${position}-${position}`)
    .join(',');
}

function describeDecision(decision: DownloadDecision): string {
  return decision.kind === 'partial' ? `partial ${decision.range.start}-${decision.range.end}` : decision.kind;
}

function abbreviate(value: string): string {
  return value.length > 40 ? `${value.slice(0, 37)}...` : value;
}

describe('parseDownloadRequest on pathological input (every header at once)', () => {
  it('reads a number of characters linear in the length of the headers (counted), up to the 8 KiB bound', () => {
    expectLinearWork(
      (value) => {
        const headers: Record<string, string> = {
          'if-match': `"a"${value}x`,
          'if-none-match': `"a"${value}x`,
          'if-modified-since': `Wed, 01 May 2024 12:00:00 GMT${value}x`,
          'if-unmodified-since': `Wed, 01 May 2024 12:00:00 GMT${value}x`,
          range: `bytes=0-0${value}x`,
          'if-range': `"a"${value}x`,
        };
        return parseDownloadRequest('GET', (name) => headers[name], NOW);
      },
      (n) => ' '.repeat(n),
      8128,
    );
  });
});
