import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { clientApiTypesPath, generateClientApiTypes } from '../../client/scripts/generate-api-types.js';

describe('the client\'s generated types (client/src/generated/api-types.ts)', function () {
  it('when compared with a fresh generation from openapi.yaml, are identical (regenerate with `npm run generate -w client`)', async function () {
    const committed = await readFile(clientApiTypesPath, 'utf8');

    const fresh = await generateClientApiTypes();

    expect(committed === fresh, 'client/src/generated/api-types.ts is stale: run `npm run generate -w client`').to.equal(true);
  });
});
