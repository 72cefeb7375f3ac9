/**
 * `npm run package [-- --out <zip>]`: the deployable zip for `az webapp deploy --type zip`. It holds
 * the compiled code (`dist/src`), the built subscriber portal (`dist/portal`), `openapi.yaml` (the router reads it), `package.json` and the
 * lock file, and the production dependencies: the packages `npm ls --omit=dev` finds in the
 * installed tree (as `npm ci` laid it out from the lock file), at the places Node resolves them
 * from. No TypeScript source, no test, no sample data, no dev dependency: App Service runs it as
 * it is, with no build on deployment.
 */
import { execFile } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { ZipFile } from 'yazl';
import { packageRoot } from '../src/app/package-root.js';

const run = promisify(execFile);

/** What the zip holds besides `node_modules`: everything the built gateway and its CLIs read. */
export const packagedPaths = ['dist/src', 'dist/portal', 'openapi.yaml', 'package.json', 'package-lock.json'] as const;

/** Entries written with a fixed time, so that the same inputs give the same zip. */
const fixedTime = new Date('2000-01-01T00:00:00Z');

export interface PackageResult {
  readonly zipPath: string;
  readonly files: number;
  readonly bytes: number;
}

/**
 * Builds the zip at `zipPath` from the compiled output in `root` (run `npm run build` first:
 * `npm run package` does) and its installed production dependencies.
 */
export async function packageGateway(root: string, zipPath: string): Promise<PackageResult> {
  if (!existsSync(join(root, 'dist', 'src', 'app', 'main.js'))) throw new Error('dist/src/app/main.js is missing: run `npm run build` first');
  const files = new Set<string>();
  for (const path of packagedPaths) {
    const absolute = join(root, path);
    for (const file of (await stat(absolute)).isDirectory() ? await regularFilesUnder(absolute) : [absolute]) {
      if (!file.endsWith('.tsbuildinfo')) files.add(file);
    }
  }
  for (const packageDir of await productionPackageDirs(root)) {
    // A nested node_modules holds packages of its own, listed (or not) by npm in their own right.
    for (const file of await regularFilesUnder(packageDir, (folder) => folder !== join(packageDir, 'node_modules'))) files.add(file);
  }

  const executables = new Set(Object.values(JSON.parse(await readFile(join(root, 'package.json'), 'utf8')).bin as Record<string, string>));
  await mkdir(dirname(zipPath), { recursive: true });
  const zip = new ZipFile();
  const sorted = [...files].sort();
  for (const file of sorted) {
    const name = relative(root, file).split(sep).join('/');
    // The bin entries keep their mode, so they run as commands once unzipped. Level 1: most of the
    // size gain of deflate at a fraction of its time, on some 40 000 files.
    zip.addFile(file, name, { mtime: fixedTime, mode: executables.has(name) ? 0o100755 : 0o100644, compressionLevel: 1 });
  }
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(zipPath));
  return { zipPath, files: sorted.length, bytes: (await stat(zipPath)).size };
}

/**
 * The folders of the installed production dependencies. `npm ls` fails when the installed tree
 * does not match package.json and the lock file (run `npm ci`), so a stale tree is never shipped.
 * Packages linked from outside `node_modules` (workspaces) are not the server's dependencies.
 */
async function productionPackageDirs(root: string): Promise<string[]> {
  let listing: string;
  try {
    listing = (await run('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: root, maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (error) {
    throw new Error(`the installed dependencies do not match package-lock.json (run \`npm ci\`): ${(error as { stderr?: string }).stderr ?? String(error)}`);
  }
  const modules = join(root, 'node_modules') + sep;
  const dirs: string[] = [];
  for (const line of listing.split('\n')) {
    const dir = line.trim();
    if (dir === '' || dir === root || !dir.startsWith(modules)) continue;
    if (!(await realpath(dir)).startsWith(modules)) continue;
    dirs.push(dir);
  }
  return dirs;
}

/**
 * Regular files only, sorted: symbolic links (`node_modules/.bin`) are left out, since App Service's
 * zip deployment does not recreate them and nothing of the gateway runs through them.
 */
async function regularFilesUnder(folder: string, enter: (folder: string) => boolean = () => true): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory() && enter(path)) files.push(...(await regularFilesUnder(path, enter)));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const outFlag = process.argv.indexOf('--out');
  const zipPath = resolve(outFlag === -1 ? join(packageRoot(), 'dist', 'data-file-gateway.zip') : (process.argv[outFlag + 1] ?? ''));
  const result = await packageGateway(packageRoot(), zipPath);
  process.stdout.write(
    `wrote ${result.zipPath} (${result.files} files, ${(result.bytes / 1024 / 1024).toFixed(1)} MiB)\n` +
      `deploy it with: az webapp deploy --resource-group <group> --name <app> --type zip --src-path ${relative(process.cwd(), result.zipPath)}\n`,
  );
}
