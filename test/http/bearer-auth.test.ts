import { expect } from 'chai';
import { createHmac, randomUUID } from 'node:crypto';
import { decodeJwt, SignJWT, type JWTHeaderParameters, type JWTPayload } from 'jose';
import { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { secretFingerprint } from '../../src/adapters/clients/secret-hash.js';
import { purposeKey } from '../../src/adapters/signing/jose-signer.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { ClientRecord, ClientRegistry, Clock } from '../../src/domain/ports.js';
import type { HttpResponse } from '../support/contract.js';
import { hashTestSecret, startGateway, testSigningKey, type TestClient, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf, type ErrorBody } from '../support/json.js';

/** The gateway's JSON error body. */
const acme: TestClient = { clientId: 'acme', secret: 'acme-secret-acme-secret' };
const other: TestClient = { clientId: 'other', secret: 'other-secret-other-secret' };
const gatewayName = 'data-file-gateway';
const ttlSeconds = 3600;
const challengeWithoutError = `Bearer realm="${gatewayName}"`;
/** RFC 6750 section 3: error_description is limited to %x20-21 / %x23-5B / %x5D-7E (no `"` or `\`). */
const invalidTokenChallenge = new RegExp(`^Bearer realm="${gatewayName}", error="invalid_token", error_description="[\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]+"$`);

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
const seconds = (date: Date): number => Math.floor(date.getTime() / 1000);
/** The access tokens' own key, derived from TOKEN_SIGNING_KEY as the gateway derives it. */
const accessTokenKey = purposeKey(testSigningKey, 'access-token');

function newStore(): MemoryBlobStore {
  const store = new MemoryBlobStore();
  store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'CURVE', FileName: 'rates/curve.csv' })]));
  store.put('indexes/other.csv', buildIndexCsv([buildIndexRow({ Symbol: 'QUOTES', FileName: 'b3/quotes.csv' })]));
  store.put('rates/curve.csv', 'date,rate\n2024-01-02,10.5\n');
  return store;
}

async function recordOf(client: TestClient, overrides: Partial<ClientRecord> = {}): Promise<ClientRecord> {
  return { clientId: client.clientId, secretHash: await hashTestSecret(client.secret), indexPath: `indexes/${client.clientId}.csv`, enabled: true, ...overrides };
}

/** A clock the test moves by hand. */
class ManualClock implements Clock {
  constructor(private current: Date) {}

  now(): Date {
    return this.current;
  }

  set(date: Date): void {
    this.current = date;
  }

  advance(byMs: number): void {
    this.current = new Date(this.current.getTime() + byMs);
  }
}

/** InMemoryClientRegistry cannot forget a client; this wrapper can, as an edited registry file would. */
class RemovableClientRegistry implements ClientRegistry {
  private readonly removed = new Set<string>();

  constructor(private readonly clients: InMemoryClientRegistry = new InMemoryClientRegistry()) {}

  add(record: ClientRecord): void {
    this.removed.delete(record.clientId);
    this.clients.add(record);
  }

  remove(clientId: string): void {
    this.removed.add(clientId);
  }

  async find(clientId: string): Promise<ClientRecord | undefined> {
    return this.removed.has(clientId) ? undefined : this.clients.find(clientId);
  }

  async all(): Promise<readonly ClientRecord[]> {
    return (await this.clients.all()).filter((client) => !this.removed.has(client.clientId));
  }

  async findByAccessKey(accessKeyId: string): Promise<ClientRecord | undefined> {
    const client = await this.clients.findByAccessKey(accessKeyId);
    return client === undefined || this.removed.has(client.clientId) ? undefined : client;
  }

  async problem(): Promise<string | undefined> {
    return undefined;
  }
}

function bearer(token: string, scheme = 'Bearer'): { authorization: string } {
  return { authorization: `${scheme} ${token}` };
}

function expectUnauthorizedWithoutError(response: HttpResponse): void {
  expect(response.status).to.equal(401);
  expect(response.headers['www-authenticate']).to.equal(challengeWithoutError);
  const body = jsonOf<ErrorBody>(response);
  expect(body).to.have.all.keys('error', 'message', 'code');
  expect(body.error).to.equal('Unauthorized');
  expect(body.code).to.equal('missing_token');
}

