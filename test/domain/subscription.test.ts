import { expect } from 'chai';
import { capToTerm, describeInactiveTerm, isReleased, nextReleaseBoundary, termStatus } from '../../src/domain/subscription.js';

const at = (iso: string): Date => new Date(iso);

describe('subscription terms', function () {
  const term = { validFrom: at('2026-12-01T00:00:00Z'), validUntil: at('2027-01-01T00:00:00Z') };

  describe('termStatus', function () {
    it('is not yet active one millisecond before validFrom, and says when it starts', function () {
      expect(termStatus(term, at('2026-11-30T23:59:59.999Z'))).to.deep.equal({ kind: 'notYetActive', startsAt: term.validFrom });
    });

    it('is active at validFrom exactly, and says when it ends', function () {
      expect(termStatus(term, at('2026-12-01T00:00:00Z'))).to.deep.equal({ kind: 'active', endsAt: term.validUntil });
    });

    it('is active one millisecond before validUntil', function () {
      expect(termStatus(term, at('2026-12-31T23:59:59.999Z')).kind).to.equal('active');
    });

    it('has ended at validUntil exactly, and says when', function () {
      expect(termStatus(term, at('2027-01-01T00:00:00Z'))).to.deep.equal({ kind: 'ended', endedAt: term.validUntil });
    });

    it('is always active without bounds', function () {
      expect(termStatus({}, at('1970-01-01T00:00:00Z'))).to.deep.equal({ kind: 'active' });
    });
  });

  describe('describeInactiveTerm', function () {
    it('names the start of a term not yet in force and the end of one that ended', function () {
      expect(describeInactiveTerm({ kind: 'notYetActive', startsAt: term.validFrom })).to.include('2026-12-01T00:00:00.000Z');
      expect(describeInactiveTerm({ kind: 'ended', endedAt: term.validUntil })).to.include('ended at 2027-01-01T00:00:00.000Z');
    });
  });

  describe('capToTerm', function () {
    it('keeps an expiry that comes before the end of the term', function () {
      expect(capToTerm(at('2026-12-31T23:00:00Z'), term)).to.deep.equal(at('2026-12-31T23:00:00Z'));
    });

    it('cuts an expiry that would outlive the term to the term’s end', function () {
      expect(capToTerm(at('2027-01-07T00:00:00Z'), term)).to.deep.equal(term.validUntil);
    });

    it('keeps any expiry of an open-ended term', function () {
      expect(capToTerm(at('2099-01-01T00:00:00Z'), {})).to.deep.equal(at('2099-01-01T00:00:00Z'));
    });
  });
});

describe('release windows', function () {
  const window = { availableFrom: at('2026-11-24T21:00:00Z'), availableUntil: at('2026-11-25T00:00:00Z') };

  it('hides a file until availableFrom, to the millisecond', function () {
    expect(isReleased(window, at('2026-11-24T20:59:59.999Z'))).to.equal(false);
    expect(isReleased(window, at('2026-11-24T21:00:00Z'))).to.equal(true);
  });

  it('hides a file from availableUntil on', function () {
    expect(isReleased(window, at('2026-11-24T23:59:59.999Z'))).to.equal(true);
    expect(isReleased(window, at('2026-11-25T00:00:00Z'))).to.equal(false);
  });

  it('releases a file without a window at any time', function () {
    expect(isReleased({}, at('1970-01-01T00:00:00Z'))).to.equal(true);
  });

  describe('nextReleaseBoundary', function () {
    const windows = [window, { availableFrom: at('2026-11-24T18:00:00Z') }, {}, { availableUntil: at('2026-12-01T00:00:00Z') }];

    it('is the first boundary strictly after now', function () {
      expect(nextReleaseBoundary(windows, at('2026-11-24T12:00:00Z'))).to.deep.equal(at('2026-11-24T18:00:00Z'));
      expect(nextReleaseBoundary(windows, at('2026-11-24T18:00:00Z'))).to.deep.equal(at('2026-11-24T21:00:00Z'));
      expect(nextReleaseBoundary(windows, at('2026-11-24T22:00:00Z'))).to.deep.equal(at('2026-11-25T00:00:00Z'));
    });

    it('is undefined when every boundary is past', function () {
      expect(nextReleaseBoundary(windows, at('2026-12-01T00:00:00Z'))).to.equal(undefined);
    });
  });
});
