import { decideDownload, type DownloadDecision, type DownloadRequest } from '../domain/download-policy.js';
import { FileNotFound, RateLimited, type BudgetStanding } from '../domain/errors.js';
import type { CatalogEntry } from '../domain/file-catalog.js';
import type { QuotaStanding } from '../domain/monthly-quota.js';
import type { BlobContent, BlobProperties, Clock, Principal } from '../domain/ports.js';
import { capToTerm, capToWindow } from '../domain/subscription.js';
import type { DownloadInterface, DownloadOutcome, EventSink, TransferFailure } from './events.js';
import type { DownloadTarget, FileAccess, PreparedDownload } from './file-access.js';
import type { Metering, RequestLog, Reservation } from './metering.js';

/** What a direct link is made for: one client, one file version, until it expires. */
export interface DirectLinkRequest {
  readonly clientId: string;
  readonly symbol: string;
  readonly path: string;
  /** The version the link is for. */
  readonly etag: string;
  readonly expiresAt: Date;
  /** What the download through the link should be saved as. */
  readonly contentDisposition: string;
}

/**
 * Who makes direct links. A gateway-signed link is served by the gateway, so each of its uses is a
 * download like any other (counted, and drawn from the monthly quota); a storage link (an Azure
 * SAS) is served by storage, where the gateway sees no use: it is counted as one whole download
 * when it is made, and never handed to a client with a monthly quota.
 */
export interface LinkMakers {
  /** The gateway's own signed link, served by any instance under `baseUrl`. */
  readonly signed: ((link: DirectLinkRequest, baseUrl: string) => Promise<string>) | undefined;
  /** Storage's own link, when the store can make one (DOWNLOAD_LINKS=on on Azure). */
  readonly storage: ((link: DirectLinkRequest) => Promise<string>) | undefined;
}

export interface DownloadsDependencies {
  readonly files: FileAccess;
  readonly metering: Metering;
  readonly events: EventSink;
  readonly clock: Clock;
}

/** What identifies a download attempt when a door starts it. */
export interface DownloadStart {
  readonly interface: DownloadInterface;
  readonly requestId: string;
  /** The client the attempt is billed to (a link's holder for a signed link). */
  readonly clientId: string;
  readonly method: string;
  /** The `Range` header as sent. */
  readonly range: string | null;
  readonly symbol: string | null;
  readonly path: string | null;
  /** The request's own logger. */
  readonly log: RequestLog;
}

/** One download to decide: whose, of what, with which conditionals and range. */
export interface DownloadCommand {
  readonly principal: Principal;
  readonly target: DownloadTarget;
  readonly request: DownloadRequest;
  /** Serve only this version (a link made for it); any other gets `preconditionFailed`. */
  readonly pinnedEtag?: string;
  /**
   * The validators the door's protocol shows (the S3 API's entity tag is the content's MD5):
   * conditionals are decided against them. The stored properties when absent.
   */
  readonly viewOf?: (properties: BlobProperties) => BlobProperties;
  /** The door answers a full or partial GET with a direct link: nothing is counted or reserved for a body. */
  readonly redirect?: boolean;
}

/** A decided download, as the door writes it. */
export interface DecidedDownload {
  readonly entry: CatalogEntry;
  /** The stored file's properties (the version whose bytes `open` reads). */
  readonly properties: BlobProperties;
  /** The validators shown, from `viewOf`. */
  readonly view: BlobProperties;
  readonly decision: DownloadDecision;
  /** The body's length for a full or partial answer, otherwise 0. */
  readonly length: number;
}

/** What a door tells the core once its answer is over. */
export interface DownloadEnding {
  readonly status: number;
  /** The answer was a refusal even though its status is 5xx (the S3 API's 503 SlowDown). */
  readonly refused?: boolean;
  /** The whole answer was handed to the connection. */
  readonly finished: boolean;
}

/**
 * The use cases of downloads and links, shared by every door: the native routes, the S3 API's
 * GetObject and HeadObject, gateway-signed links and the portal's links.
 *
 * A door starts a session per request, asks it to decide (resolve, admit, decide, count, reserve),
 * writes the answer in its own dialect while reporting the bytes it hands over, and ends the session
 * once the answer is over; the session then settles (the unsent bytes given back) and emits one
 * `download.settled` event.
 */
export class Downloads {
  readonly #settling = new Set<Promise<void>>();

  constructor(private readonly deps: DownloadsDependencies) {}

