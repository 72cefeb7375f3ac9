import { expect } from 'chai';
import { pino, type Logger } from 'pino';
import { Writable } from 'node:stream';
import {
  describeError,
  errorCodes,
  rawErrorResponse,
  RequestRefused,
  type ErrorCode,
  type HttpErrorCode,
} from '../../src/adapters/http/error-responses.js';
import {
  CatalogNotFound,
  ContentChanged,
  FileNotFound,
  IndexMalformed,
  InvalidClient,
  InvalidPath,
  InvalidToken,
  NotEntitled,
  QuotaExceeded,
  StorageUnavailable,
  SubscriptionInactive,
  type GatewayError,
  WebhookLimitReached,
  WebhookNotFound,
  WebhookUrlRefused,
} from '../../src/domain/errors.js';
import { openApi } from '../support/contract.js';

/**
 * The error table, stated independently of `error-responses.ts`: what each code must answer. A
 * change to a status, a challenge or a retry hint has to change this table too.
 */
const expected: Readonly<Record<ErrorCode, { status: number; error: string; shape: 'error' | 'oauth' | 'readiness'; headers?: Record<string, RegExp> }>> = {
  invalid_request: { status: 400, error: 'Bad request', shape: 'error' },
  invalid_path: { status: 400, error: 'Bad request', shape: 'error' },
  missing_token: { status: 401, error: 'Unauthorized', shape: 'error', headers: { 'WWW-Authenticate': /^Bearer realm="data-file-gateway"$/ } },
  invalid_token: {
    status: 401,
    error: 'Unauthorized',
    shape: 'error',
    headers: { 'WWW-Authenticate': /^Bearer realm="data-file-gateway", error="invalid_token", error_description="[^"]+"$/ },
  },
  not_entitled: { status: 403, error: 'Access denied', shape: 'error' },
  invalid_link: { status: 403, error: 'Access denied', shape: 'error' },
  file_not_found: { status: 404, error: 'Not found', shape: 'error' },
  catalog_not_found: { status: 404, error: 'Not found', shape: 'error' },
  route_not_found: { status: 404, error: 'Not found', shape: 'error' },
  method_not_allowed: { status: 405, error: 'Method not allowed', shape: 'error', headers: { Allow: /^GET, HEAD$/ } },
  request_timeout: { status: 408, error: 'Request timeout', shape: 'error', headers: { Connection: /^close$/ } },
  precondition_failed: { status: 412, error: 'Precondition failed', shape: 'error' },
  cursor_expired: { status: 410, error: 'Gone', shape: 'error' },
  webhook_url_refused: { status: 400, error: 'Bad request', shape: 'error' },
  webhook_not_found: { status: 404, error: 'Not found', shape: 'error' },
  webhook_limit_reached: { status: 409, error: 'Conflict', shape: 'error' },
  range_not_satisfiable: { status: 416, error: 'Range not satisfiable', shape: 'error', headers: { 'Content-Range': /^bytes \*\/1234$/ } },
  rate_limited: { status: 429, error: 'Too many requests', shape: 'error', headers: { 'Retry-After': /^17$/ } },
  quota_exceeded: { status: 429, error: 'Too many requests', shape: 'error', headers: { 'Retry-After': /^3600$/ } },
  headers_too_large: { status: 431, error: 'Request header fields too large', shape: 'error', headers: { Connection: /^close$/ } },
  index_malformed: { status: 500, error: 'Internal error', shape: 'error' },
  internal_error: { status: 500, error: 'Internal error', shape: 'error' },
  storage_failed: { status: 502, error: 'Bad gateway', shape: 'error' },
  storage_unavailable: { status: 503, error: 'Service unavailable', shape: 'error', headers: { 'Retry-After': /^5$/ } },
  content_changed: { status: 503, error: 'Service unavailable', shape: 'error', headers: { 'Retry-After': /^1$/ } },
  limits_unavailable: { status: 503, error: 'Service unavailable', shape: 'error', headers: { 'Retry-After': /^17$/ } },
  not_ready: { status: 503, error: 'not_ready', shape: 'readiness' },
  invalid_client: {
    status: 401,
    error: 'invalid_client',
    shape: 'oauth',
    headers: { 'WWW-Authenticate': /^Basic realm="data-file-gateway"/, Pragma: /^no-cache$/ },
  },
  unsupported_grant_type: { status: 400, error: 'unsupported_grant_type', shape: 'oauth', headers: { Pragma: /^no-cache$/ } },
  invalid_grant: { status: 400, error: 'invalid_grant', shape: 'oauth', headers: { Pragma: /^no-cache$/ } },
  unauthorized_client: { status: 400, error: 'unauthorized_client', shape: 'oauth', headers: { Pragma: /^no-cache$/ } },
  invalid_scope: { status: 400, error: 'invalid_scope', shape: 'oauth', headers: { Pragma: /^no-cache$/ } },
};

