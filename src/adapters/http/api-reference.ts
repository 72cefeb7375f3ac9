import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The interactive API reference at `/docs`: Swagger UI, from the `swagger-ui-dist` package the
 * gateway ships, over `/openapi.yaml`. Every file the page loads comes from this origin, so it
 * works offline and its Content-Security-Policy can forbid any other origin.
 */

/** A file of the page: its media type and bytes. */
export interface ApiReferenceAsset {
  readonly contentType: string;
  readonly body: Buffer;
}

/**
 * Scripts, styles and images from this origin only; the page calls this origin only (`connect-src`),
 * so "try it" can reach nothing but this gateway. Swagger UI sets inline styles and draws inline
 * SVG images (`data:`).
 */
export const apiReferenceContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const apiReferencePage = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Data File Gateway API reference</title>
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/api-reference.js"></script>
</body>
</html>
`;

/**
 * The page's start-up script (a file, not inline, so that `script-src 'self'` holds). `validatorUrl:
 * null` keeps Swagger UI from sending the document to its public validator. A token that
 * `/oauth/token` returns to the page (the Authorize dialog's client credentials flow, or trying the
 * operation itself) also authorizes the operations through `bearerAuth`.
 */
const startUpScript = `'use strict';
window.addEventListener('load', function () {
  var ui = SwaggerUIBundle({
    url: '/openapi.yaml',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    // "Try it out" and Authorize call the gateway that serves the page, whichever server of
    // openapi.yaml is selected (the first is a local gateway's URL, for generated clients).
    requestInterceptor: function (request) {
      var url = new URL(request.url, window.location.href);
      if (url.origin !== window.location.origin) request.url = window.location.origin + url.pathname + url.search;
      return request;
    },
    responseInterceptor: function (response) {
      var path = new URL(response.url, window.location.href).pathname;
      if (path === '/oauth/token' && response.ok && response.body && typeof response.body.access_token === 'string') {
        ui.preauthorizeApiKey('bearerAuth', response.body.access_token);
      }
      return response;
    },
  });
  window.ui = ui;
});
`;

/** The files of `swagger-ui-dist` the page loads, by the name it asks them under. */
const swaggerUiFiles: Readonly<Record<string, string>> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/** Every asset name `/docs/{asset}` serves. */
export const apiReferenceAssetNames: readonly string[] = [...Object.keys(swaggerUiFiles), 'api-reference.js'];

/** Reads each asset once, on its first request; `undefined` for any name but `apiReferenceAssetNames`. */
export function createApiReferenceAssets(): (name: string) => Promise<ApiReferenceAsset | undefined> {
  const swaggerUiDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const loaded = new Map<string, Promise<ApiReferenceAsset>>([
    ['api-reference.js', Promise.resolve({ contentType: 'text/javascript; charset=utf-8', body: Buffer.from(startUpScript, 'utf8') })],
  ]);
  return (name) => {
    // Own properties only: `constructor` or `__proto__` are no assets.
    if (!loaded.has(name) && Object.hasOwn(swaggerUiFiles, name)) {
      const contentType = swaggerUiFiles[name] ?? 'application/octet-stream';
      const reading = readFile(join(swaggerUiDir, name)).then((body) => ({ contentType, body }));
      // A failed read is not kept, so the next request tries again.
      reading.catch(() => loaded.delete(name));
      loaded.set(name, reading);
    }
    return loaded.get(name) ?? Promise.resolve(undefined);
  };
}
