import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ListPosition } from '../../application/file-access.js';
import { RequestRefused } from './error-responses.js';

/** Where a `/list` cursor continues, and the filter it was made under. */
export interface DecodedCursor {
  readonly position: ListPosition;
  readonly modifiedSince: Date | undefined;
}

const keyLabel = 'data-file-gateway list cursors v1';
const format = 1;
/** openapi.yaml's `maxLength` of `cursor`: a version, a storage path and a MAC fit well within it. */
export const maxCursorLength = 4096;

/**
 * The opaque `cursor` of `GET /list`: base64url JSON of the index version, the catalog row to
 * continue at, the storage path of the last file returned and the `modifiedSince` filter, then a
 * MAC under a key derived from TOKEN_SIGNING_KEY over that and the client id. Any instance of a
 * fleet can continue any listing (nothing is kept in memory), and a client can neither forge a
 * position nor use another client's cursor.
 */
export class ListCursors {
  readonly #key: Buffer;

  constructor(tokenSigningKey: Uint8Array) {
    this.#key = createHmac('sha256', tokenSigningKey).update(keyLabel).digest();
  }

  encode(clientId: string, position: ListPosition, modifiedSince: Date | undefined): string {
    const payload = Buffer.from(
      JSON.stringify([format, position.version, position.row, position.lastFileName, modifiedSince?.getTime() ?? null]),
      'utf8',
    ).toString('base64url');
    return `${payload}.${this.#mac(clientId, payload).toString('base64url')}`;
  }

  /** Throws `RequestRefused('invalid_request')` for a cursor this gateway did not make for this client. */
  decode(clientId: string, cursor: string): DecodedCursor {
    const refuse = (): never => {
      throw new RequestRefused('invalid_request', 'The cursor is not valid: use the nextCursor of an earlier /list answer, unchanged');
    };
    const dot = cursor.indexOf('.');
    if (cursor.length > maxCursorLength || dot === -1) return refuse();
    const payload = cursor.slice(0, dot);
    const mac = Buffer.from(cursor.slice(dot + 1), 'base64url');
    const expected = this.#mac(clientId, payload);
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return refuse();
    let fields: unknown;
    try {
      fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return refuse();
    }
    if (!Array.isArray(fields) || fields.length !== 5) return refuse();
    const [version, row, lastFileName, since] = (fields as unknown[]).slice(1);
    if (fields[0] !== format || typeof version !== 'string' || typeof lastFileName !== 'string') return refuse();
    if (typeof row !== 'number' || !Number.isSafeInteger(row) || row < 1) return refuse();
    if (since !== null && (typeof since !== 'number' || !Number.isFinite(since))) return refuse();
    return {
      position: { version, row, lastFileName },
      modifiedSince: since === null ? undefined : new Date(since as number),
    };
  }

  #mac(clientId: string, payload: string): Buffer {
    return createHmac('sha256', this.#key).update(clientId).update('\0').update(payload).digest();
  }
}
