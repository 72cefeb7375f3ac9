import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { installDebianPackages } from './debian-packages.js';

/**
 * Where a Chromium may already be: `CHROMIUM_PATH` first (a CI runner's own Chrome), then Debian's
 * and Ubuntu's usual paths. Never a browser build downloaded by a test tool.
 */
const candidates = (): string[] =>
  [process.env['CHROMIUM_PATH'], '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'].filter(
    (path): path is string => path !== undefined && path !== '',
  );

/**
 * Flags for a headless run on a machine with no network beyond loopback: without the
 * background-networking ones Chromium keeps trying to reach Google's hosts. `--no-sandbox`: CI
 * runs as root, where Chromium's sandbox cannot start.
 */
export const chromiumArgs = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-gpu',
  '--disable-quic',
  '--disable-sync',
  '--no-first-run',
];

export type ChromiumLookup = { readonly executablePath: string } | { readonly unavailable: string };

/**
 * A Chromium to drive, installing Debian's `chromium` package with apt where none is found and
 * this process may (root, apt-get present). Otherwise says why not, for the test to skip with.
 */
export async function findOrInstallChromium(): Promise<ChromiumLookup> {
  const found = candidates().find((path) => existsSync(path));
  if (found !== undefined) return { executablePath: found };
  const unavailable = await installDebianPackages(['chromium']);
  if (unavailable !== undefined) return { unavailable: `no Chromium found (set CHROMIUM_PATH), and ${unavailable}` };
  return existsSync('/usr/bin/chromium') ? { executablePath: '/usr/bin/chromium' } : { unavailable: 'apt-get installed chromium, but /usr/bin/chromium is missing' };
}

/** Starts a headless Chromium at `executablePath` with `chromiumArgs`. */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, args: chromiumArgs, headless: true });
}
