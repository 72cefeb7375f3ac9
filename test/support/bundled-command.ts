import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

/**
 * A command's TypeScript entry point bundled once per test process into one plain JavaScript file
 * under the OS temporary folder, so that each run of it in a child process starts in a quarter of a
 * second (plain `node`) instead of a second (`node --import tsx`, which loads and resolves every
 * source file again): a test file that runs `dfg` thirty times saves half a minute, more on a busy
 * machine. The bundle sits two folders below a copy of `manifest`, as `dist/src/cli/` sits in the
 * published package, so that the command finds its `package.json` (its name and version) as it
 * does when installed.
 */
export interface BundledCommand {
  /** The bundle: run it with `node <path> ...args`. */
  readonly path: string;
  remove(): Promise<void>;
}

export async function bundleCommand(entry: string, manifest: string): Promise<BundledCommand> {
  const dir = await mkdtemp(join(tmpdir(), 'dfg-bundle-'));
  try {
    await mkdir(join(dir, 'dist', 'cli'), { recursive: true });
    await copyFile(manifest, join(dir, 'package.json'));
    const path = join(dir, 'dist', 'cli', 'command.mjs');
    await build({
      entryPoints: [entry],
      outfile: path,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'warning',
      // CommonJS dependencies inside an ES module bundle still call require for Node's own modules.
      banner: { js: "import { createRequire as dfgBundleRequire } from 'node:module'; const require = dfgBundleRequire(import.meta.url);" },
    });
    return { path, remove: () => rm(dir, { recursive: true, force: true }) };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
