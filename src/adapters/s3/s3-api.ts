import contentDisposition from 'content-disposition';
import type { NextFunction, Request, Response } from 'express';
import type { DecidedDownload, Downloads } from '../../application/downloads.js';
import type { ExistingFile, FileAccess } from '../../application/file-access.js';
import type { BlobProperties, Clock, Principal, Signer } from '../../domain/ports.js';
import { parseDownloadRequest } from '../../http-wire/grammar/download-request.js';
import { abortOnClose, attachmentFor, sendDecidedBody, showStandings, startDownloadSession } from '../../http-wire/download-answer.js';
import type { S3Credentials } from './s3-credentials.js';
import { S3Refusal, writeS3Error } from './s3-errors.js';
import { s3Xml, type XmlElement } from './s3-xml.js';
import { isSigV2Request, isSigV4Request, isSignatureValid, parseQuery, queryValue, readSignatureClaims, type SignedRequest } from './signature-v4.js';
import { contextOf } from '../../http-wire/request-context.js';

/**
 * The read-only S3-compatible API (S3_API=on): a second driving adapter over the same use cases
 * as the native API, path-style on the gateway's own origin (`/<bucket>/<key>`, one bucket whose
 * keys are storage paths). An S3 request is one that carries an AWS signature (Version 4, or
 * Version 2, which is refused), or an anonymous request of a shape only S3 has on the bucket's
 * paths (see `isAnonymousS3Request`); any other request goes on to the native API untouched.
 */
export interface S3ApiDependencies {
  readonly bucket: string;
  readonly files: FileAccess;
  readonly credentials: S3Credentials;
  /** The download use cases every door shares (budget, quota, decision, settlement). */
  readonly downloads: Downloads;
  /** Counts one request against the client's request budget (`RateLimited` past it). */
  readonly admitRequest: (clientId: string) => Promise<void>;
  readonly clock: Clock;
  readonly idleTimeoutMs: number;
  /** MACs the continuation tokens (their own purpose: a `/list` cursor is not one). */
  readonly signer: Signer;
}

/** S3's own ceiling for `max-keys`. */
const MAX_KEYS = 1000;
/** S3's longest key, in bytes of UTF-8. */
const MAX_KEY_BYTES = 1024;
const MAX_TOKEN_LENGTH = 2048;
/** When the virtual bucket says it was created: a fixed date, as it never changes. */
const BUCKET_CREATION_DATE = '2024-01-01T00:00:00.000Z';
/** Sub-resources of a bucket or object that this read-only API does not have. */
const UNSUPPORTED_SUBRESOURCES = [
  'acl', 'attributes', 'accelerate', 'analytics', 'cors', 'delete', 'encryption', 'inventory', 'legal-hold', 'lifecycle',
  'logging', 'metrics', 'notification', 'object-lock', 'ownershipControls', 'partNumber', 'policy', 'policyStatus',
  'publicAccessBlock', 'replication', 'requestPayment', 'restore', 'retention', 'select', 'tagging', 'torrent', 'uploadId',
  'uploads', 'versionId', 'versioning', 'versions', 'website', 'intelligent-tiering', 'session',
];
/**
 * Query parameters only S3 requests on a bucket carry: the native API's `GET /<path>` takes none of
 * them (its query parameters are `redirect`, `token`, `limit`, `cursor` and `modifiedSince`).
 */
const S3_BUCKET_PARAMETERS = new Set([
  'list-type', 'prefix', 'delimiter', 'marker', 'max-keys', 'encoding-type', 'continuation-token', 'start-after', 'fetch-owner', 'location',
  ...UNSUPPORTED_SUBRESOURCES,
]);
/** `response-*` overrides of a GetObject and the header each sets. */
const RESPONSE_OVERRIDES: ReadonlyArray<readonly [string, string]> = [
  ['response-content-type', 'Content-Type'],
  ['response-content-disposition', 'Content-Disposition'],
  ['response-content-language', 'Content-Language'],
  ['response-content-encoding', 'Content-Encoding'],
  ['response-cache-control', 'Cache-Control'],
  ['response-expires', 'Expires'],
];

