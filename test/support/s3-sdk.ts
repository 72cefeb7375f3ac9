import { S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { JoseSigner } from '../../src/adapters/signing/jose-signer.js';
import { testSigningKey } from './gateway.js';

/** The secret access key the gateway derives for `accessKeyId` from `rootKey` (TOKEN_SIGNING_KEY). */
export function secretAccessKeyOf(accessKeyId: string, rootKey: Uint8Array = testSigningKey): string {
  return new JoseSigner({ rootKey, clock: { now: () => new Date() } }).s3SecretAccessKey(accessKeyId);
}

/**
 * An @aws-sdk/client-s3 client of a test gateway, signing with an operator access key (its secret
 * derived from `testSigningKey`, as the gateway derives it), path-style, without retries.
 */
export function s3ClientWithKey(endpoint: string, accessKeyId: string, region = 'us-east-1'): S3Client {
  return new S3Client({
    endpoint,
    region,
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey: secretAccessKeyOf(accessKeyId) },
    maxAttempts: 1,
  });
}

/** The S3 error an SDK call fails with; fails the test if the call succeeds or fails otherwise. */
export async function s3Failure(promise: Promise<unknown>): Promise<S3ServiceException> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return error;
    throw error;
  }
  throw new Error('expected the S3 request to fail');
}
