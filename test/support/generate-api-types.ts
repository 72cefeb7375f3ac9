import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { openApiDefinitionPath, packageRoot } from '../../src/app/package-root.js';

/**
 * Where the consumer's types live. The file is committed, so `tsc --noEmit` can check the consumer
 * test before mocha runs; the consumer test generates the types again and fails if they differ.
 */
export const generatedApiTypesPath = (): string => join(packageRoot(), 'test', 'consumer', 'generated', 'api-types.ts');

const header = `/**
 * GENERATED from openapi.yaml by openapi-typescript: do not edit.
 * Regenerate with \`npx tsx test/support/generate-api-types.ts\`; test/consumer/typed-client.test.ts
 * fails when this file and openapi.yaml disagree.
 */

`;

/** The TypeScript types of `openapi.yaml` (`paths`, `components`, `operations`), as the committed file should hold them. */
export async function generateApiTypes(): Promise<string> {
  const ast = await openapiTS(pathToFileURL(openApiDefinitionPath()), { silent: true });
  return header + astToString(ast);
}

/** Writes the generated types to `generatedApiTypesPath()`. */
export async function writeApiTypes(): Promise<string> {
  const path = generatedApiTypesPath();
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, await generateApiTypes(), 'utf8');
  return path;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(`wrote ${await writeApiTypes()}\n`);
}
