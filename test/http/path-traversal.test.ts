import { readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import type { HttpResponse } from '../support/contract.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { localFolderFixture } from '../support/store-fixtures.js';
import { jsonOf } from '../support/json.js';

/** Distinctive, so that finding it in a body cannot be a coincidence of wording. */
const SECRET = 'TOP-SECRET-c0ffee-7f3a9b1d-outside-the-root';
const OK_CSV = 'date,value\n2024-01-02,1\n';

interface HostilePath {
  readonly path: string;
  /** The exact status the gateway gives to GET; every case must at least be a 4xx. */
  readonly status: number;
  readonly why: string;
  /** Without a token: 401 on every operation (authentication comes first); 404 where no route matches. */
  readonly unauthenticatedStatus?: number;
}

const LONG_SEGMENT = 'a'.repeat(300);

/** Sent byte for byte by the harness's HTTP client, which sends anything but spaces and controls. */
const HOSTILE_PATHS: readonly HostilePath[] = [
  { path: '/../outside/secret.txt', status: 400, why: 'a .. segment' },
  { path: '/data/../../outside/secret.txt', status: 400, why: '.. segments after a folder' },
  { path: '/../../../../../../etc/passwd', status: 400, why: 'many .. segments' },
  { path: '/%2e%2e/outside/secret.txt', status: 400, why: 'an encoded .. segment' },
  { path: '/.%2e/outside/secret.txt', status: 400, why: 'a half-encoded .. segment' },
  { path: '/%2E%2E%2Foutside%2Fsecret.txt', status: 400, why: 'encoded dots and slashes, upper case' },
  { path: '/data%2f..%2f..%2foutside%2fsecret.txt', status: 400, why: 'encoded slashes around ..' },
  { path: '/data/%2e%2e/%2e%2e/outside/secret.txt', status: 400, why: 'encoded .. segments after a folder' },
  { path: '/..%5coutside%5csecret.txt', status: 400, why: 'encoded backslashes' },
  { path: '/%2e%2e%5c%2e%2e%5coutside%5csecret.txt', status: 400, why: 'encoded dots and backslashes' },
  { path: '/data\\..\\..\\outside\\secret.txt', status: 400, why: 'raw backslashes' },
  { path: '/data/..%252f..%252foutside%252fsecret.txt', status: 400, why: 'a doubly encoded slash' },
  { path: '/data/%252e%252e/x', status: 400, why: 'a doubly encoded .. segment' },
  { path: '/%c0%ae%c0%ae/x', status: 400, why: 'overlong UTF-8 dots' },
  { path: '/%ff', status: 400, why: 'invalid UTF-8' },
  { path: '/%ed%a0%80', status: 400, why: 'an encoded lone surrogate' },
  { path: '/%ef%bf%bd', status: 400, why: 'U+FFFD, the mark of a failed decode' },
  { path: '/data//ok.csv', status: 400, why: 'an empty segment' },
  { path: '/data/./ok.csv', status: 400, why: 'a . segment' },
  { path: '/./data/ok.csv', status: 400, why: 'a leading . segment' },
  { path: '/data/%2e/ok.csv', status: 400, why: 'an encoded . segment' },
  { path: '/data/ok.csv/..', status: 400, why: 'a trailing .. segment' },
  { path: '/data/ok.csv/', status: 400, why: 'a trailing slash' },
  { path: '/data/ok.csv%2f', status: 400, why: 'an encoded trailing slash' },
  { path: '/data/ok.csv%5c', status: 400, why: 'an encoded trailing backslash' },
  { path: '/data/..%20/x', status: 400, why: 'a segment of dots and a space (Windows trims it to ..)' },
  { path: '/data/%20', status: 400, why: 'a segment that is only a space' },
  { path: '/%00', status: 400, why: 'an encoded NUL' },
  { path: '/data/ok.csv%00.txt', status: 400, why: 'an encoded NUL before an extension' },
  { path: '/a%0d%0aSet-Cookie:x', status: 400, why: 'encoded CR LF (header injection)' },
  { path: '/data/ok.csv%09', status: 400, why: 'an encoded tab' },
  { path: '/.', status: 400, why: 'a lone . segment' },
  { path: '/..', status: 400, why: 'a lone .. segment' },
  { path: '/...', status: 400, why: 'a segment of three dots' },
  { path: '/%2e', status: 400, why: 'a lone encoded dot' },
  { path: '/%', status: 400, why: 'a truncated escape' },
  { path: '/%zz', status: 400, why: 'a malformed escape' },
  { path: '/%2fetc%2fpasswd', status: 400, why: 'an encoded absolute path' },
  { path: `/${'a'.repeat(1999)}`, status: 400, why: 'a 2000-character path' },
  { path: `/data/${LONG_SEGMENT}`, status: 400, why: 'a 300-character segment' },
  { path: '//etc/passwd', status: 404, why: 'an empty first segment (no route)' },
  { path: '/download/../data/ok.csv', status: 404, why: 'a .. under /download (no route)' },
  { path: '/catalog/../data/ok.csv', status: 404, why: 'a .. under /catalog (no route)' },
  { path: '/%63atalog/x.csv', status: 404, why: 'a route name percent-encoded (route names are never storage paths)' },
  { path: '/%64ownload/ok.csv', status: 404, why: 'an encoded /download as the first segment' },
  { path: '/%68ealth', status: 404, why: 'an encoded route name alone' },
  { path: '/etc/passwd', status: 403, why: 'a system file name, not in the index' },
  { path: '/proc/self/environ', status: 403, why: 'the process environment, not in the index' },
  { path: '/outside/secret.txt', status: 403, why: 'the sibling folder\'s name, not in the index' },
  { path: '/indexes/acme.csv', status: 403, why: 'the caller\'s own index file, which its index does not list' },
  { path: '/indexes/other.csv', status: 403, why: 'another client\'s index file' },
  { path: '/data/ok.csv%20', status: 403, why: 'a trailing space (another name)' },
  { path: '/data/ok.csv.', status: 403, why: 'a trailing dot (Windows would trim it)' },
  { path: '/DATA/OK.CSV', status: 403, why: 'another case (case-insensitive file systems)' },
  { path: '/data/ok.csv::$DATA', status: 403, why: 'an NTFS alternate data stream' },
  { path: '/data/ok.csv;.txt', status: 403, why: 'a ;-suffix (path parameters)' },
  { path: '/data/ok.csv%23', status: 403, why: 'an encoded #' },
  { path: '/%ef%bc%8e%ef%bc%8e/outside/secret.txt', status: 403, why: 'full-width dots (not dots)' },
  { path: '/download/..%2f..%2fx', status: 403, why: 'a traversal as a symbol' },
  { path: '/download/%2e%2e', status: 403, why: 'an encoded .. as a symbol' },
  { path: '/download/%2e%2e%2f%2e%2e%2foutside%2fsecret.txt', status: 403, why: 'a traversal to the secret as a symbol' },
  { path: '/info/..%2fx', status: 403, why: 'a traversal as an /info symbol' },
  { path: '/info/%2e%2e', status: 403, why: 'an encoded .. as an /info symbol' },
  { path: '/data/link.csv', status: 404, unauthenticatedStatus: 401, why: 'a listed symlink that points outside the root' },
];

/**
 * Targets that Node's HTTP client refuses to send (spaces, controls, raw non-ASCII bytes): written
 * on a raw socket. Node's own HTTP parser rejects them before Express runs; the server's
 * `clientError` handler (src/adapters/http/http-server.ts) answers the contract's JSON 400.
 */
const UNSENDABLE_TARGETS: ReadonlyArray<{ readonly target: Buffer; readonly why: string; readonly mayBeListedFile?: true }> = [
  // llhttp reads the extra space as part of the separator before HTTP/1.1: the target is the listed file.
  { target: Buffer.from('/data/ok.csv '), why: 'a raw trailing space', mayBeListedFile: true },
  { target: Buffer.from('/data/.. /../outside/secret.txt'), why: 'a raw space after dots' },
  { target: Buffer.from('/../outside/secret.txt\tx'), why: 'a raw tab' },
  { target: Buffer.from('/data/ok.csv\u0000.txt'), why: 'a raw NUL' },
  { target: Buffer.from('/data/ok.csv\u007f'), why: 'a raw DEL' },
  { target: Buffer.from('/funds/relatório.csv', 'utf8'), why: 'raw UTF-8 bytes' },
  { target: Buffer.from([0x2f, 0xc0, 0xae, 0xc0, 0xae, 0x2f, 0x78]), why: 'raw overlong UTF-8 dots' },
];


describe('hostile request paths on the local folder store', function () {
  let fixture: Awaited<ReturnType<typeof localFolderFixture>>;
  let gateway: TestGateway;
  let token: string;
  let secretPath: string;

  before(async function () {
    fixture = await localFolderFixture();
    // The fixture's root has a sibling outside/ holding secret.txt: make its content unmistakable.
    secretPath = join(dirname(fixture.root), 'outside', 'secret.txt');
    await writeFile(secretPath, SECRET);
    await fixture.put(
      'indexes/acme.csv',
      buildIndexCsv([
        buildIndexRow({ Symbol: 'OK', FileName: 'data/ok.csv' }),
        buildIndexRow({ Symbol: 'LINK', FileName: 'data/link.csv' }),
      ]),
    );
    await fixture.put('indexes/other.csv', buildIndexCsv([buildIndexRow({ Symbol: 'OTHER', FileName: 'data/other.csv' })]));
    await fixture.put('data/ok.csv', OK_CSV);
    const symlinks = fixture.capabilities.symlinks;
    if (symlinks === undefined) throw new Error('the local folder fixture should plant symlinks');
    await symlinks.toFileOutsideRoot('data/link.csv');
    gateway = await startGateway({
      store: fixture.store,
      clients: [
        { clientId: 'acme', secret: 'acme-secret-acme-secret' },
        { clientId: 'other', secret: 'other-secret-other-secret' },
      ],
      // Hundreds of refused requests from one client: the budget is not what is tested here.
      env: { DOWNLOAD_RATE_LIMIT: '100000' },
    });
    token = await gateway.tokenFor('acme');
  });

  after(async function () {
    await gateway?.close();
    await fixture?.cleanup();
  });

  /** Never a 2xx or 5xx, never the secret, and a JSON error body (headers only for HEAD). */
  const expectRefused = (response: HttpResponse, expectedStatus: number, method: string): void => {
    expect(response.status, 'status').to.equal(expectedStatus);
    expect(response.body.includes(SECRET), 'the body must not contain the secret').to.equal(false);
    expect(response.body.toString('latin1'), 'the body must not contain /etc/passwd').to.not.match(/root:.*:0:0:/);
    expect(response.headers['set-cookie'], 'no injected header').to.equal(undefined);
    expect(String(response.headers['content-type']), 'a JSON error').to.match(/^application\/json/);
    if (method === 'HEAD') {
      expect(response.body.length).to.equal(0);
      return;
    }
    const body = jsonOf(response);
    expect(body.error).to.be.a('string');
    expect(body.message).to.be.a('string');
  };

  describe('the setup', function () {
    it('has a secret outside the root that the symlink really reaches', async function () {
      expect(await readFile(secretPath, 'utf8')).to.equal(SECRET);
      expect(await readFile(join(fixture.root, 'data', 'link.csv'), 'utf8')).to.equal(SECRET);
    });

    it('serves the listed file by path: GET /data/ok.csv responds 200 (control)', async function () {
      const response = await gateway.get('acme', '/data/ok.csv');
      expect(response.status).to.equal(200);
      expect(response.body.toString()).to.equal(OK_CSV);
    });

    it('decodes a path exactly once: /data/ok%2Ecsv and /data/%6Fk.csv are the listed file (200)', async function () {
      for (const path of ['/data/ok%2Ecsv', '/data/%6Fk.csv']) {
        const response = await gateway.get('acme', path);
        expect(response.status, path).to.equal(200);
        expect(response.body.toString()).to.equal(OK_CSV);
      }
    });

    it('serves the listed file by symbol (control)', async function () {
      expect((await gateway.get('acme', '/download/OK')).body.toString()).to.equal(OK_CSV);
    });
  });

  describe('a listed symlink pointing outside the root', function () {
    for (const path of ['/data/link.csv', '/download/LINK']) {
      for (const method of ['GET', 'HEAD']) {
        it(`${method} ${path} responds 404 and never serves the secret`, async function () {
          expectRefused(await gateway.get('acme', path, {}, method), 404, method);
        });
      }
    }

    it('GET /info/LINK responds 404 and does not describe the secret', async function () {
      const response = await gateway.get('acme', '/info/LINK');
      expectRefused(response, 404, 'GET');
    });

    it('a Range on the symlink responds 404 too', async function () {
      expectRefused(await gateway.get('acme', '/data/link.csv', { range: 'bytes=0-5' }), 404, 'GET');
    });
  });

  for (const { path, status, why, unauthenticatedStatus } of HOSTILE_PATHS) {
    const shown = path.length > 80 ? `${path.slice(0, 40)}...(${path.length} chars)` : path;
    describe(`${shown} (${why})`, function () {
      for (const method of ['GET', 'HEAD']) {
        // HEAD gets GET's answer without content (RFC 9110 section 9.3.2), on every GET operation.
        it(`${method} responds ${status} with a JSON error and no secret`, async function () {
          expectRefused(await gateway.get('acme', path, {}, method), status, method);
        });
      }

      const anonymousStatus = unauthenticatedStatus ?? (status === 404 ? 404 : 401);
      it(`without a token, responds ${anonymousStatus} and no secret`, async function () {
        expectRefused(await gateway.request('GET', path), anonymousStatus, 'GET');
      });
    });
  }

  describe('request targets Node\'s HTTP client refuses to send, written on a raw socket', function () {
    for (const { target, why, mayBeListedFile } of UNSENDABLE_TARGETS) {
      const outcome = mayBeListedFile === true ? 'responds 400, or 200 with exactly the listed file' : 'responds 400';
      it(`${JSON.stringify(target.toString('latin1'))} (${why}) ${outcome}, and no secret`, async function () {
        const response = await sendOnSocket(gateway.port, 'GET', target, token);
        if (mayBeListedFile === true && response.status === 200) {
          expect(response.body.toString()).to.equal(OK_CSV);
          return;
        }
        expect(response.status).to.equal(400);
        expect(response.body.includes(SECRET)).to.equal(false);
        // Node's HTTP parser refuses these before Express runs; the server's clientError handler still answers JSON.
        expect(jsonOf(response).error).to.equal('Bad request');
      });
    }

    it('the raw-socket helper itself gets 200 for the listed file (control)', async function () {
      const response = await sendOnSocket(gateway.port, 'GET', Buffer.from('/data/ok.csv'), token);
      expect(response.status).to.equal(200);
      expect(response.body.toString()).to.equal(OK_CSV);
    });
  });
});

/** Writes one HTTP/1.1 request with the target exactly as given and reads the whole response. */
function sendOnSocket(port: number, method: string, target: Buffer, bearer: string): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error('no response within 10 s')));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    });
    socket.write(
      Buffer.concat([
        Buffer.from(`${method} `, 'latin1'),
        target,
        Buffer.from(` HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${bearer}\r\nConnection: close\r\n\r\n`, 'latin1'),
      ]),
    );
  });
}

function parseResponse(raw: Buffer): HttpResponse {
  const headEnd = raw.indexOf('\r\n\r\n');
  if (headEnd === -1) throw new Error(`Incomplete HTTP response: ${JSON.stringify(raw.toString('latin1'))}`);
  const [statusLine = '', ...headerLines] = raw.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (status === null) throw new Error(`Not an HTTP status line: ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(status[1]), headers, body: raw.subarray(headEnd + 4) };
}