  start(start: DownloadStart): DownloadSession {
    return new DownloadSession(this.deps, start, (settling) => {
      this.#settling.add(settling);
      void settling.finally(() => this.#settling.delete(settling));
    });
  }

  /** Resolves once every session ended so far has settled and emitted its event (for the drain). */
  async settled(): Promise<void> {
    while (this.#settling.size > 0) await Promise.allSettled([...this.#settling]);
  }
}

export class DownloadSession {
  symbol: string | null;
  path: string | null;
  #fileSize: number | null = null;
  #etag: string | null = null;
  #bytesSent = 0;
  #bodyLength: number | null = null;
  #failure: TransferFailure | undefined;
  #linked = false;
  #reservation: Reservation | undefined;
  #decided: DecidedDownload | undefined;
  #ended = false;
  readonly #startedAt: number;
  /** The download budget's standing after this request was counted (for the `RateLimit` fields). */
  budget: BudgetStanding | undefined;
  /** The monthly quota's standing (for the `RateLimit` fields). */
  quota: QuotaStanding | undefined;

  constructor(
    private readonly deps: DownloadsDependencies,
    private readonly start: DownloadStart,
    private readonly track: (settling: Promise<void>) => void,
  ) {
    this.symbol = start.symbol;
    this.path = start.path;
    this.#startedAt = deps.clock.now().getTime();
  }

  get clientId(): string {
    return this.start.clientId;
  }

  /** The gateway's clock, for the seconds the answer's fields count down. */
  now(): Date {
    return this.deps.clock.now();
  }

  /**
   * Resolves the target in the principal's catalog (refusals before storage is asked), admits it
   * against the download budget, decides from the file's current properties, counts it, and
   * reserves a GET body's bytes from the monthly quota. Throws every refusal.
   */
  async decide(command: DownloadCommand): Promise<DecidedDownload> {
    const { principal, request } = command;
    const entry = await this.deps.files.resolve(principal, command.target);
    this.symbol = entry.symbol;
    this.path = entry.fileName;
    // Only a revalidation can end in 304, which is never counted nor refused. A request that may be
    // partial is let through a spent budget when this file's version was counted (its ranges are free).
    const mayBeNotModified = request.ifNoneMatch !== undefined || request.ifModifiedSince !== undefined;
    const wholeBody = request.method === 'GET' && request.range === undefined;
    if (!mayBeNotModified && command.redirect !== true) await this.#refusing(() => this.deps.metering.admit(principal.clientId, entry.fileName, !wholeBody));
    let current: PreparedDownload;
    try {
      current = await this.deps.files.decide(entry, { method: request.method });
    } catch (error) {
      if (error instanceof FileNotFound) await this.#refusing(() => this.deps.metering.countUnversioned(principal.clientId));
      throw error;
    }
    const properties = current.properties;
    const view = command.viewOf?.(properties) ?? properties;
    const now = this.deps.clock.now();
    const decision: DownloadDecision =
      command.pinnedEtag !== undefined && properties.etag !== command.pinnedEtag
        ? { kind: 'preconditionFailed', reason: 'The file changed since the link was made: ask for a new link' }
        : decideDownload(view, request, now);
    this.#fileSize = properties.size;
    this.#etag = view.etag;
    const length = decision.kind === 'partial' ? decision.range.end - decision.range.start + 1 : decision.kind === 'full' ? properties.size : 0;
    const withBody = (decision.kind === 'full' || decision.kind === 'partial') && request.method === 'GET';
    if (decision.kind !== 'notModified' && !(withBody && command.redirect === true)) {
      // Every complete body is a download; partial requests, HEADs and refused preconditions of one
      // version count once together within the window.
      this.budget = await this.#refusing(() =>
        decision.kind === 'full' && request.method === 'GET'
          ? this.deps.metering.countWhole(principal.clientId)
          : this.deps.metering.countVersion(principal.clientId, entry.fileName, properties.etag),
      );
    }
    if (withBody && command.redirect !== true) {
      this.#reservation = await this.deps.metering.reserve(principal, length, {
        log: this.start.log,
        requestId: this.start.requestId,
        onRefused: (standing) => (this.quota = standing),
      });
      this.quota = this.#reservation.standing;
    } else {
      this.quota = await this.deps.metering.standing(principal, this.start.log);
    }
    this.#decided = { entry, properties, view, decision, length };
    return this.#decided;
  }

  /**
   * The bytes of the decided full or partial download, pinned to the version whose headers were
   * decided: throws `ContentChanged` if the file changed since.
   */
  open(signal: AbortSignal): Promise<BlobContent> {
    const decided = this.#decided;
    if (decided === undefined || (decided.decision.kind !== 'full' && decided.decision.kind !== 'partial')) {
      throw new Error('Only a decided full or partial download has a body to open');
    }
    return this.deps.files.open({ entry: decided.entry, properties: decided.properties, decision: decided.decision }, signal);
  }

  /** The door starts sending a body of `length` bytes. */
  bodyStarted(length: number): void {
    this.#bodyLength = length;
  }

  /** The door handed `count` more body bytes to the connection. */
  delivered(count: number): void {
    this.#bytesSent += count;
  }

  /** The body ended before its last byte, for `reason`. */
  transferFailed(reason: TransferFailure): void {
    this.#failure = reason;
  }

  /**
   * A direct link to the target instead of its bytes (`GET /link/<symbol>`, a portal link,
   * `?redirect=true`): the gateway's signed link where it can make one (each use is then metered as
   * a download), else storage's, counted now as one whole download. A client with a monthly quota
   * never gets a storage link, whose uses the gateway could not meter. Throws `NotEntitled`,
   * `FileNotFound`, `RateLimited`.
   */
  async link(
    command: {
      readonly principal: Principal;
      readonly symbol: string;
      readonly ttlMs: number;
      readonly baseUrl: string;
      readonly makers: LinkMakers;
      /** The `Content-Disposition` a download through the link gets, from the decided file. */
      readonly dispositionOf: (decided: { readonly entry: CatalogEntry; readonly properties: BlobProperties }) => string;
    },
    decided?: DecidedDownload,
  ): Promise<{ readonly url: string; readonly expiresAt: Date; readonly size: number; readonly etag: string }> {
    const { principal, makers } = command;
    let current = decided;
    if (current === undefined) {
      const entry = await this.deps.files.resolve(principal, { symbol: command.symbol });
      this.symbol = entry.symbol;
      this.path = entry.fileName;
      let properties: BlobProperties;
      try {
        ({ properties } = await this.deps.files.decide(entry, { method: 'GET' }));
      } catch (error) {
        if (error instanceof FileNotFound) await this.#refusing(() => this.deps.metering.countUnversioned(principal.clientId));
        throw error;
      }
      current = { entry, properties, view: properties, decision: { kind: 'full' }, length: properties.size };
    }
    const { entry, properties } = current;
    this.#fileSize = properties.size;
    this.#etag = properties.etag;
    // Storage serves its own links unseen: only a client without a monthly quota may get one.
    const storage = principal.monthlyBytes === undefined ? makers.storage : undefined;
    const signed = makers.signed;
    const make = storage ?? (signed === undefined ? undefined : (link: DirectLinkRequest) => signed(link, command.baseUrl));
    if (make === undefined) {
      throw new Error(
        principal.monthlyBytes === undefined
          ? 'No direct links can be made: neither the gateway nor storage signs them'
          : 'A client with a monthly quota is never handed a storage link, and the gateway signs none here',
      );
    }
    if (storage !== undefined) this.budget = await this.#refusing(() => this.deps.metering.countWhole(principal.clientId));
    this.quota = await this.deps.metering.standing(principal, this.start.log);
    // No link outlives the subscription term or the file's release window; whole seconds, rounded
    // down: what a SAS or a JWT can say.
    const wanted = new Date(this.deps.clock.now().getTime() + command.ttlMs);
    const capped = capToWindow(capToTerm(wanted, principal), entry);
    const expiresAt = new Date(Math.floor(capped.getTime() / 1000) * 1000);
    const request: DirectLinkRequest = {
      clientId: principal.clientId,
      symbol: entry.symbol,
      path: entry.fileName,
      etag: properties.etag,
      expiresAt,
      contentDisposition: command.dispositionOf(current),
    };
    const url = await make(request);
    this.#linked = true;
    return { url, expiresAt, size: properties.size, etag: properties.etag };
  }

  /**
   * The door's answer is over (handed whole to the connection, or the connection ended): gives back
   * the reserved bytes that were not delivered, then emits `download.settled` once, with what the
   * ledger kept. Settles at once (the event emitted in this tick) when there is nothing to give back.
   */
  end(ending: DownloadEnding): Promise<void> {
    if (this.#ended) return Promise.resolve();
    this.#ended = true;
    const outcome = this.#outcome(ending);
    const reservation = this.#reservation;
    const unsent = reservation === undefined ? 0 : outcome === 'completed' ? 0 : Math.max(0, reservation.bytes - this.#bytesSent);
    if (reservation === undefined || unsent === 0) {
      this.#emit(ending, outcome, reservation?.bytes ?? 0);
      return Promise.resolve();
    }
    const settling = reservation.refund(unsent).then((back) => this.#emit(ending, outcome, reservation.bytes - back));
    this.track(settling);
    return settling;
  }

  #emit(ending: DownloadEnding, outcome: DownloadOutcome, quotaBytes: number): void {
    this.deps.events.emit({
      type: 'download.settled',
      interface: this.start.interface,
      requestId: this.start.requestId,
      clientId: this.start.clientId,
      symbol: this.symbol,
      path: this.path,
      method: this.start.method,
      status: ending.status,
      range: this.start.range,
      bytesSent: this.#bytesSent,
      quotaBytes,
      fileSize: this.#fileSize,
      etag: this.#etag,
      outcome,
      durationMs: Math.round(this.deps.clock.now().getTime() - this.#startedAt),
    });
  }

  #outcome(ending: DownloadEnding): DownloadOutcome {
    const { status } = ending;
    if (this.#linked && status < 400) return 'linked';
    if (status === 304) return 'not_modified';
    if (ending.refused === true) return 'refused';
    if (status >= 500) return 'failed';
    if (status >= 400) return 'refused';
    const delivered = this.#bodyLength !== null && this.#bytesSent === this.#bodyLength;
    if ((ending.finished || delivered) && this.#failure === undefined) return 'completed';
    return this.#failure === undefined || this.#failure === 'aborted' || this.#failure === 'reader-idle' ? 'aborted' : 'failed';
  }

  /** Runs a count or admission, keeping the refused budget's standing for the answer's fields. */
  async #refusing<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof RateLimited && error.standing !== undefined) this.budget = error.standing;
      throw error;
    }
  }
}
