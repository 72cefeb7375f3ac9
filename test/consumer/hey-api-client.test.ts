import { expect } from 'chai';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { startGateway } from '../support/gateway.js';
import { generateHeyApiClient, readHeyApiClient } from '../support/generate-api-types.js';
import { answerOf, describeConsumerScenarios, type ConsumerClientFactory } from './consumer-scenarios.js';
import { createClient, createConfig } from './generated/hey-api/client/index.js';
import { client as generatedDefaultClient } from './generated/hey-api/client.gen.js';
import {
  countFiles,
  downloadBySymbol,
  getAuthorizationServerMetadata,
  getCatalog,
  getFileInfo,
  getHealth,
  issueToken,
  listFiles,
} from './generated/hey-api/sdk.gen.js';

/*
 * The same consumer scenarios through a second generator's client: @hey-api/openapi-ts's fetch
 * client and SDK functions, generated from openapi.yaml and committed. Its token requests are
 * JSON (the generator picks that body type), and its bearer token is applied by the SDK from the
 * operations' security requirements (`auth`), not by hand.
 */


const heyApiCalls: ConsumerClientFactory = (baseUrl, fetch) => {
  const client = createClient(createConfig({ baseUrl, fetch: (input, init) => fetch(new Request(input, init)) }));
  const as = (token: string | undefined) => ({ client, ...(token !== undefined && { auth: token }) });
  return {
    issueToken: async (body) => answerOf(await issueToken({ client, body })),
    getCatalog: async (token) => answerOf(await getCatalog(as(token))),
    listFiles: async (token, limit) => answerOf(await listFiles({ ...as(token), query: { limit } })),
    countFiles: async (token) => answerOf(await countFiles(as(token))),
    getFileInfo: async (token, symbol) => answerOf(await getFileInfo({ ...as(token), path: { symbol } })),
    downloadBySymbol: async (token, symbol, range) => {
      // The contract's `format: binary` is a Blob to hey-api, as a browser would hand it over.
      const download = answerOf(
        await downloadBySymbol({ ...as(token), path: { symbol }, ...(range !== undefined && { headers: { Range: range } }), parseAs: 'blob' }),
      );
      return { ...download, data: await download.data?.arrayBuffer() };
    },
    getAuthorizationServerMetadata: async () => answerOf(await getAuthorizationServerMetadata({ client })),
  };
};

describe('a consumer generated from openapi.yaml by @hey-api/openapi-ts (fetch client + SDK)', function () {
  describe('the committed generated client', function () {
    it('equals a fresh generation from openapi.yaml (regenerate with `npx tsx test/support/generate-api-types.ts`)', async function () {
      const committed = await readHeyApiClient();

      const fresh = await generateHeyApiClient();

      const stale = [...new Set([...committed.keys(), ...fresh.keys()])].filter((name) => committed.get(name) !== fresh.get(name));
      expect(stale, 'test/consumer/generated/hey-api is stale: run `npx tsx test/support/generate-api-types.ts`').to.deep.equal([]);
    });
  });

  describe("the generated default client, as generated (openapi.yaml's first server is an absolute URL)", function () {
    it('has http://localhost:3000, where `npm start` listens, as its base URL', function () {
      expect(generatedDefaultClient.getConfig().baseUrl).to.equal('http://localhost:3000');
    });

    it('calls another gateway once told its base URL, with no option on the call', async function () {
      const gateway = await startGateway({ store: new MemoryBlobStore(), clients: [] });
      const generated = generatedDefaultClient.getConfig().baseUrl ?? '';
      try {
        generatedDefaultClient.setConfig({ baseUrl: gateway.baseUrl });
        const health = await getHealth();
        expect(health.response.status).to.equal(200);
        expect(health.data).to.deep.equal({ status: 'ok' });
      } finally {
        generatedDefaultClient.setConfig({ baseUrl: generated });
        await gateway.close();
      }
    });
  });

  describeConsumerScenarios(heyApiCalls);
});