/** One failure of each code, as the code that raises it would. */
function failureOf(code: ErrorCode): Error {
  const domain: Partial<Record<ErrorCode, () => GatewayError>> = {
    not_entitled: () => new NotEntitled('Symbol "X" is not in the subscription of client "acme"'),
    file_not_found: () => new FileNotFound('File "a.csv" for symbol "A" does not exist'),
    catalog_not_found: () => new CatalogNotFound('No catalog was found for client "acme"'),
    index_malformed: () => new IndexMalformed('The index has no Symbol column'),
    invalid_path: () => new InvalidPath('Segment 1 of the storage path is ".."'),
    content_changed: () => new ContentChanged('The blob at "a.csv" changed'),
    storage_unavailable: () => new StorageUnavailable('Azure Storage failed on "a.csv": 503 ServerBusy', { retryable: true }),
    storage_failed: () => new StorageUnavailable('Azure Storage failed on "a.csv": 403 AuthorizationFailure', { retryable: false }),
    invalid_client: () => new InvalidClient('Client authentication failed'),
    invalid_token: () => new InvalidToken('The token has expired'),
    webhook_url_refused: () => new WebhookUrlRefused('The webhook URL must use https'),
    webhook_not_found: () => new WebhookNotFound('No webhook wh_aaaaaaaaaaaaaaaaaaaaaaaaaa'),
    webhook_limit_reached: () => new WebhookLimitReached('A client may have at most 10 webhooks'),
    unauthorized_client: () => new SubscriptionInactive('The subscription is not active: it ended at 2026-11-01T00:00:00.000Z'),
    quota_exceeded: () =>
      new QuotaExceeded('The monthly byte quota does not cover this request', {
        remaining: 5,
        resetsAt: new Date('2026-12-01T00:00:00.000Z'),
        retryAfterSeconds: 3600,
      }),
  };
  const make = domain[code];
  if (make !== undefined) return make();
  if (code === 'internal_error') return new TypeError('Cannot read properties of undefined (reading "x") at /srv/secret/path.js');
  return new RequestRefused(code as HttpErrorCode, `refused: ${code}`, { allow: ['GET', 'HEAD'], size: 1234, retryAfterSeconds: 17, reasons: ['storage'] });
}

