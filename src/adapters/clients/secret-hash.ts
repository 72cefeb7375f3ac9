import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import pLimit, { type LimitFunction } from 'p-limit';
import type { SecretHasher } from '../../domain/ports.js';
import { ScryptThreads, type ScryptOptions } from './scrypt-threads.js';

/**
 * Client secrets are stored as scrypt hashes (RFC 7914) in a self-describing string,
 * `scrypt$<N>$<r>$<p>$<salt base64url>$<key base64url>`, so the parameters can be raised later
 * without breaking the hashes already stored.
 */
const SCHEME = 'scrypt';
const COST = 16384;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_BYTES = 32;
const SALT_BYTES = 16;

/**
 * Bounds on what a stored hash may ask for, so that a hand-edited or corrupted registry cannot make
 * one verification take gigabytes of memory (scrypt needs about 128 * N * r bytes).
 */
const MAX_MEMORY_BYTES = 64 * 1024 * 1024;
const MAX_PARALLELISM = 16;

const DECIMAL = /^[1-9][0-9]{0,9}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

interface ScryptHash {
  readonly cost: number;
  readonly blockSize: number;
  readonly parallelism: number;
  readonly salt: Buffer;
  readonly key: Buffer;
}

/** A new secret: 32 bytes from the CSPRNG as base64url without padding (43 characters, RFC 3986 unreserved only). */
export function generateSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** How a key is derived: on Node's thread pool (`crypto.scrypt`) unless given. */
type DeriveKey = (secret: string, salt: Buffer, keyLength: number, options: ScryptOptions) => Promise<Buffer>;

/**
 * The self-describing scrypt hash of `secret`, with a fresh random salt. `cost` (scrypt's N, a
 * power of two) is the production cost unless given: the tests register clients at a cheap one
 * where the cost is not what they test, since a hash carries its cost and verification follows it.
 */
export async function hashSecret(secret: string, derive: DeriveKey = scryptOnThreadPool, cost: number = COST): Promise<string> {
  if (!Number.isSafeInteger(cost) || cost < 2 || (cost & (cost - 1)) !== 0) throw new RangeError(`scrypt cost must be a power of two of at least 2, not ${cost}`);
  const salt = randomBytes(SALT_BYTES);
  const key = await deriveKey(derive, secret, salt, KEY_BYTES, cost, BLOCK_SIZE, PARALLELISM);
  return [SCHEME, cost, BLOCK_SIZE, PARALLELISM, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/**
 * Whether `secret` matches `hash`. A malformed or unsupported hash is a mismatch, never an error, so
 * one corrupted registry entry locks out that client only.
 */
export async function verifySecret(secret: string, hash: string, derive: DeriveKey = scryptOnThreadPool): Promise<boolean> {
  const parsed = parseHash(hash);
  if (parsed === undefined) return false;
  let derived: Buffer;
  try {
    derived = await deriveKey(derive, secret, parsed.salt, parsed.key.length, parsed.cost, parsed.blockSize, parsed.parallelism);
  } catch {
    return false;
  }
  // Constant time, so the comparison does not tell how many leading bytes were right.
  return timingSafeEqual(derived, parsed.key);
}

/** Fingerprints a `ScryptSecretHasher` keeps, one per stored hash it was asked about. */
const MAX_KEPT_FINGERPRINTS = 100_000;

/**
 * A short, stable id of a stored hash (not of the secret): 16 hex characters of its SHA-256. Tokens
 * carry it so that rotating a secret, which changes the hash, revokes the tokens issued before.
 */
export function secretFingerprint(hash: string): string {
  return createHash('sha256').update(hash, 'utf8').digest('hex').slice(0, 16);
}

function parseHash(hash: string): ScryptHash | undefined {
  const parts = hash.split('$');
  if (parts.length !== 6) return undefined;
  const [scheme, costText, blockSizeText, parallelismText, saltText, keyText] = parts as [string, string, string, string, string, string];
  if (scheme !== SCHEME) return undefined;
  if (!DECIMAL.test(costText) || !DECIMAL.test(blockSizeText) || !DECIMAL.test(parallelismText)) return undefined;
  const cost = Number(costText);
  const blockSize = Number(blockSizeText);
  const parallelism = Number(parallelismText);
  const costIsPowerOfTwo = cost > 1 && Number.isSafeInteger(cost) && (cost & (cost - 1)) === 0;
  if (!costIsPowerOfTwo || 128 * cost * blockSize > MAX_MEMORY_BYTES || parallelism > MAX_PARALLELISM) return undefined;
  const salt = decodeBase64url(saltText);
  const key = decodeBase64url(keyText);
  if (salt === undefined || key === undefined) return undefined;
  if (salt.length < 8 || salt.length > 64 || key.length < 16 || key.length > 64) return undefined;
  return { cost, blockSize, parallelism, salt, key };
}

/** Strict base64url: Node's decoder skips bad characters, so only a canonical round trip is accepted. */
function decodeBase64url(text: string): Buffer | undefined {
  if (!BASE64URL.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}

function deriveKey(
  derive: DeriveKey,
  secret: string,
  salt: Buffer,
  keyLength: number,
  cost: number,
  blockSize: number,
  parallelism: number,
): Promise<Buffer> {
  // OpenSSL needs 128 * r * (N + p) bytes and some slack; the default limit (32 MiB) is too tight near the bound.
  const maxmem = 128 * blockSize * (cost + parallelism + 2) + 1024 * 1024;
  return derive(secret, salt, keyLength, { N: cost, r: blockSize, p: parallelism, maxmem });
}

function scryptOnThreadPool(secret: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, keyLength, options, (error, key) => {
      if (error) reject(error);
      else resolve(key);
    });
  });
}

