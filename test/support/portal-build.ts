import { join } from 'node:path';
import { build } from 'vite';
import { packageRoot } from '../../src/app/package-root.js';

let building: Promise<void> | undefined;

/**
 * Builds the portal from `portal/` into `dist/portal/` (as `npm run build` does), once per test run,
 * so the tests serve the portal of the sources they test, never a stale build.
 */
export function buildPortal(): Promise<void> {
  building ??= build({ configFile: join(packageRoot(), 'portal', 'vite.config.ts'), logLevel: 'error' }).then(() => undefined);
  return building;
}
