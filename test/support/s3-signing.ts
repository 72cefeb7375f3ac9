import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import type { HttpResponse } from './contract.js';
import { sendRaw, type TestGateway } from './gateway.js';

/** SHA-256 in the shape the AWS SDK's signer takes (`new Sha256(secret?)`), from node:crypto. */
class Sha256 {
  readonly #hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
  reset(): void {}
}

function bytes(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

export interface S3Key {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

function signerFor(key: S3Key): SignatureV4 {
  return new SignatureV4({ service: 's3', region: 'us-east-1', credentials: key, sha256: Sha256, uriEscapePath: false });
}

function queryOf(rawQuery: string): Record<string, string> {
  const query: Record<string, string> = {};
  for (const part of rawQuery === '' ? [] : rawQuery.split('&')) {
    const [name = '', value = ''] = part.split('=');
    query[decodeURIComponent(name)] = decodeURIComponent(value);
  }
  return query;
}

/** A request signed (Authorization header) by the AWS SDK's own signer, sent byte for byte as `pathAndQuery`. */
/** A SigV4-signed raw request; `unsigned` headers (a `Range`) are added after signing, as clients may. */
export async function signedRaw(
  gateway: TestGateway,
  method: string,
  pathAndQuery: string,
  key: S3Key,
  signingDate: Date,
  unsigned: Readonly<Record<string, string>> = {},
): Promise<HttpResponse> {
  const [path = '/', rawQuery = ''] = pathAndQuery.split('?');
  const signed = await signerFor(key).sign(
    {
      method,
      protocol: 'http:',
      hostname: '127.0.0.1',
      port: gateway.port,
      path,
      query: queryOf(rawQuery),
      headers: { host: `127.0.0.1:${gateway.port}`, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    },
    { signingDate },
  );
  return sendRaw(gateway.port, method, pathAndQuery, { ...signed.headers, ...unsigned });
}

/** A presigned GET URL, made as @aws-sdk/s3-request-presigner makes them (payload UNSIGNED-PAYLOAD). */
export async function presignedUrl(gateway: Pick<TestGateway, 'baseUrl' | 'port'>, path: string, key: S3Key, signingDate: Date, expiresIn: number): Promise<string> {
  const presigned = await signerFor(key).presign(
    {
      method: 'GET',
      protocol: 'http:',
      hostname: '127.0.0.1',
      port: gateway.port,
      path,
      query: {},
      headers: { host: `127.0.0.1:${gateway.port}`, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    },
    { signingDate, expiresIn, unhoistableHeaders: new Set(['x-amz-content-sha256']), unsignableHeaders: new Set(['x-amz-content-sha256']) },
  );
  const query = Object.entries(presigned.query ?? {})
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
    .join('&');
  return `${gateway.baseUrl}${path}?${query}`;
}
