import { expect } from 'chai';
import { ListCursors } from '../../src/adapters/http/list-cursors.js';
import { JoseSigner } from '../../src/adapters/signing/jose-signer.js';
import { testSigningKey } from '../support/gateway.js';

describe('ListCursors (the opaque cursor of GET /list)', function () {
  const signer = new JoseSigner({ rootKey: testSigningKey, clock: { now: () => new Date() } });
  const cursors = new ListCursors(signer);
  const position = { version: '"0x8DC1"', row: 3, lastFileName: 'data/b.csv' };
  /** A cursor of the given fields, signed as the gateway signs one (to make the formats of earlier gateways). */
  const signed = (clientId: string, fields: unknown[]): string => {
    const payload = Buffer.from(JSON.stringify(fields), 'utf8').toString('base64url');
    return `${payload}.${signer.mac('list-cursor', [clientId, payload])}`;
  };

  it('carries the change log position of the pages so far, and the filter', function () {
    const since = new Date('2026-11-01T00:00:00Z');
    expect(cursors.decode('acme', cursors.encode('acme', { ...position, changesSeen: 42 }, since))).to.deep.equal({
      position: { ...position, changesSeen: 42 },
      modifiedSince: since,
    });
    expect(cursors.decode('acme', cursors.encode('acme', position, undefined))).to.deep.equal({ position, modifiedSince: undefined });
  });

  it('still reads a cursor made before cursors carried a position (format 1)', function () {
    expect(cursors.decode('acme', signed('acme', [1, position.version, 3, position.lastFileName, null]))).to.deep.equal({ position, modifiedSince: undefined });
  });

  for (const [what, fields] of [
    ['a negative position', [2, position.version, 3, position.lastFileName, null, -1]],
    ['a fractional position', [2, position.version, 3, position.lastFileName, null, 1.5]],
    ['a position as text', [2, position.version, 3, position.lastFileName, null, '7']],
    ['format 1 with a sixth field', [1, position.version, 3, position.lastFileName, null, 7]],
    ['format 2 without its sixth field', [2, position.version, 3, position.lastFileName, null]],
    ['an unknown format', [3, position.version, 3, position.lastFileName, null, 7]],
  ] as const) {
    it(`refuses ${what}, even when signed`, function () {
      expect(() => cursors.decode('acme', signed('acme', [...fields]))).to.throw('The cursor is not valid');
    });
  }
});
