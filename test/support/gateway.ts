import { memoryChangeStores, type ChangeStores } from '../../src/adapters/changes/change-stores.js';
import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { pino, type Logger } from 'pino';
import { InMemoryClientRegistry } from '../../src/adapters/clients/in-memory-client-registry.js';
import { hashSecret } from '../../src/adapters/clients/secret-hash.js';
import { createHttpServer } from '../../src/adapters/http/http-server.js';
import { loadConfig, type GatewayConfig } from '../../src/app/config.js';
import { createGateway, type AppAdapters, type Gateway } from '../../src/app/create-app.js';
import { bundledSampleDataDir } from '../../src/app/package-root.js';
import type { BlobStore, ClientRegistry } from '../../src/domain/ports.js';
import { expectMatchesContract, type HttpResponse } from './contract.js';
import { originZeroClock } from './change-log-origin.js';

export const testSigningKeyText = 'test-signing-key-of-at-least-32-bytes!!';
export const testSigningKey = new TextEncoder().encode(testSigningKeyText);

/**
 * The gateway's configuration for a test, read by the real `loadConfig` from environment variables
 * (the names of the configuration table in docs/operators.md), so tests change settings exactly as
 * an operator does.
 */
export function testConfig(env: Readonly<Record<string, string>> = {}): GatewayConfig {
  return loadConfig({ TOKEN_SIGNING_KEY: testSigningKeyText, ...env }, bundledSampleDataDir());
}

export interface TestClient {
  readonly clientId: string;
  readonly secret: string;
  readonly indexPath?: string;
  readonly enabled?: boolean;
  readonly validFrom?: Date;
  readonly validUntil?: Date;
  readonly monthlyBytes?: number;
  /** S3 access key ids registered for the client (their secrets derive from `testSigningKey`). */
  readonly accessKeyIds?: readonly string[];
}

export interface GatewayOptions extends Partial<Omit<AppAdapters, 'store' | 'registry'>> {
  readonly store: BlobStore;
  /** Registered in an in-memory registry, unless `registry` is given. */
  readonly clients?: readonly TestClient[];
  readonly registry?: ClientRegistry;
  /** Configuration variables, e.g. `{ DOWNLOAD_RATE_LIMIT: '3' }`. */
  readonly env?: Readonly<Record<string, string>>;
}

export interface RequestOptions {
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: string | Buffer;
  /** Skip the `openapi.yaml` check (for requests the contract deliberately does not describe). */
  readonly unchecked?: boolean;
}

export interface TestGateway {
  readonly baseUrl: string;
  readonly port: number;
  readonly registry: ClientRegistry;
  /** What the wiring built beside the app: the change feed's leader duties, the webhook delivery, the change log. */
  readonly core: Pick<Gateway, 'leaderDuties' | 'webhookDelivery' | 'changeLog'>;
  /** Sends the request exactly as written (no URL normalisation) and checks the response against `openapi.yaml`. */
  request(method: string, rawPath: string, options?: RequestOptions): Promise<HttpResponse>;
  /** A fresh bearer token for a registered client. */
  tokenFor(clientId: string): Promise<string>;
  /** GET/HEAD with `Authorization: Bearer` for `clientId`, checked against the contract. */
  get(clientId: string, rawPath: string, headers?: OutgoingHttpHeaders, method?: string): Promise<HttpResponse>;
  close(): Promise<void>;
}

/**
 * scrypt's N for the clients tests register where the cost of hashing is not what they test: a hash
 * carries its cost and the gateway verifies at it, so a token request costs microseconds instead
 * of some 50 ms of a core (production's N=16384). Tests of the cost itself (secret hashing, token
 * floods) use `hashSecret` as production does.
 */
export const testScryptCost = 16;

/** The scrypt hash of a test client's secret, at `testScryptCost`. */
export const hashTestSecret = (secret: string): Promise<string> => hashSecret(secret, undefined, testScryptCost);

/** The memory change stores, with the log or checksum store a test watches in their place. */
export function changeStoresWith(overrides: Partial<ChangeStores>): ChangeStores {
  return { ...memoryChangeStores(originZeroClock), ...overrides };
}

export const quietLogger: Logger = pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });

/** Starts the real app (createGateway) on port 0 over the given store. */
export async function startGateway(options: GatewayOptions): Promise<TestGateway> {
  const registry = options.registry ?? (await registryOf(options.clients ?? []));
  const secrets = new Map((options.clients ?? []).map((client) => [client.clientId, client.secret]));
  const { env, clients: _clients, registry: _registry, ...adapters } = options;
  const config = testConfig(env);
  const { app, leaderDuties, webhookDelivery, changeLog } = await createGateway(config, { logger: quietLogger, ...adapters, registry });
  const server: Server = createHttpServer(app, {
    logger: adapters.logger ?? quietLogger,
    headersTimeoutMs: config.headersTimeoutSeconds * 1000,
    requestTimeoutMs: config.requestTimeoutSeconds * 1000,
    maxConnections: config.maxConnections,
  }).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const port = (server.address() as AddressInfo).port;

  const request = async (method: string, rawPath: string, requestOptions: RequestOptions = {}): Promise<HttpResponse> => {
    const response = await sendRaw(port, method, rawPath, requestOptions.headers ?? {}, requestOptions.body);
    if (requestOptions.unchecked !== true) await expectMatchesContract(method, rawPath, response);
    return response;
  };
  const tokenFor = async (clientId: string): Promise<string> => {
    const secret = secrets.get(clientId);
    if (secret === undefined) throw new Error(`No secret known for test client ${clientId}`);
    const response = await request('POST', '/oauth/token', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString(),
    });
    if (response.status !== 200) throw new Error(`Token request for ${clientId} failed: ${response.status} ${response.body.toString()}`);
    return (JSON.parse(response.body.toString()) as { access_token: string }).access_token;
  };
  const tokens = new Map<string, string>();
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    registry,
    core: { leaderDuties, webhookDelivery, changeLog },
    request,
    tokenFor,
    async get(clientId, rawPath, headers = {}, method = 'GET') {
      let token = tokens.get(clientId);
      if (token === undefined) {
        token = await tokenFor(clientId);
        tokens.set(clientId, token);
      }
      return request(method, rawPath, { headers: { ...headers, authorization: `Bearer ${token}` } });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function registryOf(clients: readonly TestClient[]): Promise<InMemoryClientRegistry> {
  const registry = new InMemoryClientRegistry();
  for (const client of clients) {
    registry.add({
      clientId: client.clientId,
      secretHash: await hashTestSecret(client.secret),
      indexPath: client.indexPath ?? `indexes/${client.clientId}.csv`,
      enabled: client.enabled ?? true,
      ...(client.validFrom !== undefined && { validFrom: client.validFrom }),
      ...(client.validUntil !== undefined && { validUntil: client.validUntil }),
      ...(client.monthlyBytes !== undefined && { monthlyBytes: client.monthlyBytes }),
      ...(client.accessKeyIds !== undefined && { accessKeyIds: client.accessKeyIds }),
    });
  }
  return registry;
}

/** One HTTP request with the path sent byte for byte as given; the whole body is collected. */
export function sendRaw(port: number, method: string, rawPath: string, headers: OutgoingHttpHeaders, body?: string | Buffer): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path: rawPath, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Starts a bearer GET of `path` and drops the connection as soon as the first bytes of the body arrive. */
export function abortAfterFirstBytes(port: number, path: string, token: string, headers: OutgoingHttpHeaders = {}): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { ...headers, authorization: `Bearer ${token}` }, agent: false }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)));
    req.end();
  });
}
