import { expect } from 'chai';
import { appendListItem, quotaItem, quotaPolicyItem, secondsUntilReset } from '../../src/http-wire/quota-headers.js';
import { quotaPeriodOf, type QuotaStanding } from '../../src/domain/monthly-quota.js';

describe('the quota in RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers)', function () {
  const now = new Date('2026-11-30T23:59:00Z');
  const standing: QuotaStanding = { limit: 10485760, used: 6291456, remaining: 4194304, period: quotaPeriodOf(now) };

  it('names the policy, its quota in content-bytes and the period in seconds (section 3)', function () {
    expect(quotaPolicyItem(standing)).to.equal('"monthly-bytes";q=10485760;qu="content-bytes";w=2592000');
  });

  it('gives the bytes left and the seconds until the month resets (section 4)', function () {
    expect(quotaItem(standing, now)).to.equal('"monthly-bytes";r=4194304;t=60');
  });

  it('never says 0 seconds to the reset, so that Retry-After is always a wait', function () {
    expect(secondsUntilReset(standing, new Date('2026-11-30T23:59:59.999Z'))).to.equal(1);
  });

  it('joins the download budget’s item already in the field as one List (RFC 9651 section 3.1)', function () {
    expect(appendListItem('"downloads";q=120;w=60', '"monthly-bytes";q=1;qu="content-bytes";w=1')).to.equal(
      '"downloads";q=120;w=60, "monthly-bytes";q=1;qu="content-bytes";w=1',
    );
    expect(appendListItem(undefined, '"monthly-bytes";r=1;t=1')).to.equal('"monthly-bytes";r=1;t=1');
  });
});