/**
 * The `SecretHasher` port over the scrypt functions above, with at most `concurrency`
 * verifications running at once, each on a thread of its own (`ScryptThreads`: not Node's shared
 * pool, whose threads would each keep 16 MiB of scrypt's memory, and which file-system calls
 * need): a flood of token requests then waits instead of taking every core. (The token
 * endpoint's `VerificationQueue` bounds and shares out that wait between addresses before a
 * verification gets here.)
 */
export class ScryptSecretHasher implements SecretHasher {
  #decoy: Promise<string> | undefined;
  readonly #fingerprints = new Map<string, string>();
  readonly #limit: LimitFunction;
  readonly #threads: ScryptThreads;
  readonly #derive: DeriveKey;

  constructor(options: { readonly concurrency: number }) {
    this.#limit = pLimit(options.concurrency);
    this.#threads = new ScryptThreads(options.concurrency);
    this.#derive = (secret, salt, keyLength, scryptOptions) => this.#threads.derive(secret, salt, keyLength, scryptOptions);
  }

  verify(secret: string, hash: string): Promise<boolean> {
    return this.#limit(() => verifySecret(secret, hash, this.#derive));
  }

  decoyHash(): Promise<string> {
    // Made once, lazily, from a random secret that is then forgotten: no client can have it.
    this.#decoy ??= this.#limit(() => hashSecret(generateSecret(), this.#derive));
    return this.#decoy;
  }

  /** Ends the hashing threads (they would not keep the process alive anyway). */
  close(): Promise<void> {
    return this.#threads.close();
  }

  fingerprint(hash: string): string {
    // Every authenticated request compares its token's fingerprint with its client's: computed once
    // per stored hash (hashes come from the registry, never from a request; the bound only keeps a
    // process that sees endless rotations from growing).
    let fingerprint = this.#fingerprints.get(hash);
    if (fingerprint === undefined) {
      if (this.#fingerprints.size >= MAX_KEPT_FINGERPRINTS) this.#fingerprints.clear();
      fingerprint = secretFingerprint(hash);
      this.#fingerprints.set(hash, fingerprint);
    }
    return fingerprint;
  }
}