type Query = Readonly<Record<string, string | string[]>>;

/** The middleware: S3 requests are answered here; any other goes on to the native API. */
export function createS3Api(deps: S3ApiDependencies): (req: Request, res: Response, next: NextFunction) => Promise<void> {
  return async (req, res, next) => {
    const url = req.originalUrl;
    const question = url.indexOf('?');
    const rawPath = question === -1 ? url : url.slice(0, question);
    const rawQuery = question === -1 ? '' : url.slice(question + 1);
    const signature = isSigV4Request(req.headers, rawQuery) ? 'v4' : isSigV2Request(req.headers, rawQuery) ? 'v2' : undefined;
    if (signature === undefined && !isAnonymousS3Request(req, rawPath, rawQuery, deps.bucket)) return next();
    contextOf(res).operationId = 's3';
    res.setHeader('x-amz-request-id', String(res.getHeader('X-Request-Id') ?? ''));
    let where: { key?: string; bucket?: string } = {};
    try {
      if (signature === undefined) refuseAnonymous(req, res);
      if (signature === 'v2') {
        throw new S3Refusal('InvalidRequest', 'The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.');
      }
      // Writes and preflights are answered before the signature is checked, their bodies unread;
      // the bucket and key are looked at first, so another bucket is NoSuchBucket whatever the method.
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        targetOf(rawPath, deps.bucket);
        refuseUnread(req, res);
      }
      const query = parseQuery(rawQuery);
      const principal = await authenticate(deps, { method: req.method, rawPath, rawQuery, headers: req.headers }, query);
      contextOf(res).principal = principal;
      // The client's request budget (shared with the native API), before storage is asked anything.
      await deps.admitRequest(principal.clientId);
      const target = targetOf(rawPath, deps.bucket);
      where = target.kind === 'object' ? { key: target.key, bucket: deps.bucket } : target.kind === 'bucket' ? { bucket: target.bucket } : {};
      await route(deps, req, res, principal, target, query);
    } catch (error) {
      writeS3Error(req, res, error, where);
    }
  };
}

/**
 * An unsigned request that only S3 would send to the bucket's paths (`/<bucket>`, `/<bucket>/...`):
 * one without an `Authorization` header (a bearer token is the native API's) that either uses a
 * method no native route has there (`PUT`, `DELETE`, `OPTIONS`, ...: the native API's only `POST`
 * routes are `/oauth/...`, so `POST` counts only with an S3 query) or carries a query parameter only
 * S3 uses (a listing's `list-type`, `prefix`, `delimiter`, ..., a sub-resource such as `?acl`). An
 * unsigned `GET` or `HEAD` of `/<bucket>/<key>` without such a parameter stays the native API's
 * `GET /<storage path>`, which a file whose top folder is named like the bucket may be.
 */
function isAnonymousS3Request(req: Request, rawPath: string, rawQuery: string, bucket: string): boolean {
  if (req.headers.authorization !== undefined) return false;
  if (rawPath !== `/${bucket}` && !rawPath.startsWith(`/${bucket}/`)) return false;
  if (!['GET', 'HEAD', 'POST'].includes(req.method)) return true;
  // Names are compared as sent: S3's parameter names need no percent-encoding.
  return rawQuery.split('&').some((parameter) => S3_BUCKET_PARAMETERS.has(parameter.split('=', 1)[0] ?? ''));
}

/** An anonymous request: S3 answers a bucket without a public policy `403 AccessDenied`, a preflight as any. */
function refuseAnonymous(req: Request, res: Response): never {
  closeIfBody(req, res);
  if (req.method === 'OPTIONS') refusePreflight(req, res);
  contextOf(res).operationId = 's3:Anonymous';
  throw new S3Refusal('AccessDenied', 'Access Denied');
}

