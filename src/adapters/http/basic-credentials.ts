export interface BasicCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
}

/**
 * Client credentials from an HTTP Basic `Authorization` header (RFC 6749 section 2.3.1: id and
 * secret are form-urlencoded, then joined with `:` and base64-encoded). `undefined` when the
 * header is not Basic or not well formed.
 */
export function parseBasicCredentials(authorization: string): BasicCredentials | undefined {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(authorization);
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  try {
    return {
      clientId: decodeFormComponent(decoded.slice(0, colon)),
      clientSecret: decodeFormComponent(decoded.slice(colon + 1)),
    };
  } catch {
    return undefined;
  }
}

function decodeFormComponent(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}
