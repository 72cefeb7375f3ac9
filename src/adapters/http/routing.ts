import type { Operation } from 'openapi-backend';
import type { OpenApi } from './openapi-contract.js';
import { firstSegmentOf, percentDecode } from '../../http-wire/grammar/request-path.js';

/** The operations that serve a file by its storage path (`/{path}` in `openapi.yaml`). */
export const byPathOperations: ReadonlySet<string> = new Set(['downloadByPath', 'headDownloadByPath']);

/** Where a request goes: an API route, or a file by its storage path. */
export type RequestTarget =
  | {
      readonly kind: 'api';
      /** The path openapi-backend matches: the raw request path. */
      readonly matchPath: string;
    }
  | {
      readonly kind: 'file';
      /** The path openapi-backend matches: `/{path}` with the storage path as one segment. */
      readonly matchPath: string;
      /** Everything after the first `/`, still percent-encoded: decoded once, by the handler. */
      readonly rawStoragePath: string;
    };

/**
 * The first path segments that belong to the API, derived from `openapi.yaml`'s paths (every path
 * but the templated `/{path}`), plus the empty one of `/`. A storage path starting with one of
 * them is never served by path; its file is reached through `/download/<symbol>`.
 */
export function reservedFirstSegments(api: OpenApi): ReadonlySet<string> {
  const reserved = new Set<string>(['']);
  for (const path of Object.keys(api.definition.paths ?? {})) {
    const segment = firstSegmentOf(path);
    if (!segment.startsWith('{')) reserved.add(segment);
  }
  return reserved;
}

/**
 * Decides where a raw request path (as sent, no query) goes. The first segment is compared with
 * the reserved ones after percent-decoding, so `/%63atalog/x.csv` is the API's `catalog` (and no
 * route), never a file. openapi-backend templates match one segment, so a storage path is handed
 * to it as one encoded segment of `/{path}`; its one real decoding happens in the handler.
 */
export function createRequestTargeting(api: OpenApi): (rawPath: string) => RequestTarget {
  const reserved = reservedFirstSegments(api);
  return (rawPath) => {
    const firstSegment = firstSegmentOf(rawPath);
    if (reserved.has(percentDecode(firstSegment) ?? firstSegment)) return { kind: 'api', matchPath: rawPath };
    const rawStoragePath = rawPath.slice(1);
    // Validated against the contract in its decoded form (its maxLength counts characters, not
    // escapes); a path that does not decode is validated as sent and refused by the handler.
    const forValidation = percentDecode(rawStoragePath) ?? rawStoragePath;
    return { kind: 'file', matchPath: `/${encodeURIComponent(forValidation)}`, rawStoragePath };
  };
}

/**
 * The operation a request addresses, as the gateway routes it, or `undefined` when no route
 * matches (404 or 405). A HEAD request where `openapi.yaml` declares only a GET is that GET
 * operation (RFC 9110 section 9.3.2: the same answer without content). Shared with the contract
 * tests, so that they check responses against the operation the gateway really ran.
 */
export function createRouteMatcher(api: OpenApi): (method: string, rawPath: string) => Operation | undefined {
  const target = createRequestTargeting(api);
  const match = (method: string, routed: RequestTarget): Operation | undefined => {
    const operation = matchOperation(api, method, routed.matchPath);
    if (operation === undefined) return undefined;
    const isByPath = byPathOperations.has(operation.operationId ?? '');
    return isByPath === (routed.kind === 'file') ? operation : undefined;
  };
  return (method, rawPath) => {
    const routed = target(rawPath);
    const operation = match(method, routed);
    return operation === undefined && method === 'HEAD' ? match('GET', routed) : operation;
  };
}

/** The methods an operation exists for at this path, for 405's `Allow`. */
export function allowedMethods(match: (method: string, rawPath: string) => Operation | undefined, rawPath: string): string[] {
  return ['GET', 'HEAD', 'POST', 'DELETE'].filter((method) => match(method, rawPath) !== undefined);
}

function matchOperation(api: OpenApi, method: string, path: string): Operation | undefined {
  try {
    return api.matchOperation({ method, path, headers: {} }) ?? undefined;
  } catch {
    return undefined;
  }
}
