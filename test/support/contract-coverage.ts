import { expect } from 'chai';
import { coveredResponses, openApi } from './contract.js';

/**
 * Root hook (loaded through `.mocharc.json`): when the whole suite runs (`npm test` sets
 * CONTRACT_COVERAGE=full), every status of every operation in openapi.yaml must have been seen by at
 * least one contract-checked test.
 */
export const mochaHooks = {
  async afterAll(): Promise<void> {
    if (process.env['CONTRACT_COVERAGE'] !== 'full') return;
    const api = await openApi();
    const declared = api
      .getOperations()
      .flatMap((operation) => Object.keys(operation.responses ?? {}).map((status) => `${operation.operationId} ${status}`));
    const missing = declared.filter((response) => !coveredResponses.has(response));
    expect(missing, 'responses declared in openapi.yaml that no test produced').to.deep.equal([]);
  },
};
