import { readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { GatewayClientError } from '../errors.js';

/** What `dfg` needs to reach the gateway. */
export interface Credentials {
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
}

/** `$XDG_CONFIG_HOME/dfg/profile.json`, or `~/.config/dfg/profile.json` when XDG_CONFIG_HOME is unset or not absolute. */
export function defaultProfilePath(env: NodeJS.ProcessEnv, home: string = homedir()): string {
  const configHome = env['XDG_CONFIG_HOME'];
  // The XDG Base Directory spec: a relative value is invalid and must be ignored.
  const base = configHome !== undefined && configHome.startsWith('/') ? configHome : join(home, '.config');
  return join(base, 'dfg', 'profile.json');
}

/**
 * Credentials from `DFG_URL`, `DFG_CLIENT_ID` and `DFG_CLIENT_SECRET`, each of which wins over the
 * profile file; the file is read only for what the environment leaves out. It holds a secret, so it
 * is refused unless only its owner can read it (mode 0600 or stricter), as ssh refuses a readable key.
 */
export async function loadCredentials(env: NodeJS.ProcessEnv, profilePath: string = defaultProfilePath(env)): Promise<Credentials> {
  const fromEnv = { url: env['DFG_URL'], clientId: env['DFG_CLIENT_ID'], clientSecret: env['DFG_CLIENT_SECRET'] };
  const complete = (value: Partial<Record<keyof Credentials, unknown>>): value is Credentials =>
    [value.url, value.clientId, value.clientSecret].every((field) => typeof field === 'string' && field.length > 0);
  const present = Object.fromEntries(Object.entries(fromEnv).filter(([, value]) => value !== undefined && value !== ''));
  if (complete(present)) return checked(present, 'the environment');

  const profile = await readProfile(profilePath);
  const merged = { ...profile, ...present };
  if (!complete(merged)) {
    const missing = (['url', 'clientId', 'clientSecret'] as const).filter((field) => typeof merged[field] !== 'string' || merged[field] === '');
    throw new GatewayClientError('invalid_profile', `${profilePath}: missing ${missing.join(', ')} (or set DFG_URL, DFG_CLIENT_ID, DFG_CLIENT_SECRET)`);
  }
  return checked(merged, profilePath);
}

async function readProfile(path: string): Promise<Partial<Record<keyof Credentials, unknown>>> {
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new GatewayClientError('invalid_profile', `no credentials: ${path} does not exist and DFG_URL, DFG_CLIENT_ID, DFG_CLIENT_SECRET are not all set`);
    }
    throw new GatewayClientError('invalid_profile', `${path}: ${(error as Error).message}`, { cause: error });
  }
  // Windows has no such permission bits; there the file's ACL is the user's business.
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    const octal = (mode & 0o777).toString(8).padStart(4, '0');
    throw new GatewayClientError('invalid_profile', `${path} has mode ${octal}: it holds a client secret, so it must be readable by you alone (chmod 600 ${path})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new GatewayClientError('invalid_profile', `${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GatewayClientError('invalid_profile', `${path} must hold an object {"url", "clientId", "clientSecret"}`);
  }
  const fields = value as Record<string, unknown>;
  return { url: fields['url'], clientId: fields['clientId'], clientSecret: fields['clientSecret'] };
}

function checked(credentials: Credentials, source: string): Credentials {
  let url: URL;
  try {
    url = new URL(credentials.url);
  } catch {
    throw new GatewayClientError('invalid_profile', `${source}: url ${JSON.stringify(credentials.url)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new GatewayClientError('invalid_profile', `${source}: url must be http or https, got ${url.protocol}`);
  }
  return credentials;
}