function expectInvalidToken(response: HttpResponse, message?: string): void {
  expect(response.status, response.body.toString()).to.equal(401);
  const challenge = String(response.headers['www-authenticate']);
  expect(challenge).to.match(invalidTokenChallenge);
  const body = jsonOf<ErrorBody>(response);
  expect(body).to.have.all.keys('error', 'message', 'code');
  expect(body.error).to.equal('Unauthorized');
  expect(body.code).to.equal('invalid_token');
  if (message !== undefined) {
    expect(body.message).to.equal(message);
    expect(challenge).to.contain(`error_description="${message}"`);
  }
}

async function tokenRequest(gateway: TestGateway, clientId: string, secret: string): Promise<HttpResponse> {
  return gateway.request('POST', '/oauth/token', {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString(),
  });
}

async function issueToken(gateway: TestGateway, clientId: string, secret: string): Promise<string> {
  const response = await tokenRequest(gateway, clientId, secret);
  expect(response.status, response.body.toString()).to.equal(200);
  return jsonOf<{ access_token: string }>(response).access_token;
}

describe('bearer authentication on the resource endpoints', function () {
  let store: MemoryBlobStore;
  let clock: ManualClock;
  let gateway: TestGateway;

  const catalogWith = (headers: Record<string, string>): Promise<HttpResponse> => gateway.request('GET', '/catalog', { headers });

  /** The claims the gateway itself puts in an access token for `client`, as of the test clock. */
  async function claimsFor(client: TestClient): Promise<JWTPayload> {
    const record = await gateway.registry.find(client.clientId);
    if (record === undefined) throw new Error(`${client.clientId} is not registered`);
    const iat = seconds(clock.now());
    return { iss: gatewayName, aud: gatewayName, sub: client.clientId, iat, exp: iat + ttlSeconds, jti: randomUUID(), sfp: secretFingerprint(record.secretHash) };
  }

  async function signToken(claims: JWTPayload, header: Partial<JWTHeaderParameters> = {}, key: Uint8Array = accessTokenKey): Promise<string> {
    return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', ...header }).sign(key);
  }

  before(async function () {
    store = newStore();
    clock = new ManualClock(new Date());
    gateway = await startGateway({ store, clients: [acme, other], clock });
  });

  beforeEach(function () {
    clock.set(new Date());
  });

  after(async function () {
    await gateway?.close();
  });

  describe('RFC 6750 section 3.1: a request without credentials', function () {
    // "If the request lacks any authentication information (e.g., the client was unaware that
    // authentication is necessary or attempted using an unsupported authentication method), the
    // resource server SHOULD NOT include an error code or other error information."

    it('responds 401 with a bare `Bearer realm` challenge when there is no Authorization header', async function () {
      expectUnauthorizedWithoutError(await gateway.request('GET', '/catalog'));
    });

    it('responds 401 with the same bare challenge for Basic credentials (an unsupported method)', async function () {
      const basic = `Basic ${Buffer.from(`${acme.clientId}:${acme.secret}`).toString('base64')}`;
      expectUnauthorizedWithoutError(await catalogWith({ authorization: basic }));
    });

    it('responds 401 with the bare challenge and no body to HEAD /download/:symbol without credentials', async function () {
      const response = await gateway.request('HEAD', '/download/CURVE');
      expect(response.status).to.equal(401);
      expect(response.headers['www-authenticate']).to.equal(challengeWithoutError);
      expect(response.body.length).to.equal(0);
    });
  });

  describe('RFC 6750 section 2.1: the Authorization request header', function () {
    // `credentials = "Bearer" 1*SP b64token`; RFC 9110 section 11.1: "It uses a case-insensitive
    // token to identify the authentication scheme".

    it('accepts a token the gateway issued', async function () {
      const response = await catalogWith(bearer(await gateway.tokenFor('acme')));
      expect(response.status).to.equal(200);
      expect(jsonOf<{ clientId: string }>(response).clientId).to.equal('acme');
    });

    for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
      it(`accepts the scheme written "${scheme}"`, async function () {
        expect((await catalogWith(bearer(await gateway.tokenFor('acme'), scheme))).status).to.equal(200);
      });
    }

    it('accepts a token built by hand with the claims the gateway issues (the baseline for the forgeries below)', async function () {
      expect((await catalogWith(bearer(await signToken(await claimsFor(acme))))).status).to.equal(200);
    });
  });

  describe('RFC 6750 section 3.1: invalid_token', function () {
    // "invalid_token: The access token provided is expired, revoked, malformed, or invalid for other
    // reasons. The resource SHOULD respond with the HTTP 401 (Unauthorized) status code."

    it('responds 401 invalid_token for a bearer value that is not a JWT', async function () {
      expectInvalidToken(await catalogWith(bearer('garbage')), 'The token is malformed or not issued by this gateway');
    });

    it('responds 401 invalid_token for three base64url parts that are not JSON', async function () {
      expectInvalidToken(await catalogWith(bearer('abc.def.ghi')));
    });

    it('responds 401 invalid_token for a bearer value with characters outside b64token', async function () {
      expectInvalidToken(await catalogWith({ authorization: 'Bearer not,a;token' }));
    });

    describe('RFC 6750 section 5.2: token manufacture or modification', function () {
      // "the token MUST be protected from modification [...] a digital signature or a Message
      // Authentication Code (MAC)" (section 5.2, "Token manufacture/modification").

      it('refuses a token signed with another key (issued by a gateway with a different signingKey)', async function () {
        const foreign = await startGateway({ store, clients: [acme], env: { TOKEN_SIGNING_KEY: 'another-signing-key-of-at-least-32-bytes' } });
        try {
          const token = await foreign.tokenFor('acme');
          expect((await foreign.request('GET', '/catalog', { headers: bearer(token) })).status).to.equal(200);
          expectInvalidToken(await catalogWith(bearer(token)), 'The token signature is invalid');
        } finally {
          await foreign.close();
        }
      });

      it('refuses a token whose payload was changed (sub swapped to another client) with the signature kept', async function () {
        const token = await gateway.tokenFor('acme');
        const [header, , signature] = token.split('.');
        const claims = { ...decodeJwt(token), sub: 'other' };
        const tampered = `${header}.${base64url(claims)}.${signature}`;
        expectInvalidToken(await catalogWith(bearer(tampered)), 'The token signature is invalid');
      });
    });

    describe('RFC 8725 sections 3.1 and 3.2: algorithm verification', function () {
      // "Libraries MUST enable the caller to specify a supported set of algorithms and MUST NOT use
      // any other algorithms when performing cryptographic operations."

      it('refuses an unsecured token with alg "none" and an empty signature', async function () {
        const unsigned = `${base64url({ alg: 'none', typ: 'at+jwt' })}.${base64url(await claimsFor(acme))}.`;
        expectInvalidToken(await catalogWith(bearer(unsigned)));
      });

      it('refuses a token signed with TOKEN_SIGNING_KEY itself rather than the access tokens\' derived key', async function () {
        expectInvalidToken(await catalogWith(bearer(await signToken(await claimsFor(acme), {}, testSigningKey))), 'The token signature is invalid');
      });

      it('refuses an HS512 token signed with the gateway key', async function () {
        expectInvalidToken(await catalogWith(bearer(await signToken(await claimsFor(acme), { alg: 'HS512' }))));
      });

      it('refuses an "RS256" header over an HMAC-SHA256 signature made with the gateway key (algorithm confusion)', async function () {
        const signingInput = `${base64url({ alg: 'RS256', typ: 'at+jwt' })}.${base64url(await claimsFor(acme))}`;
        const signature = createHmac('sha256', accessTokenKey).update(signingInput).digest('base64url');
        expectInvalidToken(await catalogWith(bearer(`${signingInput}.${signature}`)));
      });
    });

    describe('RFC 9068 section 4 and RFC 8725 sections 3.8-3.9: typ, issuer and audience', function () {
      // RFC 9068 section 4: verify "that the "typ" header value is "at+jwt" or "application/at+jwt"
      // and reject tokens carrying any other type value"; "The resource server MUST validate that
      // the "aud" claim contains a resource indicator value corresponding to an identifier the
      // resource server expects for itself"; "The issuer identifier [...] MUST exactly match the
      // value of the "iss" claim."

      it('refuses a token with another issuer', async function () {
        expectInvalidToken(await catalogWith(bearer(await signToken({ ...(await claimsFor(acme)), iss: 'someone-else' }))));
      });

      it('refuses a token for another audience', async function () {
        expectInvalidToken(await catalogWith(bearer(await signToken({ ...(await claimsFor(acme)), aud: 'another-api' }))));
      });

      it('refuses a token with typ "JWT" instead of "at+jwt"', async function () {
        expectInvalidToken(await catalogWith(bearer(await signToken(await claimsFor(acme), { typ: 'JWT' }))));
      });

      it('refuses a token without an exp claim', async function () {
        const { exp: _exp, ...claims } = await claimsFor(acme);
        expectInvalidToken(await catalogWith(bearer(await signToken(claims))));
      });
    });

    describe('RFC 7519 section 4.1.4: expiry', function () {
      // "The processing of the "exp" claim requires that the current date/time MUST be before the
      // expiration date/time listed in the "exp" claim."

      it('accepts a token one second before it expires', async function () {
        const token = await gateway.tokenFor('acme');
        clock.advance((ttlSeconds - 1) * 1000);
        expect((await catalogWith(bearer(token))).status).to.equal(200);
      });

      it('responds 401 "The token has expired" once the clock reaches exp', async function () {
        const token = await gateway.tokenFor('acme');
        clock.advance(ttlSeconds * 1000);
        expectInvalidToken(await catalogWith(bearer(token)), 'The token has expired');
      });

      it('honours a configured lifetime: a 5-second token is refused 5 seconds later', async function () {
        const shortLived = await startGateway({ store, clients: [acme], clock, env: { TOKEN_TTL_SECONDS: '5' } });
        try {
          const token = await shortLived.tokenFor('acme');
          clock.advance(4000);
          expect((await shortLived.request('GET', '/catalog', { headers: bearer(token) })).status).to.equal(200);
          clock.advance(1000);
          expectInvalidToken(await shortLived.request('GET', '/catalog', { headers: bearer(token) }), 'The token has expired');
        } finally {
          await shortLived.close();
        }
      });
    });
  });
});

