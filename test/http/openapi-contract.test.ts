import { expect } from 'chai';
import { loadOpenApi } from '../../src/adapters/http/openapi-contract.js';
import { openApiDefinitionPath } from '../../src/app/package-root.js';

describe('loadOpenApi', function () {
  this.timeout(60_000);

  describe('when the gateway starts', function () {
    it('compiles the request validators of every operation and no response validator', async function () {
      const api = await loadOpenApi(openApiDefinitionPath(), { fresh: true });
      const operations = api.getOperations().map((operation) => operation.operationId);
      expect(operations.length).to.be.greaterThan(20);
      expect(Object.keys(api.validator.requestValidators)).to.have.members(operations as string[]);
      expect(Object.keys(api.validator.responseValidators)).to.deep.equal([]);
      expect(Object.keys(api.validator.statusBasedResponseValidators)).to.deep.equal([]);
      expect(Object.keys(api.validator.responseHeadersValidators)).to.deep.equal([]);
    });

    it('validates requests strictly, coercing query parameters', async function () {
      const api = await loadOpenApi(openApiDefinitionPath(), { fresh: true });
      const bad = api.validateRequest({ method: 'GET', path: '/list', headers: {}, query: { limit: '0' } });
      expect(bad.valid).to.equal(false);
      const good = api.validateRequest({ method: 'GET', path: '/list', headers: {}, query: { limit: '10' } });
      expect(good.errors ?? []).to.deep.equal([]);
    });
  });

  describe('when a request is handled', function () {
    it('parses it three times, not four: the validator reuses the parse made once its operation matched', async function () {
      const api = await loadOpenApi(openApiDefinitionPath(), { fresh: true });
      // parseRequestQuery runs once in each real parse (and in validation only for JSON query parameters, which the contract has none of).
      const parseRequestQuery = api.router.parseRequestQuery.bind(api.router);
      let parses = 0;
      api.router.parseRequestQuery = (req) => {
        parses += 1;
        return parseRequestQuery(req);
      };
      let seen: { limit: unknown; valid: boolean } | undefined;
      api.register({
        listFiles: (context) => void (seen = { limit: context.request.query['limit'], valid: context.validation.valid }),
        validationFail: (context) => void (seen = { limit: undefined, valid: context.validation.valid }),
      });
      api.registerSecurityHandler('bearerAuth', () => true);
      await api.handleRequest({ method: 'GET', path: '/list', headers: {}, query: { limit: '10' } });
      expect(parses).to.equal(3);
      expect(seen, 'the handler sees the validated, coerced query').to.deep.equal({ limit: 10, valid: true });
      await api.handleRequest({ method: 'GET', path: '/list', headers: {}, query: { limit: '0' } });
      expect(parses).to.equal(5);
      expect(seen).to.deep.equal({ limit: undefined, valid: false });
    });
  });

  describe('when a process starts more than one gateway (the tests start hundreds)', function () {
    it('gives each its own backend over one parsed definition and one set of compiled validators', async function () {
      const first = await loadOpenApi(openApiDefinitionPath());
      const second = await loadOpenApi(openApiDefinitionPath());
      expect(second).to.not.equal(first);
      expect(second.definition).to.equal(first.definition);
      expect(second.router).to.equal(first.router);
      expect(second.validator).to.equal(first.validator);
      const bad = second.validateRequest({ method: 'GET', path: '/list', headers: {}, query: { limit: '0' } });
      expect(bad.valid).to.equal(false);
    });

    it('keeps the handlers each registers to itself', async function () {
      const first = await loadOpenApi(openApiDefinitionPath());
      const second = await loadOpenApi(openApiDefinitionPath());
      first.register('notFound', () => 'first');
      second.register('notFound', () => 'second');
      expect(await first.handleRequest({ method: 'GET', path: '/no-such-operation/at/all', headers: {} })).to.equal('first');
      expect(await second.handleRequest({ method: 'GET', path: '/no-such-operation/at/all', headers: {} })).to.equal('second');
    });
  });

  describe('when a response is first checked against the contract (the tests do)', function () {
    it('compiles that operation\'s response validators then, and they catch a body and a header that do not match', async function () {
      const api = await loadOpenApi(openApiDefinitionPath(), { fresh: true });
      expect(api.validateResponse({ count: 3 }, 'countFiles', 200).errors ?? []).to.deep.equal([]);
      expect(api.validateResponse({ count: 'three' }, 'countFiles', 200).errors).to.not.deep.equal([]);
      expect(Object.keys(api.validator.statusBasedResponseValidators)).to.deep.equal(['countFiles']);
      const headers = api.validateResponseHeaders({ 'retry-after': 'soon' }, 'getCatalog', { statusCode: 503 });
      expect(headers.errors ?? [], 'a Retry-After that is not a number of seconds').to.not.deep.equal([]);
    });
  });
});
