import type { ListPosition } from '../../application/file-access.js';
import type { Signer } from '../../domain/ports.js';
import { RequestRefused } from './error-responses.js';

/** Where a `/list` cursor continues, and the filter it was made under. */
export interface DecodedCursor {
  readonly position: ListPosition;
  readonly modifiedSince: Date | undefined;
}

/** 2 adds the change log position of the pages so far; cursors of format 1 (without it) are still read. */
const format = 2;
/** openapi.yaml's `maxLength` of `cursor`: a version, a storage path and a MAC fit well within it. */
export const maxCursorLength = 4096;

/**
 * The opaque `cursor` of `GET /list`: base64url JSON of the index version, the catalog row to
 * continue at, the storage path of the last file returned, the `modifiedSince` filter and the
 * smallest change log position of the pages so far (so the last page's `changesCursor` is one
 * for the whole listing, whichever instance answered each page), then the
 * signer's `list-cursor` MAC over the client id and that. Any instance of a
 * fleet can continue any listing (nothing is kept in memory), and a client can neither forge a
 * position nor use another client's cursor.
 */
export class ListCursors {
  readonly #signer: Signer;

  constructor(signer: Signer) {
    this.#signer = signer;
  }

  encode(clientId: string, position: ListPosition, modifiedSince: Date | undefined): string {
    const payload = Buffer.from(
      JSON.stringify([format, position.version, position.row, position.lastFileName, modifiedSince?.getTime() ?? null, position.changesSeen ?? null]),
      'utf8',
    ).toString('base64url');
    return `${payload}.${this.#signer.mac('list-cursor', [clientId, payload])}`;
  }

  /** Throws `RequestRefused('invalid_request')` for a cursor this gateway did not make for this client. */
  decode(clientId: string, cursor: string): DecodedCursor {
    const refuse = (): never => {
      throw new RequestRefused('invalid_request', 'The cursor is not valid: use the nextCursor of an earlier /list answer, unchanged');
    };
    const dot = cursor.indexOf('.');
    if (cursor.length > maxCursorLength || dot === -1) return refuse();
    const payload = cursor.slice(0, dot);
    if (!this.#signer.verifyMac('list-cursor', [clientId, payload], cursor.slice(dot + 1))) return refuse();
    let fields: unknown;
    try {
      fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return refuse();
    }
    if (!Array.isArray(fields) || fields.length !== (fields[0] === 1 ? 5 : 6)) return refuse();
    const [version, row, lastFileName, since, changesSeen = null] = (fields as unknown[]).slice(1);
    if ((fields[0] !== format && fields[0] !== 1) || typeof version !== 'string' || typeof lastFileName !== 'string') return refuse();
    if (typeof row !== 'number' || !Number.isSafeInteger(row) || row < 1) return refuse();
    if (since !== null && (typeof since !== 'number' || !Number.isFinite(since))) return refuse();
    if (changesSeen !== null && (typeof changesSeen !== 'number' || !Number.isSafeInteger(changesSeen) || changesSeen < 0)) return refuse();
    return {
      position: { version, row, lastFileName, ...(changesSeen !== null && { changesSeen: changesSeen as number }) },
      modifiedSince: since === null ? undefined : new Date(since as number),
    };
  }
}
