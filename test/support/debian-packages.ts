import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Installs Debian packages with apt where this process may (root, `apt-get` present): `undefined`
 * when installed, otherwise why not, for the test to skip with. The package lists are fetched
 * (`apt-get update`) only when a first attempt fails, as on a machine that never fetched them.
 */
export async function installDebianPackages(packages: readonly string[]): Promise<string | undefined> {
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) {
    return `apt-get cannot install ${packages.join(', ')} here (not root, or no apt-get)`;
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Another run of apt (another test, another suite) may hold the lock: wait for it rather than fail.
  const options = ['-o', 'DPkg::Lock::Timeout=300'];
  const install = () => run('apt-get', [...options, 'install', '-y', '--no-install-recommends', ...packages], { env, maxBuffer: 64 * 1024 * 1024 });
  try {
    await install().catch(async () => {
      await run('apt-get', [...options, 'update'], { env, maxBuffer: 64 * 1024 * 1024 });
      await install();
    });
    return undefined;
  } catch (error) {
    return `apt-get install ${packages.join(' ')} failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
  }
}
