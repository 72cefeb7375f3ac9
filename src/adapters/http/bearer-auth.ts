import type { Request } from 'express';
import { InvalidToken } from '../../domain/errors.js';
import type { Principal, TokenStore } from '../../domain/ports.js';

/** RFC 6750 section 2.1: `Bearer` followed by a b64token. */
const bearerPattern = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The outcome of reading a request's credentials. */
export type BearerResult =
  | { readonly kind: 'authenticated'; readonly principal: Principal }
  | { readonly kind: 'missing' }
  | { readonly kind: 'rejected'; readonly error: InvalidToken };

/** Verifies `Authorization: Bearer <token>`; other schemes count as no bearer credentials. */
export async function authenticateBearer(req: Request, tokens: TokenStore): Promise<BearerResult> {
  const authorization = req.get('authorization');
  if (authorization === undefined || !/^Bearer(\s|$)/i.test(authorization)) return { kind: 'missing' };
  const match = bearerPattern.exec(authorization);
  if (match === null) return { kind: 'rejected', error: new InvalidToken('The Authorization header is not a well-formed bearer token') };
  try {
    return { kind: 'authenticated', principal: await tokens.verify(match[1] ?? '') };
  } catch (error) {
    if (error instanceof InvalidToken) return { kind: 'rejected', error };
    throw error;
  }
}
