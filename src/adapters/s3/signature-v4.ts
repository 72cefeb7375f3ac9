import { createHash, createHmac, timingSafeEqual, type Hash, type Hmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import {
  ALGORITHM_IDENTIFIER,
  getCanonicalHeaders,
  getSigningKey,
  SignatureV4Base,
  UNSIGNED_PAYLOAD,
} from '@smithy/signature-v4';
import type { HttpRequest } from '@smithy/types';
import { S3Refusal } from './s3-errors.js';

/**
 * AWS Signature Version 4 as S3 checks it: the grammar of the `Authorization` header and of a
 * presigned URL's `X-Amz-*` query is read here; the canonical request, the string to sign and the
 * signing key are @smithy/signature-v4's (the AWS SDK's own signer), so that the gateway computes
 * exactly what the clients' signers computed. Signatures are compared in constant time.
 */

/** The clock skew S3 allows between a signed request's date and the server's (15 minutes). */
export const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000;
/** The longest a presigned URL may live, as S3 says: 7 days. */
export const MAX_PRESIGNED_SECONDS = 7 * 24 * 60 * 60;
/** An `Authorization` header or a query longer than this is not read. */
const MAX_AUTHORIZATION_LENGTH = 8192;

/** A request as it arrived: the raw path and query, byte for byte, and Node's lower-cased headers. */
export interface SignedRequest {
  readonly method: string;
  readonly rawPath: string;
  readonly rawQuery: string;
  readonly headers: IncomingHttpHeaders;
}

/** What a request's signature claims, read from its header or its query. */
export interface SignatureClaims {
  readonly kind: 'header' | 'presigned';
  readonly accessKeyId: string;
  /** `YYYYMMDD/<region>/s3/aws4_request`. */
  readonly scope: string;
  readonly shortDate: string;
  readonly region: string;
  /** `YYYYMMDDTHHMMSSZ`, as signed. */
  readonly longDate: string;
  readonly signedAt: Date;
  /** Lower-case names, as listed. */
  readonly signedHeaders: readonly string[];
  /** 64 lower-case hex digits. */
  readonly signature: string;
  readonly sessionToken: string | undefined;
  /** A presigned URL's lifetime in seconds. */
  readonly expiresSeconds: number | undefined;
}

/** Whether the request carries a Signature Version 4: then it is an S3 request. */
export function isSigV4Request(headers: IncomingHttpHeaders, rawQuery: string): boolean {
  const authorization = headers.authorization;
  if (typeof authorization === 'string' && authorization.startsWith(`${ALGORITHM_IDENTIFIER} `)) return true;
  return /(^|&)X-Amz-Algorithm=/.test(rawQuery);
}

/**
 * Whether the request carries an AWS Signature Version 2 (`Authorization: AWS <id>:<signature>`,
 * or a presigned URL's `AWSAccessKeyId` and `Signature`): an S3 request, in a signing scheme this
 * API does not accept. boto3 still presigns with it unless told `signature_version='s3v4'`; the
 * native API uses neither, so such a request is told to sign with Version 4 rather than to get a
 * bearer token.
 */
export function isSigV2Request(headers: IncomingHttpHeaders, rawQuery: string): boolean {
  const authorization = headers.authorization;
  if (typeof authorization === 'string' && /^AWS [^\s:]+:/.test(authorization)) return true;
  return /(^|&)AWSAccessKeyId=/.test(rawQuery) && /(^|&)Signature=/.test(rawQuery);
}

/**
 * The query's parameters, percent-decoded (`+` is a plus, as AWS signers send a space as `%20`),
 * in a prototype-less object; a repeated name keeps every value. Throws `InvalidArgument` for a
 * query that is not validly percent-encoded.
 */
export function parseQuery(rawQuery: string): Record<string, string | string[]> {
  const query = Object.create(null) as Record<string, string | string[]>;
  if (rawQuery === '') return query;
  for (const parameter of rawQuery.split('&')) {
    if (parameter === '') continue;
    const equals = parameter.indexOf('=');
    const name = decode(equals === -1 ? parameter : parameter.slice(0, equals));
    const value = equals === -1 ? '' : decode(parameter.slice(equals + 1));
    const existing = query[name];
    query[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return query;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new S3Refusal('InvalidArgument', 'The query string is not validly percent-encoded');
  }
}

/** The single value of a query parameter; a repeated one is refused. */
export function queryValue(query: Readonly<Record<string, string | string[]>>, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new S3Refusal('InvalidArgument', `The query parameter ${name} is repeated`);
  return value;
}

/**
 * Reads the signature's claims and checks the request's date against `now`: skew beyond 15
 * minutes is `RequestTimeTooSkewed`; a presigned URL past its `X-Amz-Expires` is `AccessDenied`.
 */
export function readSignatureClaims(request: SignedRequest, query: Readonly<Record<string, string | string[]>>, now: Date): SignatureClaims {
  const authorization = request.headers.authorization;
  const claims =
    typeof authorization === 'string' && authorization.startsWith(`${ALGORITHM_IDENTIFIER} `)
      ? fromHeader(authorization, request.headers)
      : fromQuery(query);
  const skew = claims.signedAt.getTime() - now.getTime();
  if (claims.kind === 'header') {
    if (Math.abs(skew) > MAX_CLOCK_SKEW_MS) {
      throw new S3Refusal('RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
    }
  } else {
    if (skew > MAX_CLOCK_SKEW_MS) throw new S3Refusal('AccessDenied', 'Request is not valid yet');
    if (now.getTime() > claims.signedAt.getTime() + (claims.expiresSeconds ?? 0) * 1000) {
      throw new S3Refusal('AccessDenied', 'Request has expired');
    }
  }
  return claims;
}

function fromHeader(authorization: string, headers: IncomingHttpHeaders): SignatureClaims {
  if (authorization.length > MAX_AUTHORIZATION_LENGTH) throw new S3Refusal('AuthorizationHeaderMalformed', 'The authorization header is too long.');
  const fields = new Map<string, string>();
  for (const part of authorization.slice(ALGORITHM_IDENTIFIER.length + 1).split(',')) {
    const equals = part.indexOf('=');
    if (equals === -1) continue;
    fields.set(part.slice(0, equals).trim(), part.slice(equals + 1).trim());
  }
  const longDate = headerValue(headers, 'x-amz-date');
  if (longDate === undefined) throw new S3Refusal('AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header');
  const credential = fields.get('Credential');
  const signedHeaders = fields.get('SignedHeaders');
  const signature = fields.get('Signature');
  if (credential === undefined || signedHeaders === undefined || signature === undefined) {
    throw new S3Refusal('AuthorizationHeaderMalformed', 'The authorization header is malformed; it must hold Credential, SignedHeaders and Signature.');
  }
  return {
    kind: 'header',
    ...credentialParts(credential, longDate, 'AuthorizationHeaderMalformed'),
    signedHeaders: signedHeaderList(signedHeaders, 'AuthorizationHeaderMalformed'),
    signature: signatureOf(signature),
    sessionToken: headerValue(headers, 'x-amz-security-token'),
    expiresSeconds: undefined,
  };
}

function fromQuery(query: Readonly<Record<string, string | string[]>>): SignatureClaims {
  const value = (name: string): string => {
    const found = queryValue(query, name);
    if (found === undefined) throw new S3Refusal('AuthorizationQueryParametersError', `Query-string authentication requires the ${name} parameter.`);
    return found;
  };
  if (value('X-Amz-Algorithm') !== ALGORITHM_IDENTIFIER) {
    throw new S3Refusal('AuthorizationQueryParametersError', `X-Amz-Algorithm only supports "${ALGORITHM_IDENTIFIER}"`);
  }
  const expires = value('X-Amz-Expires');
  if (!/^\d{1,7}$/.test(expires) || Number(expires) < 1 || Number(expires) > MAX_PRESIGNED_SECONDS) {
    throw new S3Refusal('AuthorizationQueryParametersError', `X-Amz-Expires must be between 1 and ${MAX_PRESIGNED_SECONDS} seconds`);
  }
  return {
    kind: 'presigned',
    ...credentialParts(value('X-Amz-Credential'), value('X-Amz-Date'), 'AuthorizationQueryParametersError'),
    signedHeaders: signedHeaderList(value('X-Amz-SignedHeaders'), 'AuthorizationQueryParametersError'),
    signature: signatureOf(value('X-Amz-Signature')),
    sessionToken: queryValue(query, 'X-Amz-Security-Token'),
    expiresSeconds: Number(expires),
  };
}

type MalformedCode = 'AuthorizationHeaderMalformed' | 'AuthorizationQueryParametersError';

/** `<access key id>/<YYYYMMDD>/<region>/s3/aws4_request`, dated the same day as the request. */
function credentialParts(
  credential: string,
  longDate: string,
  malformed: MalformedCode,
): Pick<SignatureClaims, 'accessKeyId' | 'scope' | 'shortDate' | 'region' | 'longDate' | 'signedAt'> {
  const parts = credential.split('/');
  const [accessKeyId, shortDate, region, service, terminator] = parts;
  if (parts.length !== 5 || accessKeyId === undefined || accessKeyId === '' || region === undefined || !/^[a-z0-9-]{1,64}$/.test(region)) {
    throw new S3Refusal(malformed, 'The credential is malformed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".');
  }
  if (service !== 's3' || terminator !== 'aws4_request') {
    throw new S3Refusal(malformed, 'The credential is not scoped to the s3 service.');
  }
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(longDate);
  const signedAt = match === null ? undefined : new Date(Date.UTC(+match[1]!, +match[2]! - 1, +match[3]!, +match[4]!, +match[5]!, +match[6]!));
  if (signedAt === undefined || Number.isNaN(signedAt.getTime())) {
    throw new S3Refusal('AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header');
  }
  if (shortDate !== longDate.slice(0, 8)) {
    throw new S3Refusal(malformed, 'The credential date does not match the date of the request.');
  }
  return { accessKeyId, scope: `${shortDate}/${region}/s3/aws4_request`, shortDate, region, longDate, signedAt };
}

function signedHeaderList(list: string, malformed: MalformedCode): string[] {
  const names = list.split(';');
  if (names.length > 64 || names.some((name) => !/^[a-z0-9-]{1,128}$/.test(name))) {
    throw new S3Refusal(malformed, 'SignedHeaders is malformed.');
  }
  if (!names.includes('host')) throw new S3Refusal('AccessDenied', 'The host header must be signed.');
  return names;
}

/** Any other form never matches: the signature check will fail, as for a wrong one. */
function signatureOf(signature: string): string {
  return /^[0-9a-f]{64}$/.test(signature) ? signature : '';
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/**
 * Whether `claims.signature` is the signature of the request with `secretAccessKey`: the canonical
 * request is rebuilt from the headers the client listed and the request target, re-encoded the way
 * AWS signers encode S3 paths (each segment percent-encoded once, RFC 3986 unreserved characters
 * as they are).
 */
export async function isSignatureValid(
  request: SignedRequest,
  query: Readonly<Record<string, string | string[]>>,
  claims: SignatureClaims,
  secretAccessKey: string,
): Promise<boolean> {
  if (claims.signature === '') return false;
  const headers: Record<string, string> = {};
  for (const name of claims.signedHeaders) {
    const value = headerValue(request.headers, name);
    if (value !== undefined) headers[name] = value;
  }
  // The library's canonical query leaves X-Amz-Signature out, as a presigned URL's must.
  const signable: HttpRequest = {
    method: request.method,
    protocol: 'https:',
    hostname: '',
    path: canonicalPath(request.rawPath),
    query: query as Record<string, string | string[]>,
    headers,
  };
  const canonicalHeaders = getCanonicalHeaders(signable, undefined, new Set(claims.signedHeaders));
  const payloadHash = claims.kind === 'presigned' ? UNSIGNED_PAYLOAD : (headers['x-amz-content-sha256'] ?? EMPTY_SHA256);
  const signingKey = await getSigningKey(Sha256, { accessKeyId: claims.accessKeyId, secretAccessKey }, claims.shortDate, claims.region, 's3');
  const expected = await canonicalSigner.signatureOf(signable, canonicalHeaders, payloadHash, claims, signingKey);
  return timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(claims.signature, 'hex'));
}

const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** `/bucket/key` with each segment decoded, then encoded as AWS signers encode S3 paths. */
export function canonicalPath(rawPath: string): string {
  return rawPath
    .split('/')
    .map((segment) => {
      let decoded: string;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        throw new S3Refusal('InvalidURI', 'Could not parse the specified URI.');
      }
      return encodeURIComponent(decoded).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    })
    .join('/');
}

/** SHA-256 and HMAC-SHA-256 in the shape @smithy/signature-v4 takes (`new Sha256(secret?)`). */
class Sha256 {
  readonly #hash: Hash | Hmac;

  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBytes(secret));
  }

  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(toBytes(data));
  }

  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }

  reset(): void {
    throw new Error('not supported: make a new Sha256');
  }
}

function toBytes(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

/** The library's canonical request and string to sign, reached through its base class. */
class CanonicalSigner extends SignatureV4Base {
  constructor() {
    // `uriEscapePath: false`: S3 paths are encoded once (the path given is already canonical).
    super({ service: 's3', region: 'us-east-1', credentials: { accessKeyId: '', secretAccessKey: '' }, sha256: Sha256, uriEscapePath: false });
  }

  async signatureOf(
    request: HttpRequest,
    canonicalHeaders: Record<string, string>,
    payloadHash: string,
    claims: SignatureClaims,
    signingKey: Uint8Array,
  ): Promise<string> {
    const canonicalRequest = this.createCanonicalRequest(request, canonicalHeaders, payloadHash);
    const stringToSign = await this.createStringToSign(claims.longDate, claims.scope, canonicalRequest, ALGORITHM_IDENTIFIER);
    return createHmac('sha256', signingKey).update(stringToSign, 'utf8').digest('hex');
  }
}

const canonicalSigner = new CanonicalSigner();