/** A signed request other than GET or HEAD: writes never touch storage, and a preflight finds no CORS rules. */
function refuseUnread(req: Request, res: Response): never {
  closeIfBody(req, res);
  if (req.method === 'OPTIONS') refusePreflight(req, res);
  contextOf(res).operationId = 's3:Write';
  if (['PUT', 'POST', 'DELETE'].includes(req.method)) throw new S3Refusal('AccessDenied', 'This S3 API is read-only.');
  throw new S3Refusal('NotImplemented', `${req.method} is not implemented by this S3 API.`);
}

/** S3's answer to a CORS preflight on a bucket with no CORS configuration: 400 without `Origin`, 403 with one. */
function refusePreflight(req: Request, res: Response): never {
  contextOf(res).operationId = 's3:Options';
  if (req.get('origin') === undefined) throw new S3Refusal('BadRequest', 'Insufficient information. Origin request header needed.');
  throw new S3Refusal('AccessForbidden', 'CORSResponse: CORS is not enabled for this bucket.');
}

/** A refused request with a body is answered without reading it, and its connection closed. */
function closeIfBody(req: Request, res: Response): void {
  const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  if (hasBody) res.setHeader('Connection', 'close');
}

async function authenticate(deps: S3ApiDependencies, request: SignedRequest, query: Query): Promise<Principal> {
  const claims = readSignatureClaims(request, query, deps.clock.now());
  const resolved = await deps.credentials.resolve(claims.accessKeyId, claims.sessionToken);
  if (!(await isSignatureValid(request, query, claims, resolved.secretAccessKey))) {
    throw new S3Refusal('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.');
  }
  if (resolved.outsideTerm !== undefined) throw resolved.outsideTerm;
  return resolved.principal;
}

type Target =
  | { readonly kind: 'service' }
  | { readonly kind: 'bucket'; readonly bucket: string }
  | { readonly kind: 'object'; readonly bucket: string; readonly key: string };

/**
 * Path-style addressing: `/`, `/<bucket>[/]`, `/<bucket>/<key>`. A key longer than S3 allows is
 * refused here, before anything (storage, the download session and its audit record) sees it.
 */
function targetOf(rawPath: string, bucket: string): Target {
  if (rawPath === '/' || rawPath === '') return { kind: 'service' };
  const slash = rawPath.indexOf('/', 1);
  const name = decodeOrRefuse(slash === -1 ? rawPath.slice(1) : rawPath.slice(1, slash));
  if (name !== bucket) throw new S3Refusal('NoSuchBucket', 'The specified bucket does not exist');
  const key = slash === -1 ? '' : decodeOrRefuse(rawPath.slice(slash + 1));
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) throw keyTooLong();
  return key === '' ? { kind: 'bucket', bucket: name } : { kind: 'object', bucket: name, key };
}

function keyTooLong(): S3Refusal {
  return new S3Refusal('KeyTooLongError', `Your key is too long: the longest key is ${MAX_KEY_BYTES} bytes of UTF-8.`);
}

function decodeOrRefuse(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new S3Refusal('InvalidURI', 'Could not parse the specified URI.');
  }
}

