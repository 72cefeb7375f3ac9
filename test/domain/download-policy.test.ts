import { expect } from 'chai';
import fc from 'fast-check';
import {
  decideDownload,
  type DownloadDecision,
  type DownloadedFile,
  type DownloadRequest,
  type EntityTag,
  type EntityTagCondition,
  type IfRangeCondition,
  type RangeSpec,
} from '../../src/domain/download-policy.js';

/*
 * DownloadPolicy decides from parsed values; the wire grammar is tested in test/http/grammar.
 * The .500 checks that dates, which HTTP gives in whole seconds, are compared at that precision.
 */
const FILE: DownloadedFile = { etag: '"abc"', size: 1000, lastModified: new Date('2024-05-01T12:00:00.500Z') };
const NOW = new Date('2026-01-01T00:00:00Z');
const strong = (opaque: string): EntityTag => ({ weak: false, opaque: `"${opaque}"` });
const weak = (opaque: string): EntityTag => ({ weak: true, opaque: `"${opaque}"` });
const tags = (...list: EntityTag[]): EntityTagCondition => ({ kind: 'tags', tags: list });
const get = (request: Omit<DownloadRequest, 'method'> = {}): DownloadRequest => ({ method: 'GET', ...request });
const decide = (request: DownloadRequest, file: DownloadedFile = FILE, now: Date = NOW): DownloadDecision => decideDownload(file, request, now);
const second = (offset: number): Date => new Date(Date.UTC(2024, 4, 1, 12, 0, offset));

