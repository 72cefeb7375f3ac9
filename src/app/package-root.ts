import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder holding `package.json`, found by walking up from this module: the same answer whether
 * the gateway runs compiled from `dist/` or from the TypeScript sources.
 */
export function packageRoot(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(folder, 'package.json'))) {
    const parent = dirname(folder);
    if (parent === folder) throw new Error('package.json not found above the gateway modules');
    folder = parent;
  }
  return folder;
}

export const bundledSampleDataDir = (): string => join(packageRoot(), 'sample-data');
export const openApiDefinitionPath = (): string => join(packageRoot(), 'openapi.yaml');
/** Where `npm run build` writes the subscriber portal (Vite's output of `portal/`). */
export const builtPortalDir = (): string => join(packageRoot(), 'dist', 'portal');