describe('bearer token revocation through the client registry', function () {
  // RFC 6750 section 3.1: invalid_token covers a token that is "expired, revoked, malformed, or
  // invalid for other reasons". The registry is the source of truth: what it no longer allows, a
  // token issued earlier must not allow either.
  let store: MemoryBlobStore;
  let registry: RemovableClientRegistry;
  let gateway: TestGateway;

  const catalogWith = (token: string): Promise<HttpResponse> => gateway.request('GET', '/catalog', { headers: bearer(token) });

  before(async function () {
    store = newStore();
    registry = new RemovableClientRegistry();
    gateway = await startGateway({ store, registry, clients: [acme, other] });
  });

  beforeEach(async function () {
    // Fresh records (and so fresh secret hashes) for every test; the gateway reads them on each request.
    registry.add(await recordOf(acme));
    registry.add(await recordOf(other));
  });

  after(async function () {
    await gateway?.close();
  });

  it('refuses a token issued before the client secret was rotated, and accepts one issued with the new secret', async function () {
    const before = await gateway.tokenFor('acme');
    expect((await catalogWith(before)).status).to.equal(200);
    const rotated: TestClient = { ...acme, secret: 'rotated-secret-rotated-secret' };
    registry.add(await recordOf(rotated));

    expectInvalidToken(await catalogWith(before), 'The token was revoked');
    expect((await catalogWith(await issueToken(gateway, rotated.clientId, rotated.secret))).status).to.equal(200);
  });

  it('refuses a disabled client token at once', async function () {
    const token = await gateway.tokenFor('acme');
    expect((await catalogWith(token)).status).to.equal(200);
    const record = await registry.find('acme');
    if (record === undefined) throw new Error('acme is not registered');
    registry.add({ ...record, enabled: false });
    expectInvalidToken(await catalogWith(token), 'The token was revoked');
  });

  it('refuses a removed client token at once', async function () {
    const token = await gateway.tokenFor('acme');
    expect((await catalogWith(token)).status).to.equal(200);
    registry.remove('acme');
    expectInvalidToken(await catalogWith(token), 'The token was revoked');
  });

  it('keeps serving the other clients tokens when one client is revoked', async function () {
    const token = await gateway.tokenFor('other');
    registry.remove('acme');
    expect((await catalogWith(token)).status).to.equal(200);
  });
});

describe('bearer tokens across gateway instances', function () {
  // Self-contained tokens (RFC 9068): any instance holding the same signing key verifies them, so
  // a load balancer may send the next request anywhere.

  it('accepts on instance B a token issued by instance A, and the reverse, with the same key, store and registry', async function () {
    const store = newStore();
    const registry = new InMemoryClientRegistry([await recordOf(acme)]);
    const first = await startGateway({ store, registry, clients: [acme] });
    const second = await startGateway({ store, registry, clients: [acme] });
    try {
      const fromFirst = await first.tokenFor('acme');
      const fromSecond = await second.tokenFor('acme');
      expect((await second.request('GET', '/catalog', { headers: bearer(fromFirst) })).status).to.equal(200);
      expect((await first.request('GET', '/catalog', { headers: bearer(fromSecond) })).status).to.equal(200);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});
