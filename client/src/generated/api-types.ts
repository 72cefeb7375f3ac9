/**
 * GENERATED from openapi.yaml by openapi-typescript: do not edit.
 * Regenerate with `npm run generate -w client`; test/client/generated-types.test.ts fails when
 * this file and openapi.yaml disagree.
 */

export interface paths {
    "/oauth/token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Issue an access token (OAuth 2.0 client credentials grant)
         * @description RFC 6749 section 4.4. Only `grant_type=client_credentials` is supported. The client
         *     authenticates with HTTP Basic (`Authorization: Basic ...`, RFC 6749 section 2.3.1) or
         *     with `client_id` and `client_secret` in the body; not both. The body may be
         *     `application/x-www-form-urlencoded` (standard) or `application/json`.
         *
         *     Errors follow RFC 6749 section 5.2: `400` with `invalid_request`,
         *     `unsupported_grant_type`, ..., and `401` with `invalid_client` plus a
         *     `WWW-Authenticate: Basic` challenge when the client authenticated with HTTP Basic.
         *     Token responses and errors are never cached (`Cache-Control: no-store`).
         */
        post: operations["issueToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/oauth/s3-credentials": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Temporary credentials for the S3-compatible API
         * @description Only when the gateway runs its read-only S3-compatible API (`S3_API=on`); `404` otherwise.
         *     Exchanges the bearer token for temporary S3 credentials in the AWS `credential_process`
         *     format (version 1), valid until the bearer token expires and no longer. Sign S3 requests
         *     with `AccessKeyId` and `SecretAccessKey` and send `SessionToken` as
         *     `X-Amz-Security-Token` (any AWS SDK does this from a `credential_process` profile, e.g.
         *     `credential_process = dfg credentials --aws`). Rotating the client's secret or disabling
         *     the client ends them, as it ends the bearer token. Never cached.
         */
        post: operations["issueS3Credentials"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/catalog": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's catalog (its index)
         * @description Every entry of the caller's index, as subscribed: symbol, description and file name.
         *     Entries are returned whether or not storage currently holds the file (see `/list`). An
         *     entry with a release window (`AvailableFrom`, `AvailableUntil`) is here only within it:
         *     it appears and disappears at its boundaries, without any change of the index. The
         *     answer carries a weak `ETag`; send it back in `If-None-Match` to get `304` while the
         *     index and the released entries are unchanged.
         */
        get: operations["getCatalog"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/list": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's files that storage holds, with size and upload time
         * @description The entries of the caller's index whose file exists in storage, at most `limit` of them,
         *     in index order, each with its `etag` (and `md5` where storage has one). With
         *     `modifiedSince`, only the files uploaded at or after that moment: a daily mirror of a large
         *     catalog then costs one small answer. `truncated` is true when more files match than were
         *     returned. Which files exist is reused for `LIST_CACHE_SECONDS` (a few seconds) before
         *     storage is asked again. The answer carries a weak `ETag`; send it back in `If-None-Match`
         *     to get `304` while nothing changed.
         *
         *     A truncated answer carries `nextCursor`: send it back as `cursor` for the next page, and
         *     so on until an answer has no `nextCursor`; every file is then returned exactly once. A
         *     cursor works on any instance and keeps the `modifiedSince` it was made with. If the
         *     caller's index changed since the listing started, or a release window opened or closed
         *     since (see `/catalog`), the cursor is refused with `410` (`cursor_expired`): list again
         *     from the start.
         *
         *     Files outside their release window are not listed; `availableFrom` and `availableUntil`
         *     show the window of a file that has one.
         */
        get: operations["listFiles"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/count": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * How many of the caller's files storage holds
         * @description The number of entries of the caller's index whose file exists in storage and that are
         *     within their release window, if they have one: the total that `/list` reports as
         *     `truncated` when `limit` cuts it short.
         */
        get: operations["countFiles"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/changes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * What changed in the caller's view since a cursor (the change feed)
         * @description The caller's events, oldest first, after `cursor`: `file.released` (a file entered its
         *     view: stored, listed in its index and inside its release window), `file.updated` (a new
         *     version, another `etag`, of a file in its view) and `file.withdrawn` (a file left its
         *     view: deleted, its index row removed, or its window closed). Never another client's
         *     event. Delivery is at least once: an event may come again (same `id`) after a retry.
         *
         *     Without `cursor` the feed starts at the oldest event it still keeps
         *     (`CHANGES_RETENTION_DAYS`). To miss nothing, list once (`/list` or `/catalog`) and follow
         *     that answer's `changesCursor` (of a paged `/list`, the last page's). Then send each answer's `nextCursor` back as `cursor`;
         *     `hasMore` says more events are already waiting.
         *
         *     With `wait` (seconds, up to 60) an answer that would have no event is held until an event
         *     of the caller arrives or the wait ends; it then has no events and a `nextCursor` that
         *     is the very `cursor` that was sent (likewise without `wait`: an answer with no event gives
         *     the cursor back unchanged). A cursor is opaque, signed, and only the caller's own: an
         *     altered cursor or another client's is `400`; one after which an event of the caller was
         *     already dropped by the retention (or from before the gateway's change log was reset) is
         *     `410` (`cursor_expired`): list again. A quiet caller's cursor never expires.
         */
        get: operations["getChanges"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/account": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's subscription term and monthly byte quota
         * @description Who the token belongs to, its subscription term (`validFrom`/`validUntil`, absent when
         *     unbounded), and, for a client with a monthly byte quota, the quota, the bytes counted in the
         *     current period (the calendar month, UTC: downloads by their body size, links by their file's
         *     size when issued), what remains and when the count resets. No `quota` means no monthly
         *     limit. Asks storage nothing.
         */
        get: operations["getAccount"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's webhook endpoints
         * @description Every webhook endpoint of the caller (registered by it or by the operator), oldest first,
         *     with where its deliveries stand and, for a disabled one, why. Never a secret.
         */
        get: operations["listWebhooks"];
        put?: never;
        /**
         * Register a webhook endpoint
         * @description Registers `url` to receive the caller's change events (`file.released`, `file.updated`,
         *     `file.withdrawn`) as signed `POST`s after [Standard Webhooks](https://www.standardwebhooks.com/):
         *     headers `webhook-id` (the event id, the same on every retry), `webhook-timestamp` (Unix
         *     seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under
         *     the secret), body `{"type", "timestamp", "data": {symbol, fileName, size, etag, uploaded,
         *     sha256?}}`. The endpoint gets the events that happen after it is registered, at least
         *     once, in order; a `2xx` answer ends an event's delivery, `410` disables the endpoint,
         *     anything else is retried on the operator's schedule (`Retry-After` is honoured) and the
         *     endpoint is disabled once it is spent. `url` must be `https` to a public address. The
         *     `secret` is in this answer only: it is never shown again. At most 10 endpoints per client
         *     (`409 webhook_limit_reached`).
         */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The endpoint's id, as `POST /webhooks` or `GET /webhooks` gave it. */
                id: string;
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Remove a webhook endpoint
         * @description Removes one of the caller's endpoints: it gets no event from then on (a delivery already
         *     under way may still arrive). `404` for an id the caller does not own.
         */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/info/{symbol}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description A symbol of the caller's catalog (the `Symbol` column of its index), percent-encoded.
                 * @example PETR4
                 */
                symbol: components["parameters"]["Symbol"];
            };
            cookie?: never;
        };
        /**
         * Storage properties of one subscribed file
         * @description The size, upload time, entity tag and HTTP and custom metadata that storage keeps for the
         *     file of `symbol`, with the same `ETag` and `Last-Modified` a download would send. `403`
         *     when the symbol is not in the caller's index, or is outside its release window; `404` when
         *     storage does not hold the file.
         */
        get: operations["getFileInfo"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/download/{symbol}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description A symbol of the caller's catalog (the `Symbol` column of its index), percent-encoded.
                 * @example PETR4
                 */
                symbol: components["parameters"]["Symbol"];
            };
            cookie?: never;
        };
        /**
         * Download the file of a subscribed symbol
         * @description Streams the file the caller's index names for `symbol`. Supports conditional and range
         *     requests (see the request headers) and is rate limited per client. With
         *     `redirect=true` and direct links on (`DOWNLOAD_LINKS=on`), answers `307` to a direct
         *     link instead of the bytes (see `GET /link/{symbol}`).
         */
        get: operations["downloadBySymbol"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * Headers of the file of a subscribed symbol
         * @description Same as `GET /download/{symbol}` (same preconditions, rate limit and headers), without a
         *     body. `Range` is ignored on `HEAD` (RFC 9110 section 14.2), so there is no `206` or `416`.
         *     `HEAD` is never redirected (`redirect` is accepted and ignored).
         */
        head: operations["headDownloadBySymbol"];
        patch?: never;
        trace?: never;
    };
    "/download/signed/{name}": {
        parameters: {
            query: {
                /** @description The link's signature, as `GET /link/{symbol}` gave it. */
                token: components["parameters"]["LinkToken"];
            };
            header?: never;
            path: {
                /** @description The file's name (the last segment of its storage path), percent-encoded; it must match the link's file. */
                name: components["parameters"]["LinkFileName"];
            };
            cookie?: never;
        };
        /**
         * Download a file through a gateway-signed direct link
         * @description The `url` of `GET /link/{symbol}` when the gateway itself serves direct links (the local
         *     folder store; on Azure the link is storage's own SAS URL). No bearer token: the link is
         *     the credential, valid until its `expiresAt` for the one version (`etag`) it was made
         *     for; a changed file answers `412`. Ranges and conditionals work as for
         *     `GET /download/{symbol}`. Checked on every use: the link stops working (`403`) while
         *     its client is disabled or no longer registered (`invalid_link`) and once the file is no
         *     longer in that client's index (`not_entitled`). Each use is a download of the link's
         *     client exactly as its own downloads are: a whole body counts against its download rate
         *     limit every time (its ranges once per version within the window) and is drawn from its
         *     monthly byte quota (`429 rate_limited` or `quota_exceeded` once spent); making the link
         *     cost nothing.
         *     Exists only with `DOWNLOAD_LINKS=on` (`404` otherwise).
         */
        get: operations["downloadBySignedLink"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * Headers of a file, through a gateway-signed direct link
         * @description Same as `GET /download/signed/{name}`, without a body.
         */
        head: operations["headDownloadBySignedLink"];
        patch?: never;
        trace?: never;
    };
    "/link/{symbol}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description A symbol of the caller's catalog (the `Symbol` column of its index), percent-encoded.
                 * @example PETR4
                 */
                symbol: components["parameters"]["Symbol"];
            };
            cookie?: never;
        };
        /**
         * A direct, expiring link to the file of a subscribed symbol
         * @description A URL from which the file's bytes can be fetched without a bearer token until
         *     `expiresAt` (`DOWNLOAD_LINK_TTL_SECONDS` after the request, 300 by default), so that
         *     storage rather than the gateway moves them. On Azure it is a read-only SAS URL for
         *     exactly that blob (a user delegation SAS under a managed identity, a service SAS with an
         *     account key); on the local folder store it is a gateway-signed URL
         *     (`/download/signed/{name}`) pinned to the version `etag`. Send `If-Match: <etag>` with it
         *     to be sure to get that version from Azure too. Entitlement is checked exactly as for a
         *     download. A gateway-signed link costs nothing when it is made: each of its uses is a
         *     download (counted, and drawn from the monthly byte quota). A storage (SAS) link, whose
         *     uses the gateway never sees, counts as one whole download against the download rate limit
         *     when it is made; a client with a monthly byte quota always gets a gateway-signed link
         *     instead, so that every byte it receives is metered. `expiresAt` is never after the end of
         *     its subscription term. Exists only with `DOWNLOAD_LINKS=on` (`404` otherwise).
         */
        get: operations["getDownloadLink"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Liveness probe
         * @description `200` while the process runs; it asks storage nothing (readiness is `/ready`). No token
         *     needed.
         */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ready": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Readiness probe
         * @description Whether this instance should receive traffic: storage answered a cheap probe recently
         *     (results are reused for `READY_CACHE_SECONDS`, so polling costs storage nothing more), the
         *     client registry is readable, Redis answers when the limits live there, and the instance
         *     is not shutting down. Answers within 2 seconds whatever the dependencies do: one that
         *     has not answered by then counts as not ready. Never rate limited; no token needed. App
         *     Service's health check points here.
         */
        get: operations["getReadiness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics
         * @description The instance's metrics in the Prometheus text format. The route exists only when the
         *     operator sets `METRICS_TOKEN` (`404` otherwise), and answers only to
         *     `Authorization: Bearer <METRICS_TOKEN>` (compared in constant time): that token, not a
         *     client's, which is refused.
         */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.yaml": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This OpenAPI document
         * @description The contract itself, as YAML, to generate clients from (e.g.
         *     `npx openapi-typescript <base URL>/openapi.yaml -o api.ts`). No token needed.
         */
        get: operations["getOpenApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Interactive API reference
         * @description This document rendered by Swagger UI, served by the gateway itself (no CDN: it works
         *     offline, and its scripts may call this origin only). Its **Authorize** button gets a
         *     token with the client credentials (`oauth2` scheme) or takes a pasted one
         *     (`bearerAuth`); trying `POST /oauth/token` on the page also authorizes the other
         *     operations with the token it returns. No token needed to read it.
         */
        get: operations["getApiReference"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs/{asset}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description A file of the reference page (`swagger-ui-bundle.js`, `swagger-ui.css`, ...).
                 * @example swagger-ui.css
                 */
                asset: string;
            };
            cookie?: never;
        };
        /**
         * A script, style sheet or image of the reference page
         * @description The files `/docs` loads: Swagger UI's own (from the `swagger-ui-dist` package the gateway
         *     ships) and the page's start-up script. Any other name is `404`.
         */
        get: operations["getApiReferenceAsset"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/portal": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The subscriber portal
         * @description A single-page app, served by the gateway itself (no CDN), in which a subscriber signs in
         *     with its client id and secret (`POST /oauth/token`; the secret is never stored, the token
         *     lives in the tab's memory), browses and searches its files (`/catalog`, `/list`), sees a
         *     file's details (`/info/{symbol}`) with copy-ready commands, and downloads files through the
         *     browser's own download manager (`/portal/link/{symbol}`). Its Content-Security-Policy
         *     allows this origin only, nothing inline, and no framing. On by default; `PORTAL=off`
         *     removes every `/portal` route (`404`). No token needed to load it.
         */
        get: operations["getPortal"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/portal/config.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * What the portal needs to know of this gateway's configuration
         * @description The settings the portal cannot learn from the API itself: whether the S3-compatible API is
         *     on (then the portal offers an `aws s3 cp` command). No token needed; `404` with `PORTAL=off`.
         */
        get: operations["getPortalConfig"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/portal/assets/{asset}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description A file the portal's build wrote (its name carries a hash of its content).
                 * @example index-B4x1s9Qe.js
                 */
                asset: string;
            };
            cookie?: never;
        };
        /**
         * A script or style sheet of the portal
         * @description The files `/portal` loads, as `npm run build` wrote them. Any other name is `404`.
         */
        get: operations["getPortalAsset"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/portal/link/{symbol}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description A symbol of the caller's catalog (the `Symbol` column of its index), percent-encoded.
                 * @example PETR4
                 */
                symbol: components["parameters"]["Symbol"];
            };
            cookie?: never;
        };
        /**
         * A 60-second download link for the portal
         * @description What the portal hands to the browser's download manager, so that a large file is neither
         *     held in the tab's memory nor deprived of the browser's pause and resume: a link for this
         *     client and this one file (the version `etag`), valid 60 seconds (or `DOWNLOAD_LINK_TTL_SECONDS`
         *     when shorter). With `DOWNLOAD_LINKS=on` it is the same direct link as `GET /link/{symbol}`
         *     (a SAS URL on Azure); otherwise a gateway-signed `/download/signed/{name}` URL, which then
         *     exists for these links. Entitlement is checked exactly as for a download and the link is
         *     audited; it is metered as `GET /link/{symbol}` says (a gateway-signed link costs nothing
         *     until used, each use a download). `404` also with `PORTAL=off`.
         */
        get: operations["getPortalDownloadLink"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/oauth-authorization-server": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * OAuth 2.0 authorization server metadata (RFC 8414)
         * @description Where and how to get a token: `issuer` (the gateway's base URL: `PUBLIC_BASE_URL`, or the
         *     scheme and host of the request as `TRUST_PROXY` sees them), `token_endpoint`, the one grant
         *     (`client_credentials`) and the client authentication methods (`client_secret_basic`,
         *     `client_secret_post`). No token needed.
         */
        get: operations["getAuthorizationServerMetadata"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/oauth-protected-resource": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * OAuth 2.0 protected resource metadata (RFC 9728)
         * @description This API as a protected resource: its identifier (the gateway's base URL), the
         *     authorization server that issues its tokens (the same gateway, see
         *     `/.well-known/oauth-authorization-server`) and how tokens are presented (the
         *     `Authorization` header). No token needed.
         */
        get: operations["getProtectedResourceMetadata"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/{path}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The catalog `FileName` of the file, relative to the storage root.
                 *
                 *     * It may contain several `/`-separated segments (e.g. `equities/2024/PETR4.csv`, requested
                 *       as `/equities/2024/PETR4.csv`); each
                 *       segment is percent-encoded as usual (spaces as `%20`, accented letters as UTF-8
                 *       octets, e.g. `%C3%A7`) and the gateway decodes it exactly once. A path that still
                 *       contains `%` after that one decoding (double encoding such as `%2520` or `%252e`) is
                 *       rejected with `400`, so nothing is ever decoded twice.
                 *     * Files whose first path segment is a route name of this API (`oauth`, `catalog`,
                 *       `list`, `count`, `info`, `download`, `link`, `health`, `ready`, `metrics`,
                 *       `openapi.yaml`, `docs`, `portal`, `.well-known`) cannot be reached here;
                 *       use `/download/{symbol}` for them.
                 *     * Paths containing `.` or `..` segments (raw or encoded, e.g. `%2E%2E`), encoded
                 *       slashes (`%2F`), backslashes (raw or `%5C`), empty segments (`//`), NUL or other
                 *       control characters (`%00`, `%0A`), malformed percent-encoding or invalid UTF-8, more
                 *       than 1024 characters or a segment over 255 are rejected with `400`. An encoded dot
                 *       inside a name (`ok%2Ecsv`) is just a dot.
                 * @example PETR4.csv
                 */
                path: components["parameters"]["FilePath"];
            };
            cookie?: never;
        };
        /**
         * Download a subscribed file by its catalog FileName
         * @description Streams the file whose catalog `FileName` is `path`. Same behaviour as
         *     `GET /download/{symbol}`.
         */
        get: operations["downloadByPath"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * Headers of a subscribed file, by its catalog FileName
         * @description Same as `GET /{path}`, without a body.
         */
        head: operations["headDownloadByPath"];
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * @description RFC 6749 section 4.4.2 token request. A request that does not match this schema is
         *     answered with an RFC 6749 `invalid_request` error.
         */
        TokenRequest: {
            /**
             * @description Must be `client_credentials`.
             * @example client_credentials
             */
            grant_type: string;
            /**
             * @description The client id, when not sent with HTTP Basic.
             * @example acme
             */
            client_id?: string;
            /** @description The client secret, when not sent with HTTP Basic. */
            client_secret?: string;
        } & {
            [key: string]: unknown;
        };
        /** @description RFC 6749 section 5.1 access token response. */
        TokenResponse: {
            /** @description The bearer token (a JWT). */
            access_token: string;
            /** @enum {string} */
            token_type: "Bearer";
            /**
             * @description Lifetime of the token in seconds.
             * @example 3600
             */
            expires_in: number;
        };
        /**
         * @description Temporary credentials of the S3-compatible API, in the AWS `credential_process` output
         *     format (version 1).
         */
        S3Credentials: {
            /** @enum {integer} */
            Version: 1;
            AccessKeyId: string;
            SecretAccessKey: string;
            SessionToken: string;
            /**
             * Format: date-time
             * @description When the credentials stop working (the bearer token's expiry).
             */
            Expiration: string;
        };
        /**
         * @description RFC 6749 section 5.2 error response, plus `code`, which always equals `error` (so that
         *     every error body of this API has a `code`).
         */
        OAuthError: {
            /** @enum {string} */
            error: "invalid_request" | "invalid_client" | "invalid_grant" | "unauthorized_client" | "unsupported_grant_type" | "invalid_scope";
            error_description: string;
            /**
             * @description The same value as `error`.
             * @enum {string}
             */
            code: "invalid_request" | "invalid_client" | "invalid_grant" | "unauthorized_client" | "unsupported_grant_type" | "invalid_scope";
        };
        /**
         * @description The body of every error except the token endpoint's `400`/`401`. `error` is the
         *     status's reason phrase; `code` is a stable, machine-readable reason that programs should
         *     branch on (new codes may be added; a code never changes meaning):
         *
         *     | status | `error` | `code` |
         *     | --- | --- | --- |
         *     | 400 | `Bad request` | `invalid_request` (the request does not match this contract), `invalid_path` (an unsafe storage path), `webhook_url_refused` (a webhook URL the gateway will not call) |
         *     | 401 | `Unauthorized` | `missing_token` (no bearer token), `invalid_token` (malformed, forged, expired or revoked) |
         *     | 403 | `Access denied` | `not_entitled` (not in the caller's index), `invalid_link` (a download link that is forged, altered or expired) |
         *     | 404 | `Not found` | `file_not_found` (in the index, not in storage), `catalog_not_found` (the caller has no index), `route_not_found`, `webhook_not_found` |
         *     | 405 | `Method not allowed` | `method_not_allowed` (with `Allow`) |
         *     | 408 | `Request timeout` | `request_timeout` |
         *     | 409 | `Conflict` | `webhook_limit_reached` (10 webhook endpoints already) |
         *     | 410 | `Gone` | `cursor_expired` (a `/list` cursor from before the caller's index changed, a `/changes` cursor after which the retention dropped an event of the caller, or made before the change log was reset) |
         *     | 412 | `Precondition failed` | `precondition_failed` |
         *     | 416 | `Range not satisfiable` | `range_not_satisfiable` |
         *     | 429 | `Too many requests` | `rate_limited` (with `Retry-After`), `quota_exceeded` (the monthly byte quota; `Retry-After` until the month resets) |
         *     | 431 | `Request header fields too large` | `headers_too_large` |
         *     | 500 | `Internal error` | `index_malformed` (the caller's index cannot be read), `internal_error` |
         *     | 502 | `Bad gateway` | `storage_failed` |
         *     | 503 | `Service unavailable` | `storage_unavailable`, `content_changed` (the file changed while being served), `limits_unavailable` (the shared rate-limit store is down and `RATE_LIMIT_ON_STORE_ERROR=deny`, or, at `POST /oauth/token`, the secret verification queue is full), all with `Retry-After` |
         */
        Error: {
            /** @enum {string} */
            error: "Bad request" | "Unauthorized" | "Access denied" | "Not found" | "Method not allowed" | "Request timeout" | "Conflict" | "Gone" | "Precondition failed" | "Range not satisfiable" | "Too many requests" | "Request header fields too large" | "Internal error" | "Bad gateway" | "Service unavailable";
            /** @description Human-readable detail, safe to show to the caller. */
            message: string;
            /**
             * @description Stable, machine-readable reason (see the table above).
             * @enum {string}
             */
            code: "invalid_request" | "invalid_path" | "missing_token" | "invalid_token" | "not_entitled" | "file_not_found" | "catalog_not_found" | "route_not_found" | "method_not_allowed" | "request_timeout" | "precondition_failed" | "range_not_satisfiable" | "rate_limited" | "quota_exceeded" | "headers_too_large" | "index_malformed" | "internal_error" | "storage_failed" | "storage_unavailable" | "content_changed" | "limits_unavailable" | "invalid_link" | "cursor_expired" | "webhook_url_refused" | "webhook_not_found" | "webhook_limit_reached";
            /** @description Validation failures, on some `400` responses only. */
            details?: string[];
        };
        WebhookRegistration: {
            /**
             * @description Where to POST the events; `https` to a public address.
             * @example https://hooks.example.com/dfg
             */
            url: string;
        };
        WebhookEndpoint: {
            id: string;
            url: string;
            /** @description False once disabled (it answered `410`, or every retry failed); register it again to resume. */
            enabled: boolean;
            /** @enum {string} */
            disabledReason?: "gone" | "retries_exhausted";
            /** Format: date-time */
            disabledAt?: string;
            disabledDetail?: string;
            /** Format: date-time */
            createdAt: string;
            /** @description The position in the change log up to which events were delivered (or skipped, being from before registration). */
            delivered: number;
            /** @description Failed attempts at the next event. */
            attempts: number;
            /**
             * Format: date-time
             * @description When the next attempt is due after a failure.
             */
            nextAttemptAt?: string;
        };
        WebhookList: {
            webhooks: components["schemas"]["WebhookEndpoint"][];
        };
        WebhookCreated: {
            id: string;
            url: string;
            /** @description The signing secret (Standard Webhooks' `whsec_` and base64); shown this once. */
            secret: string;
        };
        /** @description The caller's index. */
        Catalog: {
            /** @example acme */
            clientId: string;
            files: components["schemas"]["CatalogFile"][];
            /** @description The number of entries in `files`. */
            count: number;
            /**
             * @description A change feed position this answer is known to include (read before the gateway last
             *     checked the index it answers from): pass it as `cursor` to `/changes` to follow every
             *     change this catalog does not show, missing none (opaque). Changes just before the
             *     answer may come again through the feed.
             */
            changesCursor?: string;
        };
        /** @description One entry of the caller's index. The capitalised property names are the index's column names. */
        CatalogFile: {
            /** @example PETR4 */
            Symbol: string;
            /** @example Petrobras PN daily quotes */
            Description: string;
            /**
             * @description The file's path in storage, usable as `/{path}`.
             * @example equities/PETR4.csv
             */
            FileName: string;
            /**
             * Format: date-time
             * @description The start of the file's release window, where the index has one: the file is in the
             *     catalog, listed and served from this moment on (UTC).
             * @example 2026-11-24T21:00:00.000Z
             */
            AvailableFrom?: string;
            /**
             * Format: date-time
             * @description The end of the file's release window, where the index has one: from this moment on the
             *     file is no longer in the catalog, listed or served (UTC).
             * @example 2026-12-31T00:00:00.000Z
             */
            AvailableUntil?: string;
        };
        FileList: {
            files: components["schemas"]["ListedFile"][];
            /** @description The number of entries in `files`. */
            count: number;
            /** @description The `limit` applied. */
            limit: number;
            /** @description True when more available files exist than `limit`. */
            truncated: boolean;
            /**
             * @description Present when `truncated`: pass it as `cursor` to get the next page (opaque; do not
             *     build or change it).
             */
            nextCursor?: string;
            /**
             * @description A change feed position this page and the earlier pages of its listing are known to
             *     include (read before the gateway last checked the index and storage it answers from):
             *     pass the last page's as `cursor` to `/changes` to follow every change the listing does
             *     not show, missing none (opaque). Changes just before the listing may come again.
             */
            changesCursor?: string;
        };
        /** @description A subscribed file that storage holds. */
        ListedFile: {
            /** @example PETR4 */
            symbol: string;
            /** @example Petrobras PN daily quotes */
            description: string;
            /**
             * @description The file's path in storage (the index's `FileName`, as `/catalog`'s `FileName`), usable as
             *     `/{path}`: a mirror lays out its files by it without reading `/catalog` as well.
             * @example equities/PETR4.csv
             */
            fileName: string;
            /**
             * @description Size in bytes.
             * @example 1234
             */
            size: number;
            /**
             * Format: date-time
             * @description When the file was last written to storage.
             */
            uploaded: string;
            /**
             * @description The file's strong entity tag, quotes included: the same value as the download's `ETag`,
             *     so a mirror can skip a file whose tag it already has, or revalidate it with
             *     `If-None-Match`.
             * @example "0x8DC2A4F5B1C2D3E"
             */
            etag: string;
            /**
             * Format: byte
             * @description Base64 MD5 of the content, when storage keeps one (Azure does for most uploads).
             * @example 1B2M2Y8AsgTpgAmY7PhCfg==
             */
            md5?: string;
            /**
             * @description SHA-256 of this version's content, 64 lowercase hex digits; absent until the gateway
             *     has computed it (it reads every new version once, older ones in the background).
             * @example 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
             */
            sha256?: string;
            /**
             * Format: date-time
             * @description The start of the file's release window, where the index has one (as `/catalog`'s `AvailableFrom`).
             * @example 2026-11-24T21:00:00.000Z
             */
            availableFrom?: string;
            /**
             * Format: date-time
             * @description The end of the file's release window, where the index has one (as `/catalog`'s `AvailableUntil`).
             * @example 2026-12-31T00:00:00.000Z
             */
            availableUntil?: string;
        };
        /** @description One page of the caller's change feed (`GET /changes`). */
        ChangeFeed: {
            /** @description The caller's events after the cursor, oldest first (empty when a wait ended without one). */
            events: components["schemas"]["ChangeEvent"][];
            /** @description Where to continue: send it back as `cursor` (opaque; do not build or change it). */
            nextCursor: string;
            /** @description True when more events are already waiting after `nextCursor`. */
            hasMore: boolean;
        };
        /** @description One change of the caller's view. */
        ChangeEvent: {
            /**
             * @description Unique and stable, the same on every instance and every retry (and a webhook's `webhook-id`).
             * @example chg_1795600000000042
             */
            id: string;
            /**
             * @description `file.released`: the file entered the caller's view (stored, in its index, inside its
             *     release window). `file.updated`: a new version of a file in its view. `file.withdrawn`:
             *     the file left its view.
             * @enum {string}
             */
            type: "file.released" | "file.updated" | "file.withdrawn";
            /**
             * Format: date-time
             * @description When the gateway found the change.
             */
            time: string;
            file: components["schemas"]["ChangedFile"];
        };
        /** @description The file an event is about, as the caller's index and storage described it when the change was found. */
        ChangedFile: {
            /** @example PETR4 */
            symbol: string;
            /**
             * @description The file's path in storage (as `/list`'s `fileName`).
             * @example equities/PETR4.csv
             */
            fileName: string;
            /** @description Size in bytes. */
            size: number;
            /**
             * @description The version's strong entity tag, quotes included (as `/list`'s `etag`).
             * @example "0x8DC2A4F5B1C2D3E"
             */
            etag: string;
            /**
             * Format: date-time
             * @description When storage last wrote the file.
             */
            uploaded: string;
            /**
             * @description SHA-256 of this version's content, 64 lowercase hex digits; absent until the gateway
             *     has computed it (it reads every new version once, older ones in the background).
             * @example 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
             */
            sha256?: string;
        };
        FileCount: {
            /** @description The number of the caller's files available in storage. */
            count: number;
        };
        /** @description The caller's subscription term and monthly byte quota (`GET /account`). */
        Account: {
            /** @example acme */
            clientId: string;
            /** @description When the subscription is in force, `[validFrom, validUntil)`; an absent bound is unbounded. */
            term: {
                /** Format: date-time */
                validFrom?: string;
                /**
                 * Format: date-time
                 * @description Tokens and links never outlive it.
                 */
                validUntil?: string;
                active: boolean;
            };
            /** @description The monthly byte quota; absent when the client has none (no monthly limit). */
            quota?: {
                /**
                 * @description Bytes per calendar month (UTC).
                 * @example 10737418240
                 */
                monthlyBytes: number;
                /**
                 * @description The current period, `YYYY-MM` (UTC).
                 * @example 2026-11
                 */
                period: string;
                /** @description Bytes counted in the period (downloads by body size, links by file size when issued). */
                used: number;
                remaining: number;
                /**
                 * Format: date-time
                 * @description When the next period starts and the count resets.
                 */
                resetsAt: string;
            };
        };
        /** @description A direct, expiring link to a file. */
        DownloadLink: {
            /** @description Where to `GET` the bytes, without a bearer token; a credential for the file until `expiresAt`, to be kept as secret as a token. */
            url: string;
            /**
             * Format: date-time
             * @description When the link stops working.
             */
            expiresAt: string;
            /** @description The file's size in bytes. */
            size: number;
            /**
             * @description The strong entity tag of the version the link was made for (send it as `If-Match`).
             * @example "0x8DC2A4F5B1C2D3E"
             */
            etag: string;
        };
        /** @description What the portal needs to know of the gateway's configuration. */
        PortalConfig: {
            /** @description The S3-compatible API when it is on (the portal then shows `aws s3 cp`); `null` when off. */
            s3Api: {
                /** @description The `--endpoint-url` of `aws s3` commands. */
                endpointUrl: string;
                /** @description The bucket name files are addressed under (`s3://<bucket>/<path>`). */
                bucket: string;
            } | null;
        };
        /** @description A subscribed file's storage properties. */
        FileInfo: {
            /** @example PETR4 */
            symbol: string;
            /**
             * @description Size in bytes.
             * @example 1234
             */
            size: number;
            /**
             * Format: date-time
             * @description When the file was last written to storage.
             */
            uploaded: string;
            /**
             * @description The strong entity tag, including its double quotes (as in the `ETag` header).
             * @example "0x8DC2A4F5B1C2D3E"
             */
            etag: string;
            /**
             * @description SHA-256 of this version's content, 64 lowercase hex digits; absent until the gateway
             *     has computed it (it reads every new version once, older ones in the background).
             * @example 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
             */
            sha256?: string;
            /**
             * Format: date-time
             * @description The start of the file's release window, where the index has one (as `/catalog`'s `AvailableFrom`).
             * @example 2026-11-24T21:00:00.000Z
             */
            availableFrom?: string;
            /**
             * Format: date-time
             * @description The end of the file's release window, where the index has one (as `/catalog`'s `AvailableUntil`).
             * @example 2026-12-31T00:00:00.000Z
             */
            availableUntil?: string;
            httpMetadata: components["schemas"]["HttpMetadata"];
            /** @description User metadata stored with the blob. */
            customMetadata: {
                [key: string]: string;
            };
        };
        /** @description The HTTP properties storage keeps with the blob; absent ones are omitted. */
        HttpMetadata: {
            /** @example text/csv */
            contentType?: string;
            contentDisposition?: string;
            contentEncoding?: string;
            contentLanguage?: string;
            cacheControl?: string;
            /**
             * Format: byte
             * @description Base64 MD5 digest of the content.
             * @example 1B2M2Y8AsgTpgAmY7PhCfg==
             */
            contentMd5?: string;
        };
        /**
         * Format: binary
         * @description The file's bytes.
         */
        FileContent: string;
        Ready: {
            /** @enum {string} */
            status: "ready";
        };
        NotReady: {
            /** @enum {string} */
            status: "not_ready";
            /** @description Which dependencies keep the instance from being ready, by name only: `storage`, `registry` (the client registry), `redis`, or `shutting down`. What is wrong with them is in the gateway's log, not here (this answer needs no token). */
            reasons: string[];
        };
        Health: {
            /** @enum {string} */
            status: "ok";
        };
        /** @description RFC 8414 section 2 authorization server metadata, as far as this gateway has any. */
        AuthorizationServerMetadata: {
            /**
             * @description The gateway's base URL (no path, query or fragment).
             * @example https://files.example.net
             */
            issuer: string;
            /** @example https://files.example.net/oauth/token */
            token_endpoint: string;
            grant_types_supported: "client_credentials"[];
            token_endpoint_auth_methods_supported: ("client_secret_basic" | "client_secret_post")[];
            /** @description Empty: there is no authorization endpoint (only the client credentials grant). */
            response_types_supported: string[];
            /**
             * @description The interactive API reference (`/docs`).
             * @example https://files.example.net/docs
             */
            service_documentation?: string;
        };
        /** @description RFC 9728 section 2 protected resource metadata. */
        ProtectedResourceMetadata: {
            /**
             * @description The resource identifier, the gateway's base URL.
             * @example https://files.example.net
             */
            resource: string;
            /** @description Issuers whose tokens this API accepts (this gateway itself). */
            authorization_servers: string[];
            bearer_methods_supported: "header"[];
            /** @example Data File Gateway */
            resource_name?: string;
            /** @example https://files.example.net/docs */
            resource_documentation?: string;
        };
    };
    responses: {
        /** @description The access token (RFC 6749 section 5.1). */
        TokenIssued: {
            headers: {
                "Cache-Control": components["headers"]["CacheControlNoStore"];
                Pragma: components["headers"]["Pragma"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["TokenResponse"];
            };
        };
        /**
         * @description The token request is invalid (RFC 6749 section 5.2): `invalid_request` (missing
         *     `grant_type` or client id, malformed or wrongly typed body, two client authentication
         *     methods) or `unsupported_grant_type` (any grant but `client_credentials`). The client's
         *     credentials are checked first (RFC 6749 section 3.2.1), so a request with a wrong secret
         *     gets `401 invalid_client` whatever its grant type.
         */
        TokenBadRequest: {
            headers: {
                "Cache-Control": components["headers"]["CacheControlNoStore"];
                Pragma: components["headers"]["Pragma"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "unsupported_grant_type",
                 *       "error_description": "Unsupported grant type: `grant_type` is invalid",
                 *       "code": "unsupported_grant_type"
                 *     }
                 */
                "application/json": components["schemas"]["OAuthError"];
            };
        };
        /**
         * @description Client authentication failed (`invalid_client`: unknown client, wrong or missing secret,
         *     disabled client), whether the client authenticated with HTTP Basic or in the body. Always
         *     carries a `WWW-Authenticate: Basic` challenge (RFC 9110 section 15.5.2).
         */
        TokenUnauthorized: {
            headers: {
                "Cache-Control": components["headers"]["CacheControlNoStore"];
                Pragma: components["headers"]["Pragma"];
                "WWW-Authenticate": components["headers"]["WWWAuthenticateClient"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "invalid_client",
                 *       "error_description": "Client authentication failed",
                 *       "code": "invalid_client"
                 *     }
                 */
                "application/json": components["schemas"]["OAuthError"];
            };
        };
        /** @description Too many token requests from this client or address; retry after `Retry-After` seconds. */
        TokenTooManyRequests: {
            headers: {
                "Retry-After": components["headers"]["RetryAfter"];
                "Cache-Control": components["headers"]["CacheControlNoStore"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Too many requests",
                 *       "message": "Too many token requests, retry in 30 seconds",
                 *       "code": "rate_limited"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description `If-None-Match` holds the answer's current `ETag`: the copy the caller has is current. No body. */
        JsonNotModified: {
            headers: {
                ETag: components["headers"]["WeakETag"];
                "Cache-Control": components["headers"]["CacheControl"];
                [name: string]: unknown;
            };
            content?: never;
        };
        /**
         * @description Invalid input: a parameter fails validation (e.g. `limit` out of range, unknown query
         *     parameter), or a symbol or path is unsafe (`..`, encoded `/` or `.`, backslash, `//`,
         *     NUL byte, malformed percent-encoding, too long). `details` lists validation failures.
         */
        BadRequest: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Bad request",
                 *       "message": "Invalid request parameters",
                 *       "code": "invalid_request",
                 *       "details": [
                 *         "query/limit must be <= 10000"
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /**
         * @description The body does not match this contract (`invalid_request`), or the URL is one the gateway
         *     will not call (`webhook_url_refused`: not `https`, not a public address, credentials or a
         *     fragment in it, longer than 2048 characters, or a host that does not resolve).
         */
        WebhookBadRequest: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Bad request",
                 *       "message": "The webhook URL is refused: the URL must use https",
                 *       "code": "webhook_url_refused"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The caller already has 10 webhook endpoints; remove one first. */
        WebhookLimitReached: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Conflict",
                 *       "message": "A client may have at most 10 webhook endpoints: remove one first",
                 *       "code": "webhook_limit_reached"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The caller has no webhook endpoint with this id. */
        WebhookNotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Not found",
                 *       "message": "No webhook endpoint \"wh_aaaaaaaaaaaaaaaaaaaaaaaaaa\" among the endpoints of client \"acme\"",
                 *       "code": "webhook_not_found"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Missing, malformed, forged, expired or revoked bearer token. */
        Unauthorized: {
            headers: {
                "WWW-Authenticate": components["headers"]["WWWAuthenticate"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Unauthorized",
                 *       "message": "The access token expired",
                 *       "code": "invalid_token"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The symbol or path is not in the caller's subscription (its index). */
        Forbidden: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Access denied",
                 *       "message": "PETR4 is not in your subscription",
                 *       "code": "not_entitled"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The caller is subscribed to the file, but it does not exist in storage. */
        FileNotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Not found",
                 *       "message": "PETR4.csv is not available",
                 *       "code": "file_not_found"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The caller has no index, hence no catalog. */
        CatalogNotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Not found",
                 *       "message": "catalog not found",
                 *       "code": "catalog_not_found"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description `If-Match` or `If-Unmodified-Since` evaluated to false. */
        PreconditionFailed: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Precondition failed",
                 *       "message": "The file does not match If-Match",
                 *       "code": "precondition_failed"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The `cursor` was made from a version of the caller's index that has since changed. */
        CursorExpired: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Gone",
                 *       "message": "The index changed since this listing started: list again without a cursor",
                 *       "code": "cursor_expired"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /**
         * @description An event of the caller after the `cursor` was already dropped by the feed's retention
         *     (`CHANGES_RETENTION_DAYS`), or the cursor is from before the change log was reset. List again (`/list` or
         *     `/catalog`) and follow that answer's `changesCursor`.
         */
        ChangesCursorExpired: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Gone",
                 *       "message": "The feed no longer holds the changes after this cursor (CHANGES_RETENTION_DAYS): list again, then follow its changesCursor",
                 *       "code": "cursor_expired"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The `Range` does not overlap the file; `Content-Range` gives the file's size. */
        RangeNotSatisfiable: {
            headers: {
                "Content-Range": components["headers"]["ContentRangeUnsatisfied"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Range not satisfiable",
                 *       "message": "The range starts beyond the end of the file (1234 bytes)",
                 *       "code": "range_not_satisfiable"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /**
         * @description The caller exceeded its request budget (`rate_limited`: `REQUEST_RATE_LIMIT` authenticated
         *     requests per `REQUEST_RATE_WINDOW_SECONDS`, whichever API). Retry after `Retry-After` seconds.
         */
        RequestLimitExceeded: {
            headers: {
                "Retry-After": components["headers"]["RetryAfter"];
                "Cache-Control": components["headers"]["CacheControlNoStore"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Too many requests",
                 *       "message": "Request limit of 600 per 60 seconds reached; retry in 12 seconds",
                 *       "code": "rate_limited"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /**
         * @description The caller exceeded its download rate limit or its request budget (`rate_limited`), or the download or link does
         *     not fit what is left of its monthly byte quota (`quota_exceeded`: the message says how many
         *     bytes remain; `Retry-After` is the wait until the calendar month, UTC, resets). Retry after
         *     `Retry-After` seconds.
         */
        TooManyRequests: {
            headers: {
                "Retry-After": components["headers"]["RetryAfter"];
                "Cache-Control": components["headers"]["CacheControlNoStore"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Too many requests",
                 *       "message": "Rate limit exceeded, retry in 30 seconds",
                 *       "code": "rate_limited"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /**
         * @description A conditional or `Range` header (`If-Match`, `If-None-Match`, `If-Modified-Since`,
         *     `If-Unmodified-Since`, `Range`, `If-Range`) is longer than 8192 characters (RFC 6585
         *     section 5). A whole header section over 16 KiB gets the same answer before routing.
         */
        HeaderTooLarge: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Request header fields too large",
                 *       "message": "The if-none-match header is longer than 8192 characters",
                 *       "code": "headers_too_large"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The caller's index is malformed, or an unexpected error occurred. */
        InternalError: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Internal error",
                 *       "message": "Your index could not be read; please contact support",
                 *       "code": "index_malformed"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Storage answered with an error the gateway could not recover from. */
        BadGateway: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Bad gateway",
                 *       "message": "Storage request failed",
                 *       "code": "storage_failed"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Storage is unreachable or throttling, the shared rate-limit store is down, or (`POST /oauth/token`) the secret verification queue is full; retry later (after `Retry-After` seconds when given). */
        ServiceUnavailable: {
            headers: {
                "Retry-After": components["headers"]["RetryAfterOptional"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Service unavailable",
                 *       "message": "Storage is temporarily unavailable",
                 *       "code": "storage_unavailable"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description No such route (`route_not_found`). */
        RouteNotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Not found",
                 *       "message": "No route GET /docs/nope.js",
                 *       "code": "route_not_found"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /**
         * @description The whole file. The body is the raw bytes; the actual `Content-Type` is the blob's own
         *     media type (e.g. `text/csv`), not necessarily `application/octet-stream`.
         */
        DownloadOk: {
            headers: {
                "Content-Type": components["headers"]["ContentType"];
                "Content-Disposition": components["headers"]["ContentDisposition"];
                ETag: components["headers"]["ETag"];
                "Last-Modified": components["headers"]["LastModified"];
                "Content-Length": components["headers"]["ContentLength"];
                "Accept-Ranges": components["headers"]["AcceptRanges"];
                "Cache-Control": components["headers"]["CacheControlDownload"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                [name: string]: unknown;
            };
            content: {
                "application/octet-stream": components["schemas"]["FileContent"];
            };
        };
        /**
         * @description The requested byte range of the file (`Content-Range`); `Content-Length` is the length of
         *     the range. As for `200`, `Content-Type` is the blob's own media type.
         */
        DownloadPartialContent: {
            headers: {
                "Content-Type": components["headers"]["ContentType"];
                "Content-Disposition": components["headers"]["ContentDisposition"];
                ETag: components["headers"]["ETag"];
                "Last-Modified": components["headers"]["LastModified"];
                "Content-Length": components["headers"]["ContentLength"];
                "Accept-Ranges": components["headers"]["AcceptRanges"];
                "Cache-Control": components["headers"]["CacheControlDownload"];
                "Content-Range": components["headers"]["ContentRange"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                [name: string]: unknown;
            };
            content: {
                "application/octet-stream": components["schemas"]["FileContent"];
            };
        };
        /** @description `If-None-Match` or `If-Modified-Since` evaluated to false: the cached copy is current. No body. */
        NotModified: {
            headers: {
                ETag: components["headers"]["ETag"];
                "Last-Modified": components["headers"]["LastModified"];
                "Cache-Control": components["headers"]["CacheControlDownload"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                [name: string]: unknown;
            };
            content?: never;
        };
        /**
         * @description `redirect=true` with direct links on: the file is at `Location`, a direct link as
         *     `GET /link/{symbol}` makes (RFC 9110 section 15.4.8: the client repeats its `GET`, with
         *     its own `Range` and conditionals, there). Counted against the download rate limit. A
         *     client that follows it across origins drops its `Authorization` header (curl, fetch,
         *     Python requests do), which the link does not need.
         */
        DownloadRedirect: {
            headers: {
                /** @description The direct link. */
                Location?: string;
                "Cache-Control": components["headers"]["CacheControlNoStore"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                [name: string]: unknown;
            };
            content?: never;
        };
        /** @description The download link is forged, altered, expired, not for this file, or revoked because its client is disabled or no longer registered (`invalid_link`); or the file is no longer in the index of the link's client (`not_entitled`). */
        LinkForbidden: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "Access denied",
                 *       "message": "The download link has expired: ask for a new one",
                 *       "code": "invalid_link"
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The headers a `GET` would send with the whole file. No body. */
        HeadOk: {
            headers: {
                "Content-Type": components["headers"]["ContentType"];
                "Content-Disposition": components["headers"]["ContentDisposition"];
                ETag: components["headers"]["ETag"];
                "Last-Modified": components["headers"]["LastModified"];
                "Content-Length": components["headers"]["ContentLength"];
                "Accept-Ranges": components["headers"]["AcceptRanges"];
                "Cache-Control": components["headers"]["CacheControlDownload"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                [name: string]: unknown;
            };
            content?: never;
        };
        /** @description Invalid input (see `BadRequest`). No body. */
        HeadBadRequest: {
            headers: {
                [name: string]: unknown;
            };
            content?: never;
        };
        /** @description Missing, malformed, forged, expired or revoked bearer token. No body. */
        HeadUnauthorized: {
            headers: {
                "WWW-Authenticate": components["headers"]["WWWAuthenticate"];
                [name: string]: unknown;
            };
            content?: never;
        };
        /** @description The symbol or path is not in the caller's subscription. No body. */
        HeadForbidden: {
            headers: {
                [name: string]: unknown;
            };
            content?: never;
        };
        /** @description The download link is forged, altered, expired, not for this file or revoked, or the file left its client's index. No body. */
        HeadLinkForbidden: {
            headers: {
                [name: string]: unknown;
            };
            content?: never;
        };
        /** @description The file does not exist in storage. No body. */
        HeadNotFound: {
            headers: {
                [name: string]: unknown;
            };
            content?: never;
        };
        /** @description `If-Match` or `If-Unmodified-Since` evaluated to false. No body. */
        HeadPreconditionFailed: {
            headers: {
                [name: string]: unknown;
            };
            content?: never;
        };
        /** @description The caller exceeded its download rate limit. No body. */
        HeadTooManyRequests: {
            headers: {
                "Retry-After": components["headers"]["RetryAfter"];
                "Cache-Control": components["headers"]["CacheControlNoStore"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                [name: string]: unknown;
            };
            content?: never;
        };
        /** @description A conditional or `Range` header is longer than 8192 characters. No body. */
        HeadHeaderTooLarge: {
            headers: {
                [name: string]: unknown;
            };
            content?: never;
        };
        /** @description The caller's index is malformed, or an unexpected error occurred. No body. */
        HeadInternalError: {
            headers: {
                [name: string]: unknown;
            };
            content?: never;
        };
        /** @description Storage answered with an error. No body. */
        HeadBadGateway: {
            headers: {
                [name: string]: unknown;
            };
            content?: never;
        };
        /** @description Storage is unreachable or throttling. No body. */
        HeadServiceUnavailable: {
            headers: {
                "Retry-After": components["headers"]["RetryAfterOptional"];
                [name: string]: unknown;
            };
            content?: never;
        };
    };
    parameters: {
        /**
         * @description A symbol of the caller's catalog (the `Symbol` column of its index), percent-encoded.
         * @example PETR4
         */
        Symbol: string;
        /**
         * @description The catalog `FileName` of the file, relative to the storage root.
         *
         *     * It may contain several `/`-separated segments (e.g. `equities/2024/PETR4.csv`, requested
         *       as `/equities/2024/PETR4.csv`); each
         *       segment is percent-encoded as usual (spaces as `%20`, accented letters as UTF-8
         *       octets, e.g. `%C3%A7`) and the gateway decodes it exactly once. A path that still
         *       contains `%` after that one decoding (double encoding such as `%2520` or `%252e`) is
         *       rejected with `400`, so nothing is ever decoded twice.
         *     * Files whose first path segment is a route name of this API (`oauth`, `catalog`,
         *       `list`, `count`, `info`, `download`, `link`, `health`, `ready`, `metrics`,
         *       `openapi.yaml`, `docs`, `portal`, `.well-known`) cannot be reached here;
         *       use `/download/{symbol}` for them.
         *     * Paths containing `.` or `..` segments (raw or encoded, e.g. `%2E%2E`), encoded
         *       slashes (`%2F`), backslashes (raw or `%5C`), empty segments (`//`), NUL or other
         *       control characters (`%00`, `%0A`), malformed percent-encoding or invalid UTF-8, more
         *       than 1024 characters or a segment over 255 are rejected with `400`. An encoded dot
         *       inside a name (`ok%2Ecsv`) is just a dot.
         * @example PETR4.csv
         */
        FilePath: string;
        /**
         * @description `true`: answer `307` to a direct link to the file instead of sending its bytes, when the
         *     gateway has direct links on (`DOWNLOAD_LINKS=on`); otherwise the bytes are sent as
         *     without it. Conditionals and `Range` are evaluated first, so a `304`, `412` or `416` is
         *     answered as usual.
         */
        Redirect: "true" | "false";
        /** @description The file's name (the last segment of its storage path), percent-encoded; it must match the link's file. */
        LinkFileName: string;
        /** @description The link's signature, as `GET /link/{symbol}` gave it. */
        LinkToken: string;
        /** @description The maximum number of files to return. */
        Limit: number;
        /**
         * @description The `nextCursor` of the previous page, unchanged: continues the listing after it. Opaque
         *     and signed; `400` when altered or made for another client, `410` when the index changed.
         */
        ListCursor: string;
        /**
         * @description Where to continue the feed: a `changesCursor` of `/list` or `/catalog`, or the `nextCursor`
         *     of the previous `/changes` answer, unchanged. Opaque and signed; `400` when altered or made
         *     for another client, `410` when older than the retention. Absent: the oldest event kept.
         */
        ChangesCursor: string;
        /** @description The maximum number of events to return. */
        ChangesLimit: number;
        /**
         * @description Seconds to hold an answer that would have no event, until an event of the caller arrives
         *     (a long poll); `0` answers at once.
         */
        ChangesWait: number;
        /**
         * @description Only files uploaded at or after this moment (RFC 3339 date-time, e.g. `2026-11-01T00:00:00Z`).
         * @example 2026-11-01T00:00:00Z
         */
        ModifiedSince: string;
        /**
         * @description Byte range request (RFC 9110 section 14.2), honoured only on a `200`-able request:
         *     `bytes=0-99` (first 100 bytes), `bytes=100-` (from offset 100 to the end) or
         *     `bytes=-500` (suffix range: the last 500 bytes). The answer is `206` with
         *     `Content-Range`. An end past the file is clamped; a suffix longer than the file means the
         *     whole file (still `206`). Several ranges are merged into ONE range covering them all
         *     (`bytes=0-9,50-59` gives `206` with `Content-Range: bytes 0-59/<size>`; never
         *     `multipart/byteranges`, never only the first range); unsatisfiable ones among them are
         *     dropped. A range set with nothing satisfiable (start at or beyond the end, `bytes=-0`,
         *     any range of an empty file) gets `416` with `Content-Range: bytes *\/<size>`. A
         *     syntactically invalid range (`bytes=5-3`), another unit, or more than 100 ranges is
         *     ignored (`200`). `HEAD` ignores `Range` (RFC 9110 section 14.2) and answers `200`.
         * @example bytes=0-1023
         */
        Range: string;
        /**
         * @description The weak `ETag` of an earlier answer (or a list of them); `304` when the answer would be the same.
         * @example W/"q3Bz0cLr5xkH0n4mJ8t2aQ9wRz7"
         */
        IfNoneMatchJson: string;
        /**
         * @description Comma-separated entity tags, or `*` (RFC 9110 section 13.1.1). Compared with strong
         *     comparison; when none matches the current `ETag`, the answer is `412`.
         * @example "0x8DC2A4F5B1C2D3E"
         */
        IfMatch: string;
        /**
         * @description Comma-separated entity tags (weak or strong), or `*` (RFC 9110 section 13.1.2).
         *     Compared with weak comparison; when one matches the current `ETag`, the answer is `304`.
         * @example "0x8DC2A4F5B1C2D3E"
         */
        IfNoneMatch: string;
        /**
         * @description An HTTP-date (RFC 9110 section 13.1.3). Ignored when `If-None-Match` is present or the
         *     date is invalid; when the file has not been modified since, the answer is `304`.
         * @example Wed, 21 Oct 2015 07:28:00 GMT
         */
        IfModifiedSince: string;
        /**
         * @description An HTTP-date (RFC 9110 section 13.1.4). Ignored when `If-Match` is present or the date
         *     is invalid; when the file has been modified since, the answer is `412`.
         * @example Wed, 21 Oct 2015 07:28:00 GMT
         */
        IfUnmodifiedSince: string;
        /**
         * @description A strong entity tag or an HTTP-date (RFC 9110 section 13.1.5), meaningful only with
         *     `Range`. Preconditions are evaluated in the order of RFC 9110 section 13.2.2:
         *     `If-Match` (else `If-Unmodified-Since`) -> `412`; then `If-None-Match` (else
         *     `If-Modified-Since`) -> `304`; then `If-Range`: when it matches the current
         *     representation (strong `ETag` comparison, or exact `Last-Modified` date) the `Range` is
         *     honoured (`206`), otherwise the `Range` is ignored and the whole file is sent (`200`).
         * @example "0x8DC2A4F5B1C2D3E"
         */
        IfRange: string;
    };
    requestBodies: never;
    headers: {
        /**
         * @description The strong entity tag of the file, including its double quotes.
         * @example "0x8DC2A4F5B1C2D3E"
         */
        ETag: string;
        /**
         * @description A weak entity tag of the answer's content; it changes whenever the answer would.
         * @example W/"q3Bz0cLr5xkH0n4mJ8t2aQ9wRz7"
         */
        WeakETag: string;
        /**
         * @description When the file was last modified in storage, as an HTTP-date.
         * @example Wed, 21 Oct 2015 07:28:00 GMT
         */
        LastModified: string;
        /**
         * @description Caching directives. Responses are private to the caller and must be revalidated.
         * @example private, no-cache
         */
        CacheControl: string;
        /**
         * @description Caching directives of a download: private to the caller (shared caches must not store
         *     it; the caller's own cache may, and can revalidate with `If-None-Match`).
         * @example private
         */
        CacheControlDownload: string;
        /**
         * @description The response must not be stored by any cache.
         * @example no-store
         */
        CacheControlNoStore: string;
        /**
         * @description The same for every caller; any cache may keep it for a while.
         * @example public, max-age=3600
         */
        CacheControlPublic: string;
        /**
         * @description `public, max-age=300` when the base URL is configured (`PUBLIC_BASE_URL`); `no-store` when
         *     it is derived from the request, so no shared cache keeps an answer built from one
         *     request's `Host`.
         * @example public, max-age=300
         */
        CacheControlMetadata: string;
        /**
         * @description The page may load scripts, styles and images from this origin only, and call this origin only.
         * @example default-src 'none'; script-src 'self'; connect-src 'self'
         */
        ContentSecurityPolicyDocs: string;
        /**
         * @description The portal may load scripts, styles and images from this origin only, call this origin
         *     only, run no inline script or style, and may not be framed (`frame-ancestors 'none'`).
         * @example default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'
         */
        ContentSecurityPolicyPortal: string;
        /**
         * @description HTTP/1.0 equivalent of `Cache-Control: no-cache`.
         * @example no-cache
         */
        Pragma: string;
        /**
         * @description The byte range sent and the full size of the file (`bytes first-last/size`).
         * @example bytes 0-99/1234
         */
        ContentRange: string;
        /**
         * @description The full size of the file, for a range that could not be satisfied (`bytes *\/size`).
         * @example bytes *\/1234
         */
        ContentRangeUnsatisfied: string;
        /**
         * @description Seconds to wait before retrying.
         * @example 30
         */
        RetryAfter: number;
        /**
         * @description Seconds to wait before retrying, when known.
         * @example 30
         */
        RetryAfterOptional: number;
        /**
         * @description RFC 6750 section 3 challenge. Without credentials it is `Bearer realm="data-file-gateway"`;
         *     with an unusable token it adds `error="invalid_token"` and an `error_description`.
         * @example Bearer realm="data-file-gateway", error="invalid_token", error_description="The access token expired"
         */
        WWWAuthenticate: string;
        /**
         * @description RFC 6749 section 5.2 challenge for a client that failed HTTP Basic authentication.
         * @example Basic realm="data-file-gateway"
         */
        WWWAuthenticateClient: string;
        /**
         * @description The number of bytes of the body (for `HEAD`, of the body a `GET` would send).
         * @example 1234
         */
        ContentLength: number;
        /** @description Byte ranges are supported. */
        AcceptRanges: "bytes";
        /**
         * @description Suggests saving the body under the file's own name (RFC 6266, with `filename*` for non-ASCII names).
         * @example attachment; filename="PETR4.csv"
         */
        ContentDisposition: string;
        /**
         * @description The file's own media type as stored with the blob (`application/octet-stream` when storage has none).
         * @example text/csv
         */
        ContentType: string;
        /**
         * @description IETF `draft-ietf-httpapi-ratelimit-headers-08` quota state, a List with one item per policy:
         *     the rate limiter's (policy name, remaining requests `r`, seconds until the window resets
         *     `t`) and, for a client with a monthly byte quota, `"monthly-bytes";r=<bytes left>;t=<seconds
         *     until the month resets>` on every download answer.
         * @example "100-in-1min"; r=99; t=60
         */
        RateLimit: string;
        /**
         * @description IETF `draft-ietf-httpapi-ratelimit-headers-08` policies, a List: the rate limiter's quota
         *     (`q`) per window of `w` seconds and partition key (`pk`) and, for a client with a monthly
         *     byte quota, `"monthly-bytes";q=<bytes>;qu="content-bytes";w=<seconds in the month>`.
         * @example "100-in-1min"; q=100; w=60; pk=:ZmQxMjM0NTY3ODkw:
         */
        RateLimitPolicy: string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    issueToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "grant_type": "client_credentials",
                 *       "client_id": "acme",
                 *       "client_secret": "s3cr3t"
                 *     }
                 */
                "application/x-www-form-urlencoded": components["schemas"]["TokenRequest"];
                /**
                 * @example {
                 *       "grant_type": "client_credentials",
                 *       "client_id": "acme",
                 *       "client_secret": "s3cr3t"
                 *     }
                 */
                "application/json": components["schemas"]["TokenRequest"];
            };
        };
        responses: {
            200: components["responses"]["TokenIssued"];
            400: components["responses"]["TokenBadRequest"];
            401: components["responses"]["TokenUnauthorized"];
            429: components["responses"]["TokenTooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    issueS3Credentials: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The temporary credentials. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlNoStore"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["S3Credentials"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description The S3-compatible API is off (`route_not_found`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["RequestLimitExceeded"];
        };
    };
    getCatalog: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The weak `ETag` of an earlier answer (or a list of them); `304` when the answer would be the same.
                 * @example W/"q3Bz0cLr5xkH0n4mJ8t2aQ9wRz7"
                 */
                "If-None-Match"?: components["parameters"]["IfNoneMatchJson"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller's catalog. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControl"];
                    ETag: components["headers"]["WeakETag"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Catalog"];
                };
            };
            304: components["responses"]["JsonNotModified"];
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["CatalogNotFound"];
            429: components["responses"]["RequestLimitExceeded"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listFiles: {
        parameters: {
            query?: {
                /** @description The maximum number of files to return. */
                limit?: components["parameters"]["Limit"];
                /**
                 * @description Only files uploaded at or after this moment (RFC 3339 date-time, e.g. `2026-11-01T00:00:00Z`).
                 * @example 2026-11-01T00:00:00Z
                 */
                modifiedSince?: components["parameters"]["ModifiedSince"];
                /**
                 * @description The `nextCursor` of the previous page, unchanged: continues the listing after it. Opaque
                 *     and signed; `400` when altered or made for another client, `410` when the index changed.
                 */
                cursor?: components["parameters"]["ListCursor"];
            };
            header?: {
                /**
                 * @description The weak `ETag` of an earlier answer (or a list of them); `304` when the answer would be the same.
                 * @example W/"q3Bz0cLr5xkH0n4mJ8t2aQ9wRz7"
                 */
                "If-None-Match"?: components["parameters"]["IfNoneMatchJson"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller's available files. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControl"];
                    ETag: components["headers"]["WeakETag"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileList"];
                };
            };
            304: components["responses"]["JsonNotModified"];
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["CatalogNotFound"];
            410: components["responses"]["CursorExpired"];
            429: components["responses"]["RequestLimitExceeded"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    countFiles: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The number of the caller's files available in storage. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControl"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileCount"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["CatalogNotFound"];
            429: components["responses"]["RequestLimitExceeded"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getChanges: {
        parameters: {
            query?: {
                /**
                 * @description Where to continue the feed: a `changesCursor` of `/list` or `/catalog`, or the `nextCursor`
                 *     of the previous `/changes` answer, unchanged. Opaque and signed; `400` when altered or made
                 *     for another client, `410` when older than the retention. Absent: the oldest event kept.
                 */
                cursor?: components["parameters"]["ChangesCursor"];
                /** @description The maximum number of events to return. */
                limit?: components["parameters"]["ChangesLimit"];
                /**
                 * @description Seconds to hold an answer that would have no event, until an event of the caller arrives
                 *     (a long poll); `0` answers at once.
                 */
                wait?: components["parameters"]["ChangesWait"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller's events after the cursor, and where to continue. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlNoStore"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChangeFeed"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            410: components["responses"]["ChangesCursorExpired"];
            429: components["responses"]["RequestLimitExceeded"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAccount: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller's account. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlNoStore"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Account"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["RequestLimitExceeded"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWebhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller's endpoints. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlNoStore"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["RequestLimitExceeded"];
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookRegistration"];
            };
        };
        responses: {
            /** @description The endpoint, registered, and its signing secret (shown this once). */
            201: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlNoStore"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookCreated"];
                };
            };
            400: components["responses"]["WebhookBadRequest"];
            401: components["responses"]["Unauthorized"];
            409: components["responses"]["WebhookLimitReached"];
            429: components["responses"]["RequestLimitExceeded"];
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The endpoint's id, as `POST /webhooks` or `GET /webhooks` gave it. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["WebhookNotFound"];
            429: components["responses"]["RequestLimitExceeded"];
        };
    };
    getFileInfo: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description A symbol of the caller's catalog (the `Symbol` column of its index), percent-encoded.
                 * @example PETR4
                 */
                symbol: components["parameters"]["Symbol"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The file's properties as storage reports them. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Last-Modified": components["headers"]["LastModified"];
                    "Cache-Control": components["headers"]["CacheControl"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileInfo"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["FileNotFound"];
            429: components["responses"]["RequestLimitExceeded"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    downloadBySymbol: {
        parameters: {
            query?: {
                /**
                 * @description `true`: answer `307` to a direct link to the file instead of sending its bytes, when the
                 *     gateway has direct links on (`DOWNLOAD_LINKS=on`); otherwise the bytes are sent as
                 *     without it. Conditionals and `Range` are evaluated first, so a `304`, `412` or `416` is
                 *     answered as usual.
                 */
                redirect?: components["parameters"]["Redirect"];
            };
            header?: {
                /**
                 * @description Byte range request (RFC 9110 section 14.2), honoured only on a `200`-able request:
                 *     `bytes=0-99` (first 100 bytes), `bytes=100-` (from offset 100 to the end) or
                 *     `bytes=-500` (suffix range: the last 500 bytes). The answer is `206` with
                 *     `Content-Range`. An end past the file is clamped; a suffix longer than the file means the
                 *     whole file (still `206`). Several ranges are merged into ONE range covering them all
                 *     (`bytes=0-9,50-59` gives `206` with `Content-Range: bytes 0-59/<size>`; never
                 *     `multipart/byteranges`, never only the first range); unsatisfiable ones among them are
                 *     dropped. A range set with nothing satisfiable (start at or beyond the end, `bytes=-0`,
                 *     any range of an empty file) gets `416` with `Content-Range: bytes *\/<size>`. A
                 *     syntactically invalid range (`bytes=5-3`), another unit, or more than 100 ranges is
                 *     ignored (`200`). `HEAD` ignores `Range` (RFC 9110 section 14.2) and answers `200`.
                 * @example bytes=0-1023
                 */
                Range?: components["parameters"]["Range"];
                /**
                 * @description Comma-separated entity tags, or `*` (RFC 9110 section 13.1.1). Compared with strong
                 *     comparison; when none matches the current `ETag`, the answer is `412`.
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-Match"?: components["parameters"]["IfMatch"];
                /**
                 * @description Comma-separated entity tags (weak or strong), or `*` (RFC 9110 section 13.1.2).
                 *     Compared with weak comparison; when one matches the current `ETag`, the answer is `304`.
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-None-Match"?: components["parameters"]["IfNoneMatch"];
                /**
                 * @description An HTTP-date (RFC 9110 section 13.1.3). Ignored when `If-None-Match` is present or the
                 *     date is invalid; when the file has not been modified since, the answer is `304`.
                 * @example Wed, 21 Oct 2015 07:28:00 GMT
                 */
                "If-Modified-Since"?: components["parameters"]["IfModifiedSince"];
                /**
                 * @description An HTTP-date (RFC 9110 section 13.1.4). Ignored when `If-Match` is present or the date
                 *     is invalid; when the file has been modified since, the answer is `412`.
                 * @example Wed, 21 Oct 2015 07:28:00 GMT
                 */
                "If-Unmodified-Since"?: components["parameters"]["IfUnmodifiedSince"];
                /**
                 * @description A strong entity tag or an HTTP-date (RFC 9110 section 13.1.5), meaningful only with
                 *     `Range`. Preconditions are evaluated in the order of RFC 9110 section 13.2.2:
                 *     `If-Match` (else `If-Unmodified-Since`) -> `412`; then `If-None-Match` (else
                 *     `If-Modified-Since`) -> `304`; then `If-Range`: when it matches the current
                 *     representation (strong `ETag` comparison, or exact `Last-Modified` date) the `Range` is
                 *     honoured (`206`), otherwise the `Range` is ignored and the whole file is sent (`200`).
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-Range"?: components["parameters"]["IfRange"];
            };
            path: {
                /**
                 * @description A symbol of the caller's catalog (the `Symbol` column of its index), percent-encoded.
                 * @example PETR4
                 */
                symbol: components["parameters"]["Symbol"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["DownloadOk"];
            206: components["responses"]["DownloadPartialContent"];
            304: components["responses"]["NotModified"];
            307: components["responses"]["DownloadRedirect"];
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["FileNotFound"];
            412: components["responses"]["PreconditionFailed"];
            416: components["responses"]["RangeNotSatisfiable"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["HeaderTooLarge"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    headDownloadBySymbol: {
        parameters: {
            query?: {
                /**
                 * @description `true`: answer `307` to a direct link to the file instead of sending its bytes, when the
                 *     gateway has direct links on (`DOWNLOAD_LINKS=on`); otherwise the bytes are sent as
                 *     without it. Conditionals and `Range` are evaluated first, so a `304`, `412` or `416` is
                 *     answered as usual.
                 */
                redirect?: components["parameters"]["Redirect"];
            };
            header?: {
                /**
                 * @description Byte range request (RFC 9110 section 14.2), honoured only on a `200`-able request:
                 *     `bytes=0-99` (first 100 bytes), `bytes=100-` (from offset 100 to the end) or
                 *     `bytes=-500` (suffix range: the last 500 bytes). The answer is `206` with
                 *     `Content-Range`. An end past the file is clamped; a suffix longer than the file means the
                 *     whole file (still `206`). Several ranges are merged into ONE range covering them all
                 *     (`bytes=0-9,50-59` gives `206` with `Content-Range: bytes 0-59/<size>`; never
                 *     `multipart/byteranges`, never only the first range); unsatisfiable ones among them are
                 *     dropped. A range set with nothing satisfiable (start at or beyond the end, `bytes=-0`,
                 *     any range of an empty file) gets `416` with `Content-Range: bytes *\/<size>`. A
                 *     syntactically invalid range (`bytes=5-3`), another unit, or more than 100 ranges is
                 *     ignored (`200`). `HEAD` ignores `Range` (RFC 9110 section 14.2) and answers `200`.
                 * @example bytes=0-1023
                 */
                Range?: components["parameters"]["Range"];
                /**
                 * @description Comma-separated entity tags, or `*` (RFC 9110 section 13.1.1). Compared with strong
                 *     comparison; when none matches the current `ETag`, the answer is `412`.
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-Match"?: components["parameters"]["IfMatch"];
                /**
                 * @description Comma-separated entity tags (weak or strong), or `*` (RFC 9110 section 13.1.2).
                 *     Compared with weak comparison; when one matches the current `ETag`, the answer is `304`.
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-None-Match"?: components["parameters"]["IfNoneMatch"];
                /**
                 * @description An HTTP-date (RFC 9110 section 13.1.3). Ignored when `If-None-Match` is present or the
                 *     date is invalid; when the file has not been modified since, the answer is `304`.
                 * @example Wed, 21 Oct 2015 07:28:00 GMT
                 */
                "If-Modified-Since"?: components["parameters"]["IfModifiedSince"];
                /**
                 * @description An HTTP-date (RFC 9110 section 13.1.4). Ignored when `If-Match` is present or the date
                 *     is invalid; when the file has been modified since, the answer is `412`.
                 * @example Wed, 21 Oct 2015 07:28:00 GMT
                 */
                "If-Unmodified-Since"?: components["parameters"]["IfUnmodifiedSince"];
                /**
                 * @description A strong entity tag or an HTTP-date (RFC 9110 section 13.1.5), meaningful only with
                 *     `Range`. Preconditions are evaluated in the order of RFC 9110 section 13.2.2:
                 *     `If-Match` (else `If-Unmodified-Since`) -> `412`; then `If-None-Match` (else
                 *     `If-Modified-Since`) -> `304`; then `If-Range`: when it matches the current
                 *     representation (strong `ETag` comparison, or exact `Last-Modified` date) the `Range` is
                 *     honoured (`206`), otherwise the `Range` is ignored and the whole file is sent (`200`).
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-Range"?: components["parameters"]["IfRange"];
            };
            path: {
                /**
                 * @description A symbol of the caller's catalog (the `Symbol` column of its index), percent-encoded.
                 * @example PETR4
                 */
                symbol: components["parameters"]["Symbol"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["HeadOk"];
            304: components["responses"]["NotModified"];
            400: components["responses"]["HeadBadRequest"];
            401: components["responses"]["HeadUnauthorized"];
            403: components["responses"]["HeadForbidden"];
            404: components["responses"]["HeadNotFound"];
            412: components["responses"]["HeadPreconditionFailed"];
            429: components["responses"]["HeadTooManyRequests"];
            431: components["responses"]["HeadHeaderTooLarge"];
            500: components["responses"]["HeadInternalError"];
            502: components["responses"]["HeadBadGateway"];
            503: components["responses"]["HeadServiceUnavailable"];
        };
    };
    downloadBySignedLink: {
        parameters: {
            query: {
                /** @description The link's signature, as `GET /link/{symbol}` gave it. */
                token: components["parameters"]["LinkToken"];
            };
            header?: {
                /**
                 * @description Byte range request (RFC 9110 section 14.2), honoured only on a `200`-able request:
                 *     `bytes=0-99` (first 100 bytes), `bytes=100-` (from offset 100 to the end) or
                 *     `bytes=-500` (suffix range: the last 500 bytes). The answer is `206` with
                 *     `Content-Range`. An end past the file is clamped; a suffix longer than the file means the
                 *     whole file (still `206`). Several ranges are merged into ONE range covering them all
                 *     (`bytes=0-9,50-59` gives `206` with `Content-Range: bytes 0-59/<size>`; never
                 *     `multipart/byteranges`, never only the first range); unsatisfiable ones among them are
                 *     dropped. A range set with nothing satisfiable (start at or beyond the end, `bytes=-0`,
                 *     any range of an empty file) gets `416` with `Content-Range: bytes *\/<size>`. A
                 *     syntactically invalid range (`bytes=5-3`), another unit, or more than 100 ranges is
                 *     ignored (`200`). `HEAD` ignores `Range` (RFC 9110 section 14.2) and answers `200`.
                 * @example bytes=0-1023
                 */
                Range?: components["parameters"]["Range"];
                /**
                 * @description Comma-separated entity tags, or `*` (RFC 9110 section 13.1.1). Compared with strong
                 *     comparison; when none matches the current `ETag`, the answer is `412`.
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-Match"?: components["parameters"]["IfMatch"];
                /**
                 * @description Comma-separated entity tags (weak or strong), or `*` (RFC 9110 section 13.1.2).
                 *     Compared with weak comparison; when one matches the current `ETag`, the answer is `304`.
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-None-Match"?: components["parameters"]["IfNoneMatch"];
                /**
                 * @description An HTTP-date (RFC 9110 section 13.1.3). Ignored when `If-None-Match` is present or the
                 *     date is invalid; when the file has not been modified since, the answer is `304`.
                 * @example Wed, 21 Oct 2015 07:28:00 GMT
                 */
                "If-Modified-Since"?: components["parameters"]["IfModifiedSince"];
                /**
                 * @description An HTTP-date (RFC 9110 section 13.1.4). Ignored when `If-Match` is present or the date
                 *     is invalid; when the file has been modified since, the answer is `412`.
                 * @example Wed, 21 Oct 2015 07:28:00 GMT
                 */
                "If-Unmodified-Since"?: components["parameters"]["IfUnmodifiedSince"];
                /**
                 * @description A strong entity tag or an HTTP-date (RFC 9110 section 13.1.5), meaningful only with
                 *     `Range`. Preconditions are evaluated in the order of RFC 9110 section 13.2.2:
                 *     `If-Match` (else `If-Unmodified-Since`) -> `412`; then `If-None-Match` (else
                 *     `If-Modified-Since`) -> `304`; then `If-Range`: when it matches the current
                 *     representation (strong `ETag` comparison, or exact `Last-Modified` date) the `Range` is
                 *     honoured (`206`), otherwise the `Range` is ignored and the whole file is sent (`200`).
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-Range"?: components["parameters"]["IfRange"];
            };
            path: {
                /** @description The file's name (the last segment of its storage path), percent-encoded; it must match the link's file. */
                name: components["parameters"]["LinkFileName"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["DownloadOk"];
            206: components["responses"]["DownloadPartialContent"];
            304: components["responses"]["NotModified"];
            400: components["responses"]["BadRequest"];
            403: components["responses"]["LinkForbidden"];
            404: components["responses"]["FileNotFound"];
            412: components["responses"]["PreconditionFailed"];
            416: components["responses"]["RangeNotSatisfiable"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["HeaderTooLarge"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    headDownloadBySignedLink: {
        parameters: {
            query: {
                /** @description The link's signature, as `GET /link/{symbol}` gave it. */
                token: components["parameters"]["LinkToken"];
            };
            header?: {
                /**
                 * @description Byte range request (RFC 9110 section 14.2), honoured only on a `200`-able request:
                 *     `bytes=0-99` (first 100 bytes), `bytes=100-` (from offset 100 to the end) or
                 *     `bytes=-500` (suffix range: the last 500 bytes). The answer is `206` with
                 *     `Content-Range`. An end past the file is clamped; a suffix longer than the file means the
                 *     whole file (still `206`). Several ranges are merged into ONE range covering them all
                 *     (`bytes=0-9,50-59` gives `206` with `Content-Range: bytes 0-59/<size>`; never
                 *     `multipart/byteranges`, never only the first range); unsatisfiable ones among them are
                 *     dropped. A range set with nothing satisfiable (start at or beyond the end, `bytes=-0`,
                 *     any range of an empty file) gets `416` with `Content-Range: bytes *\/<size>`. A
                 *     syntactically invalid range (`bytes=5-3`), another unit, or more than 100 ranges is
                 *     ignored (`200`). `HEAD` ignores `Range` (RFC 9110 section 14.2) and answers `200`.
                 * @example bytes=0-1023
                 */
                Range?: components["parameters"]["Range"];
                /**
                 * @description Comma-separated entity tags, or `*` (RFC 9110 section 13.1.1). Compared with strong
                 *     comparison; when none matches the current `ETag`, the answer is `412`.
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-Match"?: components["parameters"]["IfMatch"];
                /**
                 * @description Comma-separated entity tags (weak or strong), or `*` (RFC 9110 section 13.1.2).
                 *     Compared with weak comparison; when one matches the current `ETag`, the answer is `304`.
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-None-Match"?: components["parameters"]["IfNoneMatch"];
                /**
                 * @description An HTTP-date (RFC 9110 section 13.1.3). Ignored when `If-None-Match` is present or the
                 *     date is invalid; when the file has not been modified since, the answer is `304`.
                 * @example Wed, 21 Oct 2015 07:28:00 GMT
                 */
                "If-Modified-Since"?: components["parameters"]["IfModifiedSince"];
                /**
                 * @description An HTTP-date (RFC 9110 section 13.1.4). Ignored when `If-Match` is present or the date
                 *     is invalid; when the file has been modified since, the answer is `412`.
                 * @example Wed, 21 Oct 2015 07:28:00 GMT
                 */
                "If-Unmodified-Since"?: components["parameters"]["IfUnmodifiedSince"];
                /**
                 * @description A strong entity tag or an HTTP-date (RFC 9110 section 13.1.5), meaningful only with
                 *     `Range`. Preconditions are evaluated in the order of RFC 9110 section 13.2.2:
                 *     `If-Match` (else `If-Unmodified-Since`) -> `412`; then `If-None-Match` (else
                 *     `If-Modified-Since`) -> `304`; then `If-Range`: when it matches the current
                 *     representation (strong `ETag` comparison, or exact `Last-Modified` date) the `Range` is
                 *     honoured (`206`), otherwise the `Range` is ignored and the whole file is sent (`200`).
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-Range"?: components["parameters"]["IfRange"];
            };
            path: {
                /** @description The file's name (the last segment of its storage path), percent-encoded; it must match the link's file. */
                name: components["parameters"]["LinkFileName"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["HeadOk"];
            304: components["responses"]["NotModified"];
            400: components["responses"]["HeadBadRequest"];
            403: components["responses"]["HeadLinkForbidden"];
            404: components["responses"]["HeadNotFound"];
            412: components["responses"]["HeadPreconditionFailed"];
            429: components["responses"]["HeadTooManyRequests"];
            431: components["responses"]["HeadHeaderTooLarge"];
            500: components["responses"]["HeadInternalError"];
            502: components["responses"]["HeadBadGateway"];
            503: components["responses"]["HeadServiceUnavailable"];
        };
    };
    getDownloadLink: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description A symbol of the caller's catalog (the `Symbol` column of its index), percent-encoded.
                 * @example PETR4
                 */
                symbol: components["parameters"]["Symbol"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The link. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlNoStore"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DownloadLink"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The file does not exist in storage (`file_not_found`), or direct links are off (`route_not_found`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The service is up. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
            400: components["responses"]["BadRequest"];
        };
    };
    getReadiness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ready for traffic. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlNoStore"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Ready"];
                };
            };
            400: components["responses"]["BadRequest"];
            /** @description Not ready; `reasons` says what is missing. */
            503: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlNoStore"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NotReady"];
                };
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The metrics. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlNoStore"];
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description Metrics are off (`METRICS_TOKEN` is not set). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getOpenApiDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI 3.0.3 description of this API, as YAML. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/yaml": string;
                };
            };
            400: components["responses"]["BadRequest"];
        };
    };
    getApiReference: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The reference page (HTML). */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControl"];
                    "Content-Security-Policy": components["headers"]["ContentSecurityPolicyDocs"];
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            400: components["responses"]["BadRequest"];
        };
    };
    getApiReferenceAsset: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description A file of the reference page (`swagger-ui-bundle.js`, `swagger-ui.css`, ...).
                 * @example swagger-ui.css
                 */
                asset: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The file. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlPublic"];
                    [name: string]: unknown;
                };
                content: {
                    "text/javascript": string;
                    "text/css": string;
                    "image/png": string;
                };
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["RouteNotFound"];
        };
    };
    getPortal: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The portal's page (HTML). */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControl"];
                    "Content-Security-Policy": components["headers"]["ContentSecurityPolicyPortal"];
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["RouteNotFound"];
        };
    };
    getPortalConfig: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The portal's configuration. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControl"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PortalConfig"];
                };
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["RouteNotFound"];
        };
    };
    getPortalAsset: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description A file the portal's build wrote (its name carries a hash of its content).
                 * @example index-B4x1s9Qe.js
                 */
                asset: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The file; its name changes whenever its content does, so it may be kept for a year. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlPublic"];
                    [name: string]: unknown;
                };
                content: {
                    "text/javascript": string;
                    "text/css": string;
                    "image/svg+xml": string;
                    "image/png": string;
                    "font/woff2": string;
                };
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["RouteNotFound"];
        };
    };
    getPortalDownloadLink: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description A symbol of the caller's catalog (the `Symbol` column of its index), percent-encoded.
                 * @example PETR4
                 */
                symbol: components["parameters"]["Symbol"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The link. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlNoStore"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DownloadLink"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The file does not exist in storage (`file_not_found`), or the portal is off (`route_not_found`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAuthorizationServerMetadata: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The metadata (RFC 8414 section 3.2). */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlMetadata"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuthorizationServerMetadata"];
                };
            };
            400: components["responses"]["BadRequest"];
        };
    };
    getProtectedResourceMetadata: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The metadata (RFC 9728 section 3.2). */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlMetadata"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProtectedResourceMetadata"];
                };
            };
            400: components["responses"]["BadRequest"];
        };
    };
    downloadByPath: {
        parameters: {
            query?: {
                /**
                 * @description `true`: answer `307` to a direct link to the file instead of sending its bytes, when the
                 *     gateway has direct links on (`DOWNLOAD_LINKS=on`); otherwise the bytes are sent as
                 *     without it. Conditionals and `Range` are evaluated first, so a `304`, `412` or `416` is
                 *     answered as usual.
                 */
                redirect?: components["parameters"]["Redirect"];
            };
            header?: {
                /**
                 * @description Byte range request (RFC 9110 section 14.2), honoured only on a `200`-able request:
                 *     `bytes=0-99` (first 100 bytes), `bytes=100-` (from offset 100 to the end) or
                 *     `bytes=-500` (suffix range: the last 500 bytes). The answer is `206` with
                 *     `Content-Range`. An end past the file is clamped; a suffix longer than the file means the
                 *     whole file (still `206`). Several ranges are merged into ONE range covering them all
                 *     (`bytes=0-9,50-59` gives `206` with `Content-Range: bytes 0-59/<size>`; never
                 *     `multipart/byteranges`, never only the first range); unsatisfiable ones among them are
                 *     dropped. A range set with nothing satisfiable (start at or beyond the end, `bytes=-0`,
                 *     any range of an empty file) gets `416` with `Content-Range: bytes *\/<size>`. A
                 *     syntactically invalid range (`bytes=5-3`), another unit, or more than 100 ranges is
                 *     ignored (`200`). `HEAD` ignores `Range` (RFC 9110 section 14.2) and answers `200`.
                 * @example bytes=0-1023
                 */
                Range?: components["parameters"]["Range"];
                /**
                 * @description Comma-separated entity tags, or `*` (RFC 9110 section 13.1.1). Compared with strong
                 *     comparison; when none matches the current `ETag`, the answer is `412`.
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-Match"?: components["parameters"]["IfMatch"];
                /**
                 * @description Comma-separated entity tags (weak or strong), or `*` (RFC 9110 section 13.1.2).
                 *     Compared with weak comparison; when one matches the current `ETag`, the answer is `304`.
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-None-Match"?: components["parameters"]["IfNoneMatch"];
                /**
                 * @description An HTTP-date (RFC 9110 section 13.1.3). Ignored when `If-None-Match` is present or the
                 *     date is invalid; when the file has not been modified since, the answer is `304`.
                 * @example Wed, 21 Oct 2015 07:28:00 GMT
                 */
                "If-Modified-Since"?: components["parameters"]["IfModifiedSince"];
                /**
                 * @description An HTTP-date (RFC 9110 section 13.1.4). Ignored when `If-Match` is present or the date
                 *     is invalid; when the file has been modified since, the answer is `412`.
                 * @example Wed, 21 Oct 2015 07:28:00 GMT
                 */
                "If-Unmodified-Since"?: components["parameters"]["IfUnmodifiedSince"];
                /**
                 * @description A strong entity tag or an HTTP-date (RFC 9110 section 13.1.5), meaningful only with
                 *     `Range`. Preconditions are evaluated in the order of RFC 9110 section 13.2.2:
                 *     `If-Match` (else `If-Unmodified-Since`) -> `412`; then `If-None-Match` (else
                 *     `If-Modified-Since`) -> `304`; then `If-Range`: when it matches the current
                 *     representation (strong `ETag` comparison, or exact `Last-Modified` date) the `Range` is
                 *     honoured (`206`), otherwise the `Range` is ignored and the whole file is sent (`200`).
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-Range"?: components["parameters"]["IfRange"];
            };
            path: {
                /**
                 * @description The catalog `FileName` of the file, relative to the storage root.
                 *
                 *     * It may contain several `/`-separated segments (e.g. `equities/2024/PETR4.csv`, requested
                 *       as `/equities/2024/PETR4.csv`); each
                 *       segment is percent-encoded as usual (spaces as `%20`, accented letters as UTF-8
                 *       octets, e.g. `%C3%A7`) and the gateway decodes it exactly once. A path that still
                 *       contains `%` after that one decoding (double encoding such as `%2520` or `%252e`) is
                 *       rejected with `400`, so nothing is ever decoded twice.
                 *     * Files whose first path segment is a route name of this API (`oauth`, `catalog`,
                 *       `list`, `count`, `info`, `download`, `link`, `health`, `ready`, `metrics`,
                 *       `openapi.yaml`, `docs`, `portal`, `.well-known`) cannot be reached here;
                 *       use `/download/{symbol}` for them.
                 *     * Paths containing `.` or `..` segments (raw or encoded, e.g. `%2E%2E`), encoded
                 *       slashes (`%2F`), backslashes (raw or `%5C`), empty segments (`//`), NUL or other
                 *       control characters (`%00`, `%0A`), malformed percent-encoding or invalid UTF-8, more
                 *       than 1024 characters or a segment over 255 are rejected with `400`. An encoded dot
                 *       inside a name (`ok%2Ecsv`) is just a dot.
                 * @example PETR4.csv
                 */
                path: components["parameters"]["FilePath"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["DownloadOk"];
            206: components["responses"]["DownloadPartialContent"];
            304: components["responses"]["NotModified"];
            307: components["responses"]["DownloadRedirect"];
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["FileNotFound"];
            412: components["responses"]["PreconditionFailed"];
            416: components["responses"]["RangeNotSatisfiable"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["HeaderTooLarge"];
            500: components["responses"]["InternalError"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    headDownloadByPath: {
        parameters: {
            query?: {
                /**
                 * @description `true`: answer `307` to a direct link to the file instead of sending its bytes, when the
                 *     gateway has direct links on (`DOWNLOAD_LINKS=on`); otherwise the bytes are sent as
                 *     without it. Conditionals and `Range` are evaluated first, so a `304`, `412` or `416` is
                 *     answered as usual.
                 */
                redirect?: components["parameters"]["Redirect"];
            };
            header?: {
                /**
                 * @description Byte range request (RFC 9110 section 14.2), honoured only on a `200`-able request:
                 *     `bytes=0-99` (first 100 bytes), `bytes=100-` (from offset 100 to the end) or
                 *     `bytes=-500` (suffix range: the last 500 bytes). The answer is `206` with
                 *     `Content-Range`. An end past the file is clamped; a suffix longer than the file means the
                 *     whole file (still `206`). Several ranges are merged into ONE range covering them all
                 *     (`bytes=0-9,50-59` gives `206` with `Content-Range: bytes 0-59/<size>`; never
                 *     `multipart/byteranges`, never only the first range); unsatisfiable ones among them are
                 *     dropped. A range set with nothing satisfiable (start at or beyond the end, `bytes=-0`,
                 *     any range of an empty file) gets `416` with `Content-Range: bytes *\/<size>`. A
                 *     syntactically invalid range (`bytes=5-3`), another unit, or more than 100 ranges is
                 *     ignored (`200`). `HEAD` ignores `Range` (RFC 9110 section 14.2) and answers `200`.
                 * @example bytes=0-1023
                 */
                Range?: components["parameters"]["Range"];
                /**
                 * @description Comma-separated entity tags, or `*` (RFC 9110 section 13.1.1). Compared with strong
                 *     comparison; when none matches the current `ETag`, the answer is `412`.
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-Match"?: components["parameters"]["IfMatch"];
                /**
                 * @description Comma-separated entity tags (weak or strong), or `*` (RFC 9110 section 13.1.2).
                 *     Compared with weak comparison; when one matches the current `ETag`, the answer is `304`.
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-None-Match"?: components["parameters"]["IfNoneMatch"];
                /**
                 * @description An HTTP-date (RFC 9110 section 13.1.3). Ignored when `If-None-Match` is present or the
                 *     date is invalid; when the file has not been modified since, the answer is `304`.
                 * @example Wed, 21 Oct 2015 07:28:00 GMT
                 */
                "If-Modified-Since"?: components["parameters"]["IfModifiedSince"];
                /**
                 * @description An HTTP-date (RFC 9110 section 13.1.4). Ignored when `If-Match` is present or the date
                 *     is invalid; when the file has been modified since, the answer is `412`.
                 * @example Wed, 21 Oct 2015 07:28:00 GMT
                 */
                "If-Unmodified-Since"?: components["parameters"]["IfUnmodifiedSince"];
                /**
                 * @description A strong entity tag or an HTTP-date (RFC 9110 section 13.1.5), meaningful only with
                 *     `Range`. Preconditions are evaluated in the order of RFC 9110 section 13.2.2:
                 *     `If-Match` (else `If-Unmodified-Since`) -> `412`; then `If-None-Match` (else
                 *     `If-Modified-Since`) -> `304`; then `If-Range`: when it matches the current
                 *     representation (strong `ETag` comparison, or exact `Last-Modified` date) the `Range` is
                 *     honoured (`206`), otherwise the `Range` is ignored and the whole file is sent (`200`).
                 * @example "0x8DC2A4F5B1C2D3E"
                 */
                "If-Range"?: components["parameters"]["IfRange"];
            };
            path: {
                /**
                 * @description The catalog `FileName` of the file, relative to the storage root.
                 *
                 *     * It may contain several `/`-separated segments (e.g. `equities/2024/PETR4.csv`, requested
                 *       as `/equities/2024/PETR4.csv`); each
                 *       segment is percent-encoded as usual (spaces as `%20`, accented letters as UTF-8
                 *       octets, e.g. `%C3%A7`) and the gateway decodes it exactly once. A path that still
                 *       contains `%` after that one decoding (double encoding such as `%2520` or `%252e`) is
                 *       rejected with `400`, so nothing is ever decoded twice.
                 *     * Files whose first path segment is a route name of this API (`oauth`, `catalog`,
                 *       `list`, `count`, `info`, `download`, `link`, `health`, `ready`, `metrics`,
                 *       `openapi.yaml`, `docs`, `portal`, `.well-known`) cannot be reached here;
                 *       use `/download/{symbol}` for them.
                 *     * Paths containing `.` or `..` segments (raw or encoded, e.g. `%2E%2E`), encoded
                 *       slashes (`%2F`), backslashes (raw or `%5C`), empty segments (`//`), NUL or other
                 *       control characters (`%00`, `%0A`), malformed percent-encoding or invalid UTF-8, more
                 *       than 1024 characters or a segment over 255 are rejected with `400`. An encoded dot
                 *       inside a name (`ok%2Ecsv`) is just a dot.
                 * @example PETR4.csv
                 */
                path: components["parameters"]["FilePath"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["HeadOk"];
            304: components["responses"]["NotModified"];
            400: components["responses"]["HeadBadRequest"];
            401: components["responses"]["HeadUnauthorized"];
            403: components["responses"]["HeadForbidden"];
            404: components["responses"]["HeadNotFound"];
            412: components["responses"]["HeadPreconditionFailed"];
            429: components["responses"]["HeadTooManyRequests"];
            431: components["responses"]["HeadHeaderTooLarge"];
            500: components["responses"]["HeadInternalError"];
            502: components["responses"]["HeadBadGateway"];
            503: components["responses"]["HeadServiceUnavailable"];
        };
    };
}
