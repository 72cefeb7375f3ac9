import { S3ServiceException } from '@aws-sdk/client-s3';

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
