import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

/** The contract the client is generated from: the repository's own `openapi.yaml`. */
export const openApiDocumentUrl = new URL('../../openapi.yaml', import.meta.url);

/** Where the client's committed types live. */
export const clientApiTypesPath = fileURLToPath(new URL('../src/generated/api-types.ts', import.meta.url));

const header = `/**
 * GENERATED from openapi.yaml by openapi-typescript: do not edit.
 * Regenerate with \`npm run generate -w client\`; test/client/generated-types.test.ts fails when
 * this file and openapi.yaml disagree.
 */

`;

/** The TypeScript types of `openapi.yaml` (`paths`, `components`, `operations`) as the committed file should hold them. */
export async function generateClientApiTypes(): Promise<string> {
  const ast = await openapiTS(openApiDocumentUrl, { silent: true });
  return header + astToString(ast);
}

/** Regenerates the committed file; re-runnable whenever `openapi.yaml` gains paths. */
export async function writeClientApiTypes(): Promise<string> {
  await mkdir(dirname(clientApiTypesPath), { recursive: true });
  await writeFile(clientApiTypesPath, await generateClientApiTypes(), 'utf8');
  return clientApiTypesPath;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(`wrote ${await writeClientApiTypes()}\n`);
}
