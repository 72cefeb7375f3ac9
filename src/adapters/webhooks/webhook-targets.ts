import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { WebhookTargets } from '../../domain/ports.js';
import { MAX_WEBHOOK_URL_LENGTH } from '../../domain/webhooks.js';
import { isPublicAddress } from './public-address.js';

/** Every address a host name resolves to. */
export type ResolveAll = (hostname: string) => Promise<readonly string[]>;

const systemResolve: ResolveAll = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/** How long registration waits for a name to resolve. */
const RESOLVE_TIMEOUT_MS = 5_000;

/**
 * What is wrong with `url` as a webhook endpoint, read without the network: an absolute `https`
 * URL (or `http` when private addresses are allowed), no credentials, no fragment, at most
 * MAX_WEBHOOK_URL_LENGTH characters, its host a name or a public address.
 */
export function webhookUrlProblem(url: string, allowPrivate: boolean): string | undefined {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) return `the URL is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'the URL is not an absolute URL';
  }
  if (parsed.protocol !== 'https:' && !(allowPrivate && parsed.protocol === 'http:')) return 'the URL must use https';
  if (parsed.username !== '' || parsed.password !== '') return 'the URL must not carry credentials';
  if (parsed.hash !== '') return 'the URL must not have a fragment';
  const host = hostOf(parsed);
  if (host === '') return 'the URL has no host';
  if (isIP(host) !== 0 && !allowPrivate && !isPublicAddress(host)) return `the URL's address ${host} is not a public address`;
  return undefined;
}

/** The URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * The endpoints the gateway may call: `webhookUrlProblem`, then every address the host resolves
 * to must be public (unless WEBHOOK_ALLOW_PRIVATE=on). Delivery checks the address it connects to
 * again (`NodeWebhookSender`), since a name may resolve elsewhere later.
 */
export class WebhookTargetPolicy implements WebhookTargets {
  readonly #allowPrivate: boolean;
  readonly #resolve: ResolveAll;

  constructor(options: { readonly allowPrivate: boolean; readonly resolve?: ResolveAll }) {
    this.#allowPrivate = options.allowPrivate;
    this.#resolve = options.resolve ?? systemResolve;
  }

  async problem(url: string): Promise<string | undefined> {
    const problem = webhookUrlProblem(url, this.#allowPrivate);
    if (problem !== undefined || this.#allowPrivate) return problem;
    const host = hostOf(new URL(url));
    if (isIP(host) !== 0) return undefined;
    let addresses: readonly string[];
    try {
      addresses = await withTimeout(this.#resolve(host), RESOLVE_TIMEOUT_MS);
    } catch {
      return `the host ${host} does not resolve`;
    }
    const refused = addresses.find((address) => !isPublicAddress(address));
    if (addresses.length === 0) return `the host ${host} does not resolve`;
    return refused === undefined ? undefined : `the host ${host} resolves to ${refused}, which is not a public address`;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
