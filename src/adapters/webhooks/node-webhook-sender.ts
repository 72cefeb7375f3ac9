import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { Clock, WebhookRequest, WebhookSender } from '../../domain/ports.js';
import type { DeliveryOutcome, RetryAfter } from '../../domain/webhooks.js';
import { parseHttpDate } from '../../http-wire/grammar/http-date.js';
import { isPublicAddress } from './public-address.js';
import { hostOf, webhookUrlProblem } from './webhook-targets.js';

/** A delivery never waits longer than this, from the first byte sent to the answer's status. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/** The most of an answer's body read (and thrown away) before the connection is closed. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface NodeWebhookSenderOptions {
  /** WEBHOOK_ALLOW_PRIVATE=on: `http` and private or loopback addresses are allowed (tests, private networks). */
  readonly allowPrivate: boolean;
  /** Places the two-digit years of an obsolete `Retry-After` date. */
  readonly clock: Clock;
  readonly timeoutMs?: number;
}

/**
 * Sends a webhook with node:http(s): one `POST` on a connection of its own, no redirect followed
 * (a 3xx is an answer like any other, so a failure), cut after `timeoutMs` whatever the receiver
 * does. The address connected to is the one checked: the host's name is resolved by a lookup that
 * refuses any address that is not public, so a name that resolves to a private address at delivery
 * time (DNS rebinding) is never called.
 */
export class NodeWebhookSender implements WebhookSender {
  readonly #allowPrivate: boolean;
  readonly #clock: Clock;
  readonly #timeoutMs: number;

  constructor(options: NodeWebhookSenderOptions) {
    this.#allowPrivate = options.allowPrivate;
    this.#clock = options.clock;
    this.#timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  }

  send(request: WebhookRequest): Promise<DeliveryOutcome> {
    const problem = webhookUrlProblem(request.url, this.#allowPrivate);
    if (problem !== undefined) return Promise.resolve({ kind: 'failed', reason: `refused: ${problem}` });
    const url = new URL(request.url);
    const host = hostOf(url);
    if (isIP(host) !== 0 && !this.#allowPrivate && !isPublicAddress(host)) {
      return Promise.resolve({ kind: 'failed', reason: `refused: ${host} is not a public address` });
    }
    const body = Buffer.from(request.body, 'utf8');
    return new Promise((resolve) => {
      let settled = false;
      const settle = (outcome: DeliveryOutcome): void => {
        if (settled) return;
        settled = true;
        resolve(outcome);
      };
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const outgoing = send(url, {
        method: 'POST',
        headers: { ...request.headers, 'content-type': 'application/json', 'content-length': String(body.length), 'user-agent': 'data-file-gateway-webhooks' },
        agent: false,
        lookup: this.#allowPrivate ? undefined : publicOnlyLookup,
      });
      const timer = setTimeout(() => outgoing.destroy(new Error(`no answer in ${this.#timeoutMs} ms`)), this.#timeoutMs);
      outgoing.once('response', (answer: IncomingMessage) => {
        settle({ kind: 'answered', status: answer.statusCode ?? 0, ...retryAfterOf(answer, this.#clock) });
        let read = 0;
        answer.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) answer.destroy();
        });
        answer.once('close', () => clearTimeout(timer));
        answer.once('error', () => undefined);
      });
      outgoing.once('error', (error) => {
        clearTimeout(timer);
        settle({ kind: 'failed', reason: error.message });
      });
      outgoing.end(body);
    });
  }
}

/** `Retry-After` as delay-seconds or an HTTP-date (RFC 9110 section 10.2.3); anything else is ignored. */
function retryAfterOf(answer: IncomingMessage, clock: Clock): { retryAfter?: RetryAfter } {
  const value = answer.headers['retry-after']?.trim();
  if (value === undefined) return {};
  if (/^\d{1,9}$/.test(value)) return { retryAfter: { seconds: Number(value) } };
  const date = parseHttpDate(value, clock.now().getUTCFullYear());
  return date === undefined ? {} : { retryAfter: { date } };
}

class RefusedAddress extends Error {
  constructor(hostname: string, address: string) {
    super(`refused: ${hostname} resolves to ${address}, which is not a public address`);
    this.name = new.target.name;
  }
}

/** Resolves as Node would, then refuses the connection when any address found is not public. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...(options as LookupOptions), all: true }, (error, addresses: LookupAddress[]) => {
    if (error !== null) return callback(error, '', 0);
    const refused = addresses.find((entry) => !isPublicAddress(entry.address));
    if (refused !== undefined || addresses.length === 0) {
      return callback(new RefusedAddress(hostname, refused?.address ?? 'nothing') as NodeJS.ErrnoException, '', 0);
    }
    if ((options as LookupOptions).all === true) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const [first] = addresses as [LookupAddress];
    return callback(null, first.address, first.family);
  });
};
