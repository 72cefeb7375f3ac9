import { expect } from 'chai';
import { changeLabel, newestFirst, type FeedEvent } from '../../portal/src/whats-new.js';

/* The portal's "What's new" rules, outside the browser: newest first, each event once, bounded. */

function event(id: number, type: FeedEvent['type'] = 'file.released'): FeedEvent {
  return {
    id: `chg_${String(id).padStart(12, '0')}`,
    type,
    time: new Date(Date.UTC(2026, 10, 20, 0, id)).toISOString(),
    file: { symbol: `S${id}`, fileName: `data/${id}.csv`, size: id, etag: `"${id}"`, uploaded: '2026-11-20T00:00:00.000Z' },
  };
}

const ids = (events: readonly FeedEvent[]): string[] => events.map((item) => item.id.slice(-2));

describe('the portal\'s "What\'s new" model (portal/src/whats-new.ts)', function () {
  it('puts the events that arrive (oldest first, as the feed sends them) on top, newest first', function () {
    const shown = newestFirst([], [event(1), event(2), event(3)]);
    expect(ids(shown)).to.deep.equal(['03', '02', '01']);
    expect(ids(newestFirst(shown, [event(4), event(5)]))).to.deep.equal(['05', '04', '03', '02', '01']);
  });

  it('shows an event the feed delivers again (at least once) only once', function () {
    const shown = newestFirst([], [event(1), event(2)]);
    expect(ids(newestFirst(shown, [event(2), event(3), event(3)]))).to.deep.equal(['03', '02', '01']);
  });

  it('keeps the newest events only, up to its limit', function () {
    const shown = newestFirst([], [event(1), event(2), event(3)], 2);
    expect(ids(shown)).to.deep.equal(['03', '02']);
    expect(ids(newestFirst(shown, [event(4)], 2))).to.deep.equal(['04', '03']);
  });

  it('names each kind of event, and an unknown one by its own name', function () {
    expect(['file.released', 'file.updated', 'file.withdrawn', 'file.renamed'].map(changeLabel)).to.deep.equal(['Released', 'Updated', 'Withdrawn', 'file.renamed']);
  });
});