async function route(deps: S3ApiDependencies, req: Request, res: Response, principal: Principal, target: Target, query: Query): Promise<void> {
  const unsupported = UNSUPPORTED_SUBRESOURCES.find((name) => query[name] !== undefined);
  if (unsupported !== undefined) throw new S3Refusal('NotImplemented', `The ${unsupported} sub-resource is not implemented by this S3 API.`);
  switch (target.kind) {
    case 'service':
      if (req.method !== 'GET') throw new S3Refusal('MethodNotAllowed', 'The specified method is not allowed against this resource.');
      contextOf(res).operationId = 's3:ListBuckets';
      return sendXml(res, 'ListAllMyBucketsResult', {
        Owner: ownerOf(principal),
        Buckets: { Bucket: [{ Name: deps.bucket, CreationDate: BUCKET_CREATION_DATE }] },
      });
    case 'bucket':
      if (req.method === 'HEAD') {
        contextOf(res).operationId = 's3:HeadBucket';
        res.setHeader('x-amz-bucket-region', 'us-east-1');
        res.status(200).end();
        return;
      }
      if (query['location'] !== undefined) {
        contextOf(res).operationId = 's3:GetBucketLocation';
        // An empty LocationConstraint is us-east-1, which every client accepts whatever region it signs with.
        res.status(200).setHeader('Content-Type', 'application/xml');
        res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></LocationConstraint>`);
        return;
      }
      return listObjects(deps, res, principal, query);
    case 'object':
      return getObject(deps, req, res, principal, target.key, query);
  }
}

function ownerOf(principal: Principal): XmlElement {
  return { ID: principal.clientId, DisplayName: principal.clientId };
}

function sendXml(res: Response, root: string, content: XmlElement): void {
  res.status(200);
  res.setHeader('Content-Type', 'application/xml');
  res.setHeader('Cache-Control', 'private, no-cache');
  res.end(s3Xml(root, content));
}

/** The S3 entity tag of a file: the hex MD5 of its content where storage has one, storage's tag otherwise. */
export function s3ETagOf(file: { readonly etag: string; readonly contentMd5?: string | undefined }): string {
  if (file.contentMd5 !== undefined) {
    const md5 = Buffer.from(file.contentMd5, 'base64');
    if (md5.length === 16) return `"${md5.toString('hex')}"`;
  }
  return file.etag;
}

// ---- ListObjects (v1) and ListObjectsV2 ------------------------------------------------------

interface ListPosition {
  /** The last key or common prefix returned. */
  readonly after: string;
  /** `after` is a common prefix: every key under it was rolled up and is skipped. */
  readonly prefix: boolean;
}

async function listObjects(deps: S3ApiDependencies, res: Response, principal: Principal, query: Query): Promise<void> {
  const v2 = queryValue(query, 'list-type') === '2';
  contextOf(res).operationId = v2 ? 's3:ListObjectsV2' : 's3:ListObjects';
  const prefix = queryValue(query, 'prefix') ?? '';
  const delimiter = queryValue(query, 'delimiter') ?? '';
  const encodingType = queryValue(query, 'encoding-type');
  if (encodingType !== undefined && encodingType !== 'url') throw new S3Refusal('InvalidArgument', 'Invalid Encoding Method specified in Request');
  const maxKeysText = queryValue(query, 'max-keys');
  if (maxKeysText !== undefined && !/^\d{1,9}$/.test(maxKeysText)) throw new S3Refusal('InvalidArgument', 'Provided max-keys not an integer or within integer range');
  const maxKeys = Math.min(maxKeysText === undefined ? MAX_KEYS : Number(maxKeysText), MAX_KEYS);
  const continuationToken = v2 ? queryValue(query, 'continuation-token') : undefined;
  const startAfter = v2 ? queryValue(query, 'start-after') : queryValue(query, 'marker');
  // v1 always names each key's owner; v2 only when asked (`fetch-owner=true`), as S3 does.
  const withOwner = !v2 || queryValue(query, 'fetch-owner')?.toLowerCase() === 'true';
  // An empty token is no token: the listing starts from the beginning (or `start-after`), and says so.
  const position: ListPosition | undefined =
    continuationToken !== undefined && continuationToken !== ''
      ? readContinuationToken(deps.signer, principal.clientId, continuationToken)
      : startAfter !== undefined && startAfter !== ''
        ? markerPosition(startAfter, prefix, delimiter)
        : undefined;

  const page = await collectPage(deps.files, principal, { prefix, delimiter, maxKeys, position });
  const encode = encodingType === 'url' ? urlEncodeKey : (text: string) => text;
  const contents = page.files.map((file) => ({
    Key: encode(file.entry.fileName),
    LastModified: file.uploaded.toISOString(),
    ETag: s3ETagOf({ etag: file.etag, contentMd5: file.md5 }),
    Size: file.size,
    ...(withOwner && { Owner: ownerOf(principal) }),
    StorageClass: 'STANDARD',
  }));
  const commonPrefixes = page.prefixes.map((common) => ({ Prefix: encode(common) }));
  const last = page.last;
  const shared: XmlElement = {
    Name: deps.bucket,
    Prefix: encode(prefix),
    ...(delimiter !== '' && { Delimiter: encode(delimiter) }),
    MaxKeys: maxKeys,
    ...(encodingType !== undefined && { EncodingType: encodingType }),
    IsTruncated: page.truncated,
  };
  if (v2) {
    return sendXml(res, 'ListBucketResult', {
      ...shared,
      KeyCount: contents.length + commonPrefixes.length,
      ...(continuationToken !== undefined && { ContinuationToken: continuationToken }),
      ...(page.truncated && last !== undefined && { NextContinuationToken: makeContinuationToken(deps.signer, principal.clientId, last) }),
      ...(startAfter !== undefined && { StartAfter: encode(startAfter) }),
      ...(contents.length > 0 && { Contents: contents }),
      ...(commonPrefixes.length > 0 && { CommonPrefixes: commonPrefixes }),
    });
  }
  return sendXml(res, 'ListBucketResult', {
    ...shared,
    Marker: encode(startAfter ?? ''),
    // S3 sends NextMarker only with a delimiter; without one, clients continue after the last key.
    ...(page.truncated && delimiter !== '' && last !== undefined && { NextMarker: encode(last.after) }),
    ...(contents.length > 0 && { Contents: contents }),
    ...(commonPrefixes.length > 0 && { CommonPrefixes: commonPrefixes }),
  });
}

interface Page {
  readonly files: ExistingFile[];
  readonly prefixes: string[];
  readonly truncated: boolean;
  /** Where the next page starts. */
  readonly last: ListPosition | undefined;
}

/**
 * One page of keys and common prefixes in S3's order: keys under `prefix`, those with `delimiter`
 * after the prefix rolled up into one common prefix each, `maxKeys` entries in all.
 */
async function collectPage(
  files: FileAccess,
  principal: Principal,
  options: { readonly prefix: string; readonly delimiter: string; readonly maxKeys: number; readonly position: ListPosition | undefined },
): Promise<Page> {
  const found: { files: ExistingFile[]; prefixes: string[] } = { files: [], prefixes: [] };
  let last = options.position;
  // `max-keys=0` asks for nothing and is never truncated, as S3 answers it; the listing is still
  // read (one entry) so that a client without an index is refused as for any listing.
  const limit = options.maxKeys === 0 ? 1 : MAX_KEYS;
  for (;;) {
    const after = afterOf(last);
    const batch = await files.listByPath(principal, { prefix: options.prefix, ...(after !== undefined && { after }), limit });
    if (options.maxKeys === 0) return { ...found, truncated: false, last };
    for (const file of batch.files) {
      const key = file.entry.fileName;
      // Rolled up into the common prefix just returned (keys under it are contiguous in this order).
      if (last?.prefix === true && key.startsWith(last.after)) continue;
      const cut = options.delimiter === '' ? -1 : key.indexOf(options.delimiter, options.prefix.length);
      if (found.files.length + found.prefixes.length >= options.maxKeys) return { ...found, truncated: true, last };
      if (cut === -1) {
        found.files.push(file);
        last = { after: key, prefix: false };
      } else {
        last = { after: key.slice(0, cut + options.delimiter.length), prefix: true };
        found.prefixes.push(last.after);
      }
    }
    if (!batch.truncated) return { ...found, truncated: false, last };
  }
}

/**
 * Where a `marker` (v1) or `start-after` (v2) resumes: after that string, in entries as listed. With
 * a delimiter, a marker inside a common prefix (the prefix itself, as the NextMarker S3 sends, or a
 * key under it) resumes after the whole prefix: the keys under it that sort after the marker roll up
 * into that prefix, which does not sort after the marker, so none is listed again. This is what S3
 * answers and what ceph/s3-tests' `test_bucket_list_delimiter_prefix` expects (a marker `boo/`
 * continues at `cquux/`); without a delimiter a marker is a plain "keys after this string".
 */
function markerPosition(marker: string, prefix: string, delimiter: string): ListPosition {
  if (delimiter !== '' && marker.startsWith(prefix)) {
    const cut = marker.indexOf(delimiter, prefix.length);
    if (cut !== -1) return { after: marker.slice(0, cut + delimiter.length), prefix: true };
  }
  return { after: marker, prefix: false };
}

/** The `after` of the domain's path listing that resumes past a position: past every key under a common prefix. */
function afterOf(position: ListPosition | undefined): string | undefined {
  if (position === undefined) return undefined;
  // U+10FFFF sorts after every other code point, so every key that starts with the prefix is skipped.
  return position.prefix ? `${position.after}\u{10FFFF}` : position.after;
}

/** S3's `encoding-type=url`: percent-encoding with `/` kept and a space as `+` (clients decode with unquote_plus). */
function urlEncodeKey(text: string): string {
  return encodeURIComponent(text).replace(/%2F/g, '/').replace(/%20/g, '+');
}

/** An opaque continuation token: the position, and the signer's MAC binding it to the client. */
function makeContinuationToken(signer: Signer, clientId: string, position: ListPosition): string {
  const payload = Buffer.from(JSON.stringify({ a: position.after, p: position.prefix }), 'utf8').toString('base64url');
  return `${payload}.${signer.mac('s3-continuation-token', [clientId, payload])}`;
}

function readContinuationToken(signer: Signer, clientId: string, token: string): ListPosition {
  const invalid = (): S3Refusal => new S3Refusal('InvalidArgument', 'The continuation token provided is incorrect');
  if (token.length > MAX_TOKEN_LENGTH) throw invalid();
  const dot = token.indexOf('.');
  if (dot === -1) throw invalid();
  const payload = token.slice(0, dot);
  if (!signer.verifyMac('s3-continuation-token', [clientId, payload], token.slice(dot + 1))) throw invalid();
  const position = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { a?: unknown; p?: unknown };
  if (typeof position.a !== 'string' || typeof position.p !== 'boolean') throw invalid();
  return { after: position.a, prefix: position.p };
}

// ---- GetObject and HeadObject -----------------------------------------------------------------

/**
 * GetObject and HeadObject: the core's download session, as for a native download (entitlement,
 * budget, quota, the domain's decision, settlement), with the conditionals decided on the S3 view
 * of the file (its MD5 entity tag); the bytes are those of the version whose headers were sent.
 */
async function getObject(deps: S3ApiDependencies, req: Request, res: Response, principal: Principal, key: string, query: Query): Promise<void> {
  contextOf(res).operationId = req.method === 'HEAD' ? 's3:HeadObject' : 's3:GetObject';
  const overrides = responseOverrides(query);
  const abort = abortOnClose(res);
  const session = startDownloadSession(
    deps.downloads,
    req,
    res,
    { interface: 's3', clientId: principal.clientId, symbol: null, path: key },
    // S3 answers its rate limit with 503 SlowDown: a refusal, not a failure.
    () => contextOf(res).errorCode === 'SlowDown',
  );
  const request = parseDownloadRequest(req.method, (name) => req.get(name), deps.clock.now());
  let decided: DecidedDownload;
  try {
    decided = await session.decide({ principal, target: { path: key }, request, viewOf: (properties) => ({ ...properties, etag: s3ETagOf(properties) }) });
  } finally {
    showStandings(res, session);
  }
  const { decision, properties, view } = decided;
  switch (decision.kind) {
    case 'notModified':
      setValidators(res, view);
      res.status(304).end();
      return;
    case 'preconditionFailed':
      throw new S3Refusal('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
    case 'rangeNotSatisfiable':
      res.setHeader('Content-Range', `bytes */${decision.size}`);
      throw new S3Refusal('InvalidRange', 'The requested range is not satisfiable');
    case 'full':
    case 'partial':
      break;
  }
  const sha256 = decision.kind === 'full' && wantsChecksum(req) ? await checksumOf(deps, req, decided) : undefined;
  await sendDecidedBody(req, res, {
    session,
    decided,
    abort,
    idleTimeoutMs: deps.idleTimeoutMs,
    writeHeaders: () => {
      setValidators(res, view);
      res.setHeader('Content-Type', properties.contentType ?? 'application/octet-stream');
      res.setHeader('Content-Disposition', properties.contentDisposition ?? attachmentFor(decided.entry.fileName));
      if (properties.contentEncoding !== undefined) res.setHeader('Content-Encoding', properties.contentEncoding);
      if (properties.contentLanguage !== undefined) res.setHeader('Content-Language', properties.contentLanguage);
      for (const [header, value] of overrides) res.setHeader(header, value);
      if (sha256 !== undefined) {
        // As S3 answers in checksum mode: the whole object's digest in base64, which SDKs verify.
        res.setHeader('x-amz-checksum-sha256', Buffer.from(sha256, 'hex').toString('base64'));
        res.setHeader('x-amz-checksum-type', 'FULL_OBJECT');
      }
    },
    onEndedEarly: (reason, error) =>
      req.log.warn({ clientId: principal.clientId, path: key, reason, err: error }, 'S3 GetObject ended early; connection destroyed'),
  });
}

/** `x-amz-checksum-mode: ENABLED`: the client asks for the object's checksum (SDKs then verify the body with it). */
function wantsChecksum(req: Request): boolean {
  return req.get('x-amz-checksum-mode')?.toUpperCase() === 'ENABLED';
}

/** The SHA-256 of the version being served, once computed; none when it cannot be read (it is optional). */
async function checksumOf(deps: S3ApiDependencies, req: Request, decided: DecidedDownload): Promise<string | undefined> {
  try {
    return await deps.files.checksumOf({ path: decided.entry.fileName, etag: decided.properties.etag });
  } catch (error) {
    req.log.warn({ path: decided.entry.fileName, err: error }, 'SHA-256 of the object could not be read: answered without x-amz-checksum-sha256');
    return undefined;
  }
}

function setValidators(res: Response, file: BlobProperties): void {
  res.setHeader('ETag', file.etag);
  res.setHeader('Last-Modified', file.lastModified.toUTCString());
  res.setHeader('Cache-Control', 'private');
  // As a native download: a stored file is never a page of the gateway's origin.
  res.setHeader('Content-Security-Policy', 'sandbox');
}

/** The `response-*` query overrides, checked as header values (no control characters, bounded). */
function responseOverrides(query: Query): Array<readonly [string, string]> {
  const headers: Array<readonly [string, string]> = [];
  for (const [parameter, header] of RESPONSE_OVERRIDES) {
    const value = queryValue(query, parameter);
    if (value === undefined) continue;
    if (value.length > 1024 || /[\x00-\x1f\x7f]/.test(value)) throw new S3Refusal('InvalidArgument', `${parameter} is not a valid header value`);
    if (parameter === 'response-content-disposition') {
      try {
        contentDisposition.parse(value);
      } catch {
        throw new S3Refusal('InvalidArgument', 'response-content-disposition is not a valid Content-Disposition');
      }
    }
    // Latin-1 only, as HTTP header values are: other characters would be mangled on the wire.
    if (/[^\x20-\xff]/.test(value)) throw new S3Refusal('InvalidArgument', `${parameter} must be ISO-8859-1; use RFC 6266 filename* for other names`);
    headers.push([header, value]);
  }
  return headers;
}
