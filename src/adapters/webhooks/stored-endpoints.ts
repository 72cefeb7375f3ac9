import { randomBytes } from 'node:crypto';
import type { WebhookEndpointUpdate } from '../../domain/ports.js';
import type { NewWebhookEndpoint, WebhookDisabledReason, WebhookEndpoint } from '../../domain/webhooks.js';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** A new endpoint id: `wh_` and 128 random bits in lowercase base32 (26 characters). */
export function newWebhookId(): string {
  const bytes = randomBytes(17);
  let bits = 0;
  let value = 0;
  let text = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && text.length < 26) {
      text += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return `wh_${text}`;
}

/** An endpoint as a registry file or table row keeps it: plain strings and numbers, `''` for none. */
export interface StoredEndpoint {
  readonly clientId: string;
  readonly url: string;
  readonly enabled: boolean;
  /** ISO 8601. */
  readonly createdAt: string;
  readonly startsAfter: number;
  readonly delivered: number;
  readonly attempts: number;
  /** ISO 8601, or `''` when the next attempt is due now. */
  readonly nextAttemptAt: string;
  /** `gone`, `retries_exhausted`, or `''` while enabled. */
  readonly disabledReason: string;
  readonly disabledAt: string;
  readonly disabledDetail: string;
}

export function storedOf(id: string, endpoint: NewWebhookEndpoint): { readonly id: string; readonly stored: StoredEndpoint } {
  return {
    id,
    stored: {
      clientId: endpoint.clientId,
      url: endpoint.url,
      enabled: true,
      createdAt: endpoint.createdAt.toISOString(),
      startsAfter: endpoint.startsAfter,
      delivered: endpoint.startsAfter,
      attempts: 0,
      nextAttemptAt: '',
      disabledReason: '',
      disabledAt: '',
      disabledDetail: '',
    },
  };
}

/** `stored` with `update` applied: the delivery state replaced, and disabled when the update says so. */
export function updated(stored: StoredEndpoint, update: WebhookEndpointUpdate): StoredEndpoint {
  const { delivery, disabled } = update;
  return {
    ...stored,
    delivered: delivery.delivered,
    attempts: delivery.attempts,
    nextAttemptAt: delivery.nextAttemptAt?.toISOString() ?? '',
    ...(disabled !== undefined && {
      enabled: false,
      disabledReason: disabled.reason,
      disabledAt: disabled.at.toISOString(),
      disabledDetail: disabled.detail,
    }),
  };
}

export function endpointOf(id: string, stored: StoredEndpoint): WebhookEndpoint {
  return {
    id,
    clientId: stored.clientId,
    url: stored.url,
    enabled: stored.enabled,
    ...(!stored.enabled &&
      stored.disabledReason !== '' && {
        disabled: { reason: stored.disabledReason as WebhookDisabledReason, at: new Date(stored.disabledAt), detail: stored.disabledDetail },
      }),
    createdAt: new Date(stored.createdAt),
    startsAfter: stored.startsAfter,
    delivery: {
      delivered: stored.delivered,
      attempts: stored.attempts,
      ...(stored.nextAttemptAt !== '' && { nextAttemptAt: new Date(stored.nextAttemptAt) }),
    },
  };
}

/** Oldest first; ids break ties, so every adapter lists alike. */
export function byCreation(a: WebhookEndpoint, b: WebhookEndpoint): number {
  return a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** What is wrong with a stored endpoint read back (a file edited by hand), or `undefined`. */
export function storedProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'must be an object';
  const record = value as Record<string, unknown>;
  for (const field of ['clientId', 'url', 'createdAt', 'nextAttemptAt', 'disabledReason', 'disabledAt', 'disabledDetail'] as const) {
    if (typeof record[field] !== 'string') return `${field} must be a string`;
  }
  for (const field of ['startsAfter', 'delivered', 'attempts'] as const) {
    if (!Number.isSafeInteger(record[field]) || (record[field] as number) < 0) return `${field} must be a whole number`;
  }
  if (typeof record['enabled'] !== 'boolean') return 'enabled must be true or false';
  return undefined;
}
