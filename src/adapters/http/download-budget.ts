import type { Request, Response } from 'express';
import type { CountedVersions } from './counted-versions.js';
import { RequestRefused } from './error-responses.js';
import type { DownloadLimiter } from './rate-limits.js';

/**
 * What a client's download budget counts: one download per file version per client within the
 * download window, whatever the route (`/download/<symbol>`, `/<path>`, `GET /link/<symbol>`, a
 * `?redirect=true`, a gateway-signed link) and however many requests (ranges, HEAD, GET) it takes.
 * 304 revalidations are never counted.
 */
export class DownloadBudget {
  constructor(
    private readonly limiter: DownloadLimiter,
    private readonly versions: CountedVersions,
  ) {}

  /**
   * Before storage is asked anything: refuses a client whose budget is spent, unless a version of
   * this file was counted for it within the window (the one it is about to get, most likely).
   */
  async admit(clientId: string, path: string): Promise<void> {
    try {
      await this.limiter.refuseIfSpent(clientId);
    } catch (error) {
      // Only a spent budget may be overlooked; a store that cannot be read (503) may not.
      if (!(error instanceof RequestRefused && error.code === 'rate_limited')) throw error;
      if ((await this.versions.counted(clientId, path)) === undefined) throw error;
    }
  }

  /**
   * Counts a download of version `etag` of `path`, unless that version was already counted for the
   * client within the window. Throws the `rate_limited` refusal when the budget is spent; a refused
   * download leaves its version uncounted.
   */
  async count(req: Request, res: Response, clientId: string, path: string, etag: string): Promise<void> {
    if (!(await this.versions.claim(clientId, path, etag))) return;
    try {
      await this.limiter.count(req, res, clientId);
    } catch (error) {
      await this.versions.release(clientId, path, etag);
      throw error;
    }
  }

  /**
   * Counts a request for a file storage does not have (no version to count it by), so that asking
   * for it again and again costs the client its budget. Storage failures are not counted: they are
   * the gateway's, not the client's.
   */
  countUnversioned(req: Request, res: Response, clientId: string): Promise<void> {
    return this.limiter.count(req, res, clientId);
  }
}
