/**
 * The shapes of the gateway's JSON answers, checked before anything reads them: a broken proxy or a
 * hostile server must make a call fail with a `protocol_error` that says what is wrong, never a
 * `TypeError` deep in the caller. Only the fields the client relies on are checked; fields it does
 * not know are allowed (openapi.yaml may add some).
 */

/** Undefined when `value` fits; otherwise what is wrong with it, named from `at`. */
export type Shape = (value: unknown, at: string) => string | undefined;

/** `at` is '' for the answer itself. */
const named = (at: string): string => (at === '' ? 'the answer' : at);

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export const string: Shape = (value, at) => (typeof value === 'string' ? undefined : `${named(at)} is not a string`);

export const boolean: Shape = (value, at) => (typeof value === 'boolean' ? undefined : `${named(at)} is not true or false`);

/** A count or a size: a whole number from 0 to 2^53 - 1. */
export const size: Shape = (value, at) => (Number.isSafeInteger(value) && (value as number) >= 0 ? undefined : `${named(at)} is not a whole number of 0 or more`);

export const optional =
  (shape: Shape): Shape =>
  (value, at) =>
    value === undefined ? undefined : shape(value, at);

export const arrayOf =
  (item: Shape): Shape =>
  (value, at) => {
    if (!Array.isArray(value)) return `${named(at)} is not an array`;
    for (const [index, element] of value.entries()) {
      const problem = item(element, `${at}[${index}]`);
      if (problem !== undefined) return problem;
    }
    return undefined;
  };

/** An object whose every value fits `shape` (a map of names to values). */
export const recordOf =
  (shape: Shape): Shape =>
  (value, at) => {
    if (!isRecord(value)) return `${named(at)} is not an object`;
    for (const [key, field] of Object.entries(value)) {
      const problem = shape(field, `${at}.${key}`);
      if (problem !== undefined) return problem;
    }
    return undefined;
  };

export const objectWith =
  (fields: Readonly<Record<string, Shape>>): Shape =>
  (value, at) => {
    if (!isRecord(value)) return `${named(at)} is not an object`;
    for (const [key, shape] of Object.entries(fields)) {
      const problem = shape(value[key], at === '' ? key : `${at}.${key}`);
      if (problem !== undefined) return problem;
    }
    return undefined;
  };

export const catalogShape = objectWith({
  clientId: string,
  files: arrayOf(objectWith({ Symbol: string, FileName: string, Description: string })),
});

/** 64 lowercase hex digits (a SHA-256). */
export const sha256: Shape = (value, at) => (typeof value === 'string' && /^[0-9a-f]{64}$/.test(value) ? undefined : `${named(at)} is not 64 lowercase hex digits`);

export const fileListShape = objectWith({
  files: arrayOf(
    objectWith({ symbol: string, description: string, fileName: string, size, uploaded: string, etag: string, md5: optional(string), sha256: optional(sha256) }),
  ),
  count: size,
  truncated: boolean,
  nextCursor: optional(string),
});

export const changeFeedShape = objectWith({
  events: arrayOf(
    objectWith({
      id: string,
      type: string,
      time: string,
      file: objectWith({ symbol: string, fileName: string, size, etag: string, uploaded: string, sha256: optional(sha256) }),
    }),
  ),
  nextCursor: string,
  hasMore: boolean,
});

export const fileCountShape = objectWith({ count: size });

export const fileInfoShape = objectWith({
  symbol: string,
  size,
  uploaded: string,
  etag: string,
  httpMetadata: recordOf(optional(string)),
  customMetadata: recordOf(string),
});

export const accountShape = objectWith({
  clientId: string,
  term: objectWith({ validFrom: optional(string), validUntil: optional(string), active: boolean }),
  quota: optional(objectWith({ monthlyBytes: size, period: string, used: size, remaining: size, resetsAt: string })),
});

export const tokenShape = objectWith({ access_token: string, expires_in: size });