describe('the error renderer (src/adapters/http/error-responses.ts)', function () {
  describe('for each code of its table', function () {
    it('has exactly the codes this test expects', function () {
      expect([...errorCodes].sort()).to.deep.equal(Object.keys(expected).sort());
    });

    for (const code of Object.keys(expected) as ErrorCode[]) {
      const want = expected[code];
      it(`answers ${code} with ${want.status}, its headers, Cache-Control: no-store and a ${want.shape === 'oauth' ? 'RFC 6749' : want.shape === 'readiness' ? 'readiness' : 'JSON'} body carrying the code`, function () {
        const response = describeError(failureOf(code));
        expect(response.status).to.equal(want.status);
        expect(response.code).to.equal(code);
        expect(response.headers['Cache-Control']).to.equal('no-store');
        for (const [name, pattern] of Object.entries(want.headers ?? {})) {
          expect(response.headers[name], name).to.match(pattern);
        }
        if (want.shape === 'oauth') {
          expect(response.body).to.have.all.keys('error', 'error_description', 'code');
          expect(response.body).to.include({ error: want.error, code });
        } else if (want.shape === 'readiness') {
          expect(response.body).to.deep.equal({ status: 'not_ready', reasons: ['storage'] });
        } else {
          expect(response.body).to.have.all.keys('error', 'message', 'code');
          expect(response.body).to.include({ error: want.error, code });
          expect(response.body['message']).to.be.a('string').and.not.equal('');
        }
      });
    }
  });

  describe('the contract', function () {
    it('declares every code the table can answer in openapi.yaml (Error.code, OAuthError.code or NotReady.status), and no other', async function () {
      const schemas = ((await openApi()).definition.components?.schemas ?? {}) as Record<string, { properties?: Record<string, { enum?: string[] }> }>;
      const declared = new Set([
        ...(schemas['Error']?.properties?.['code']?.enum ?? []),
        ...(schemas['OAuthError']?.properties?.['code']?.enum ?? []),
        ...(schemas['NotReady']?.properties?.['status']?.enum ?? []),
      ]);
      expect([...declared].sort()).to.deep.equal([...errorCodes].sort());
    });
  });

  describe('when the failure is not one the gateway names', function () {
    it('answers 500 internal_error with a generic message that reveals nothing of the cause', function () {
      const response = describeError(new Error('ENOENT: /etc/gateway/clients.json'));
      expect(response.status).to.equal(500);
      expect(response.body).to.deep.equal({ error: 'Internal error', message: 'The gateway failed to handle the request', code: 'internal_error' });
    });

    for (const thrown of [undefined, null, 'a string', 42]) {
      it(`answers 500 internal_error for a thrown ${JSON.stringify(thrown)}`, function () {
        expect(describeError(thrown).code).to.equal('internal_error');
      });
    }
  });

  describe('when storage fails', function () {
    it('never shows storage\'s own message to the subscriber', function () {
      const response = describeError(failureOf('storage_failed'));
      expect(JSON.stringify(response.body)).to.not.include('AuthorizationFailure');
    });
  });

  describe('when a validation failure lists its problems', function () {
    it('puts them in details', function () {
      const response = describeError(new RequestRefused('invalid_request', 'The request does not match the API contract', { validation: ['query.limit must be <= 10000'] }));
      expect(response.body['details']).to.deep.equal(['query.limit must be <= 10000']);
    });
  });

  describe('when the token endpoint refuses a request', function () {
    it('answers invalid_request in the RFC 6749 shape, with the same code', function () {
      const response = describeError(new RequestRefused('invalid_request', 'Missing parameter: `grant_type`', { oauth: true }));
      expect(response.body).to.deep.equal({ error: 'invalid_request', error_description: 'Missing parameter: `grant_type`', code: 'invalid_request' });
      expect(response.headers['Pragma']).to.equal('no-cache');
    });
  });

  describe('when a token error message holds characters a quoted-string cannot', function () {
    it('keeps the WWW-Authenticate challenge well-formed', function () {
      const response = describeError(new InvalidToken('bad "token"\\\r\ninjected: yes'));
      expect(response.headers['WWW-Authenticate']).to.match(/^Bearer realm="data-file-gateway", error="invalid_token", error_description="[^"\\\r\n]*"$/);
    });
  });

  describe('rawErrorResponse (for requests Node refuses before Express)', function () {
    it('writes the same status, headers and body as raw HTTP/1.1 that closes the connection', function () {
      const raw = rawErrorResponse(new RequestRefused('headers_too_large', 'The request headers are too large'));
      const [head = '', body = ''] = raw.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      expect(statusLine).to.equal('HTTP/1.1 431 Request Header Fields Too Large');
      expect(headerLines).to.include('Connection: close');
      expect(headerLines).to.include('Cache-Control: no-store');
      expect(headerLines).to.include(`Content-Length: ${Buffer.byteLength(body)}`);
      expect(JSON.parse(body)).to.deep.equal({ error: 'Request header fields too large', message: 'The request headers are too large', code: 'headers_too_large' });
    });
  });

  describe('logging', function () {
    const captured = (): { lines: Array<Record<string, unknown>>; logger: Logger } => {
      const lines: Array<Record<string, unknown>> = [];
      const sink = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
          callback();
        },
      });
      return { lines, logger: pino({ level: 'debug' }, sink) };
    };

    it('logs a 5xx at error level with its cause and code', function () {
      const { lines, logger } = captured();
      rawErrorResponse(new StorageUnavailable('Azure Storage failed', { retryable: true, cause: new Error('ECONNRESET') }), logger);
      expect(lines).to.have.length(1);
      expect(lines[0]).to.include({ level: 50, code: 'storage_unavailable', status: 503 });
      expect(JSON.stringify(lines[0])).to.include('Azure Storage failed');
    });

    it('logs a routine refusal at debug level only', function () {
      const { lines, logger } = captured();
      rawErrorResponse(new NotEntitled('not yours'), logger);
      expect(lines.map((line) => line['level'])).to.deep.equal([20]);
    });
  });
});
