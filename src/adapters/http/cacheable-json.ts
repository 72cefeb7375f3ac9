import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { parseEntityTagCondition } from './grammar/entity-tags.js';

/** A JSON answer serialized once, with a weak entity tag of its bytes. */
export interface CacheableJson {
  readonly body: Buffer;
  /** `W/"<hash>"`: weak, since another serialization of the same facts would be as good (RFC 9110 section 8.8.1). */
  readonly etag: string;
}

export function cacheableJson(value: unknown): CacheableJson {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 27);
  return { body, etag: `W/"${hash}"` };
}

/** JSON answers depend on the caller and change with the index and storage: revalidate every time. */
const jsonCacheControl = 'private, no-cache';

/**
 * Sends `answer`, or `304 Not Modified` when the request's `If-None-Match` holds its tag (weak
 * comparison, RFC 9110 section 13.1.2), so that a client polling an unchanged catalog or listing
 * gets no body.
 */
export function sendCacheableJson(req: Request, res: Response, answer: CacheableJson): void {
  res.setHeader('ETag', answer.etag);
  res.setHeader('Cache-Control', jsonCacheControl);
  const ifNoneMatch = req.get('if-none-match');
  const condition = ifNoneMatch === undefined ? undefined : parseEntityTagCondition(ifNoneMatch);
  const opaque = answer.etag.slice(2);
  const matches = condition?.kind === 'any' || (condition?.kind === 'tags' && condition.tags.some((tag) => tag.opaque === opaque));
  if (matches) {
    res.status(304).end();
    return;
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  // Explicit, so that HEAD (whose body Node drops) announces the length GET sends.
  res.setHeader('Content-Length', answer.body.byteLength);
  res.status(200).end(answer.body);
}
