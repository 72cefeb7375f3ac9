import type { Signer } from '../../domain/ports.js';
import { RequestRefused } from './error-responses.js';

const format = 1;
/** openapi.yaml's `maxLength` of the `/changes` cursor: a position and a MAC take some 70 characters. */
export const maxChangesCursorLength = 512;
/** Digits of a position: JavaScript's safe integers have at most 16. */
const maxPositionDigits = 16;

/**
 * The opaque `cursor` of `GET /changes` (and the `changesCursor` of `/list` and `/catalog`): the
 * format and the log position in base64url, then the signer's `changes-cursor` MAC over the client
 * id and that. Any instance reads any cursor (the position is the fleet's), and a client can
 * neither forge a position nor follow another client's feed with its cursor.
 */
export class ChangeCursors {
  readonly #signer: Signer;

  constructor(signer: Signer) {
    this.#signer = signer;
  }

  encode(clientId: string, position: number): string {
    const payload = Buffer.from(`${format}:${position}`, 'utf8').toString('base64url');
    return `${payload}.${this.#signer.mac('changes-cursor', [clientId, payload])}`;
  }

  /** The position of a cursor made for `clientId`; throws `RequestRefused('invalid_request')` for any other. */
  decode(clientId: string, cursor: string): number {
    const refuse = (): never => {
      throw new RequestRefused('invalid_request', 'The cursor is not valid: use a changesCursor or nextCursor the gateway gave you, unchanged');
    };
    const dot = cursor.indexOf('.');
    if (cursor.length > maxChangesCursorLength || dot === -1) return refuse();
    const payload = cursor.slice(0, dot);
    if (!this.#signer.verifyMac('changes-cursor', [clientId, payload], cursor.slice(dot + 1))) return refuse();
    const [version, digits, ...rest] = Buffer.from(payload, 'base64url').toString('utf8').split(':');
    if (version !== String(format) || digits === undefined || rest.length > 0) return refuse();
    if (digits.length === 0 || digits.length > maxPositionDigits || !/^(0|[1-9][0-9]*)$/.test(digits)) return refuse();
    const position = Number(digits);
    return Number.isSafeInteger(position) ? position : refuse();
  }
}