describe('DownloadPolicy (src/domain/download-policy.ts)', function () {
  describe('RFC 9110 section 13.2.2 order: 412, then 304, then Range', function () {
    it('answers 412 before 304 when If-Match fails and If-None-Match matches', function () {
      expect(decide(get({ ifMatch: tags(strong('x')), ifNoneMatch: tags(strong('abc')) })).kind).to.equal('preconditionFailed');
    });

    it('answers 304 before a Range when If-None-Match matches', function () {
      expect(decide(get({ ifNoneMatch: tags(weak('abc')), range: [{ kind: 'int', first: 0, last: 9 }] }))).to.deep.equal({ kind: 'notModified' });
    });

    it('ignores If-Unmodified-Since when If-Match is present (section 13.1.4)', function () {
      expect(decide(get({ ifMatch: { kind: 'any' }, ifUnmodifiedSince: second(-10) }))).to.deep.equal({ kind: 'full' });
    });

    it('ignores If-Modified-Since when If-None-Match is present (section 13.1.3)', function () {
      expect(decide(get({ ifNoneMatch: tags(strong('x')), ifModifiedSince: second(10) }))).to.deep.equal({ kind: 'full' });
    });
  });

  describe('entity tag comparison (section 8.8.3.2)', function () {
    it('fails If-Match for a weak tag, however equal (strong comparison)', function () {
      expect(decide(get({ ifMatch: tags(weak('abc')) })).kind).to.equal('preconditionFailed');
    });

    it('fails If-Match that is malformed, and lets a malformed If-None-Match through', function () {
      expect(decide(get({ ifMatch: { kind: 'malformed' } })).kind).to.equal('preconditionFailed');
      expect(decide(get({ ifNoneMatch: { kind: 'malformed' } })).kind).to.equal('full');
    });

    it('matches If-None-Match weakly, a weak current tag included', function () {
      expect(decide(get({ ifNoneMatch: tags(strong('abc')) }), { ...FILE, etag: 'W/"abc"' }).kind).to.equal('notModified');
    });
  });

  describe('dates', function () {
    it('compares the file time truncated to the second', function () {
      expect(decide(get({ ifModifiedSince: second(0) })).kind).to.equal('notModified');
      expect(decide(get({ ifUnmodifiedSince: second(0) })).kind).to.equal('full');
      expect(decide(get({ ifUnmodifiedSince: second(-1) })).kind).to.equal('preconditionFailed');
    });

    it('ignores an If-Modified-Since later than the current time (section 13.1.3)', function () {
      expect(decide(get({ ifModifiedSince: second(10) }), FILE, second(5)).kind).to.equal('full');
    });
  });

  describe('ranges', function () {
    it('answers one covering range for several, and 416 with the size when none is satisfiable', function () {
      expect(decide(get({ range: [{ kind: 'int', first: 50, last: 59 }, { kind: 'int', first: 0, last: 9 }] }))).to.deep.equal({ kind: 'partial', range: { start: 0, end: 59 } });
      expect(decide(get({ range: [{ kind: 'int', first: 1000 }, { kind: 'suffix', length: 0 }] }))).to.deep.equal({ kind: 'rangeNotSatisfiable', size: 1000 });
    });

    it('honours a Range only for GET, and only when If-Range holds', function () {
      const range: RangeSpec[] = [{ kind: 'int', first: 0, last: 9 }];
      expect(decide({ method: 'HEAD', range }).kind).to.equal('full');
      expect(decide(get({ range, ifRange: { kind: 'tag', tag: strong('abc') } })).kind).to.equal('partial');
      expect(decide(get({ range, ifRange: { kind: 'tag', tag: weak('abc') } })).kind).to.equal('full');
      expect(decide(get({ range, ifRange: { kind: 'date', date: second(0) } })).kind).to.equal('partial');
      expect(decide(get({ range, ifRange: { kind: 'date', date: second(1) } })).kind).to.equal('full');
      expect(decide(get({ range, ifRange: { kind: 'malformed' } })).kind).to.equal('full');
    });
  });

  describe('against a reference model that enumerates the bytes each range selects (property)', function () {
    /**
     * RFC 9110 section 13.2.2 read step by step, with ranges resolved as the set of byte positions
     * they select in the file: a different way to compute the same answer.
     */
    function reference(file: DownloadedFile, request: DownloadRequest, now: Date): DownloadDecision {
      const current = file.etag.startsWith('W/') ? weakTag(file.etag.slice(2)) : strongTag(file.etag);
      const lastModified = Math.floor(file.lastModified.getTime() / 1000) * 1000;
      const matches = (condition: EntityTagCondition, strongly: boolean): boolean =>
        condition.kind === 'any' ||
        (condition.kind === 'tags' &&
          condition.tags.some((tag) => tag.opaque === current.opaque && (!strongly || (!tag.weak && !current.weak))));
      if (request.ifMatch !== undefined) {
        if (!matches(request.ifMatch, true)) return { kind: 'preconditionFailed', reason: '' };
      } else if (request.ifUnmodifiedSince !== undefined && lastModified > request.ifUnmodifiedSince.getTime()) {
        return { kind: 'preconditionFailed', reason: '' };
      }
      if (request.ifNoneMatch !== undefined) {
        if (matches(request.ifNoneMatch, false)) return { kind: 'notModified' };
      } else if (request.ifModifiedSince !== undefined && request.ifModifiedSince <= now && lastModified <= request.ifModifiedSince.getTime()) {
        return { kind: 'notModified' };
      }
      if (request.method === 'HEAD' || request.range === undefined) return { kind: 'full' };
      const ifRange = request.ifRange;
      if (ifRange !== undefined) {
        const holds =
          (ifRange.kind === 'tag' && !ifRange.tag.weak && !current.weak && ifRange.tag.opaque === current.opaque) ||
          (ifRange.kind === 'date' && ifRange.date.getTime() === lastModified);
        if (!holds) return { kind: 'full' };
      }
      const selected = new Set<number>();
      for (let position = 0; position < file.size; position += 1) {
        for (const spec of request.range) {
          const inside =
            spec.kind === 'suffix' ? spec.length > 0 && position >= file.size - spec.length : position >= spec.first && (spec.last === undefined || position <= spec.last);
          if (inside) selected.add(position);
        }
      }
      if (selected.size === 0) return { kind: 'rangeNotSatisfiable', size: file.size };
      return { kind: 'partial', range: { start: Math.min(...selected), end: Math.max(...selected) } };
    }
    const strongTag = (etag: string): EntityTag => ({ weak: false, opaque: etag });
    const weakTag = (etag: string): EntityTag => ({ weak: true, opaque: etag });

    const opaque = fc.constantFrom('"a"', '"b"', '""');
    const tag = fc.record({ weak: fc.boolean(), opaque });
    const condition: fc.Arbitrary<EntityTagCondition> = fc.oneof(
      fc.constant({ kind: 'any' } as const),
      fc.constant({ kind: 'malformed' } as const),
      fc.array(tag, { minLength: 1, maxLength: 5 }).map((list) => ({ kind: 'tags', tags: list }) as const),
    );
    const base = Date.UTC(2024, 4, 1, 12, 0, 0);
    const date = fc.integer({ min: -3, max: 3 }).map((offset) => new Date(base + offset * 1000));
    const position = fc.oneof(fc.nat({ max: 80 }), fc.constant(1e20), fc.constant(Number.MAX_SAFE_INTEGER));
    const spec: fc.Arbitrary<RangeSpec> = fc.oneof(
      fc.record({ kind: fc.constant('int' as const), first: position }),
      fc.tuple(position, fc.nat({ max: 80 })).map(([first, extra]) => ({ kind: 'int' as const, first, last: first + extra })),
      fc.record({ kind: fc.constant('suffix' as const), length: position }),
    );
    const ifRange: fc.Arbitrary<IfRangeCondition> = fc.oneof(
      tag.map((value) => ({ kind: 'tag', tag: value }) as const),
      date.map((value) => ({ kind: 'date', date: value }) as const),
      fc.constant({ kind: 'malformed' } as const),
    );
    const request: fc.Arbitrary<DownloadRequest> = fc.record(
      {
        method: fc.constantFrom('GET' as const, 'HEAD' as const),
        ifMatch: condition,
        ifNoneMatch: condition,
        ifModifiedSince: date,
        ifUnmodifiedSince: date,
        range: fc.array(spec, { minLength: 1, maxLength: 100 }),
        ifRange,
      },
      { requiredKeys: ['method'] },
    );
    const file: fc.Arbitrary<DownloadedFile> = fc.record({
      etag: fc.constantFrom('"a"', '"b"', 'W/"a"'),
      size: fc.nat({ max: 64 }),
      lastModified: fc.integer({ min: -2000, max: 2000 }).map((ms) => new Date(base + ms)),
    });

    it('decides as the reference model does for any file and request', function () {
      fc.assert(
        fc.property(file, request, date, (someFile, someRequest, now) => {
          const decision = decideDownload(someFile, someRequest, now);
          const expected = reference(someFile, someRequest, now);
          if (expected.kind === 'preconditionFailed') expect(decision.kind).to.equal('preconditionFailed');
          else expect(decision).to.deep.equal(expected);
        }),
        { numRuns: 3000 },
      );
    });
  });
});
