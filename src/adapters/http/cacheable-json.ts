import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { parseEntityTagCondition } from '../../http-wire/grammar/entity-tags.js';

/** A JSON answer serialized once, with a weak entity tag of its bytes. */
export interface CacheableJson {
  readonly body: Buffer;
  /** `W/"<hash>"`: weak, since another serialization of the same facts would be as good (RFC 9110 section 8.8.1). */
  readonly etag: string;
}

export function cacheableJson(value: unknown): CacheableJson {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  return { body, etag: weakTagOf(body) };
}

/**
 * `answer` with one more field at the end of its top-level object, under the same tag: for a field
 * that may change without the answer's facts changing (the change feed's position), so that a
 * client revalidating keeps its copy, whose value is an earlier but still good one.
 */
export function withUntaggedField(answer: CacheableJson, name: string, value: string): CacheableJson {
  const text = answer.body.toString('utf8');
  if (!text.endsWith('}')) throw new Error('Only a JSON object can take another field');
  const separator = text === '{}' ? '' : ',';
  return { etag: answer.etag, body: Buffer.from(`${text.slice(0, -1)}${separator}${JSON.stringify(name)}:${JSON.stringify(value)}}`, 'utf8') };
}

/** `W/"<hash>"` of `facts`: the bytes of an answer, or what determines them. */
export function weakTagOf(facts: string | Buffer): string {
  return `W/"${createHash('sha256').update(facts).digest('base64url').slice(0, 27)}"`;
}

/** JSON answers depend on the caller and change with the index and storage: revalidate every time. */
const jsonCacheControl = 'private, no-cache';

/**
 * Sends `answer`, or `304 Not Modified` when the request's `If-None-Match` holds its tag (weak
 * comparison, RFC 9110 section 13.1.2), so that a client polling an unchanged catalog or listing
 * gets no body.
 */
export function sendCacheableJson(req: Request, res: Response, answer: CacheableJson): void {
  if (answeredNotModified(req, res, answer.etag)) return;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  // Explicit, so that HEAD (whose body Node drops) announces the length GET sends.
  res.setHeader('Content-Length', answer.body.byteLength);
  res.status(200).end(answer.body);
}

/**
 * As `sendCacheableJson`, for a body in pieces (a kept part between two made for this answer):
 * written as they are, corked into one write, never copied into one buffer first.
 */
export function sendCacheableJsonPieces(req: Request, res: Response, etag: string, pieces: readonly Buffer[]): void {
  if (answeredNotModified(req, res, etag)) return;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', pieces.reduce((sum, piece) => sum + piece.byteLength, 0));
  res.status(200);
  res.cork();
  for (const piece of pieces) res.write(piece);
  res.end();
  res.uncork();
}

/**
 * As `sendCacheableJson`, for an answer too big to hold whole: `etag` comes from what determines
 * the body, and the body is written piece by piece as the connection takes it.
 */
export async function sendStreamedJson(req: Request, res: Response, etag: string, pieces: Iterable<string>): Promise<void> {
  if (answeredNotModified(req, res, etag)) return;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.status(200);
  // HEAD answers what GET would (RFC 9110 section 9.3.2): the same headers, no content.
  const head = req.method === 'HEAD';
  let buffered = '';
  let streamed = false;
  for (const piece of pieces) {
    buffered += piece;
    if (buffered.length < 65_536) continue;
    streamed = true;
    if (head) {
      buffered = '';
      continue;
    }
    const flushed = res.write(buffered);
    buffered = '';
    if (!flushed && !(await drained(res))) return;
  }
  // A body sent in one piece has a length, set here because Node leaves it out of a HEAD answer.
  if (!streamed) res.setHeader('Content-Length', Buffer.byteLength(buffered));
  res.end(head ? undefined : buffered);
}

/** Whether the connection took what was written (`drain`), rather than closing first. */
function drained(res: Response): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onDrain = (): void => done(true);
    const onClose = (): void => done(false);
    const done = (value: boolean): void => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(value);
    };
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

/**
 * Sets the answer's `ETag` and cache policy, and answers `304 Not Modified` when the request's
 * `If-None-Match` holds the tag (weak comparison); whether it did.
 */
export function answeredNotModified(req: Request, res: Response, etag: string): boolean {
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', jsonCacheControl);
  const ifNoneMatch = req.get('if-none-match');
  const condition = ifNoneMatch === undefined ? undefined : parseEntityTagCondition(ifNoneMatch);
  const opaque = etag.slice(2);
  const matches = condition?.kind === 'any' || (condition?.kind === 'tags' && condition.tags.some((tag) => tag.opaque === opaque));
  if (matches) res.status(304).end();
  return matches;
}
