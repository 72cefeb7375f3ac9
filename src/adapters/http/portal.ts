import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { DirectLinks } from './download-handler.js';

/**
 * The subscriber portal at `/portal`: a single-page app built by `npm run build` (Vite, from
 * `portal/`) into `dist/portal/`, served from this origin only. The gateway serves its page, its
 * hashed assets, a small configuration document, and the short-lived download links it asks for.
 */

/**
 * Everything from this origin, nothing inline: the portal has no inline script or style (Preact sets
 * styles through the CSSOM, which `style-src` does not govern), calls this origin only, and may not
 * be framed (clickjacking) nor submit forms anywhere (`form-action 'none'`: its forms are handled in
 * script). Downloads go through the browser's own download manager, not `connect-src`.
 */
export const portalContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** How long a portal download link works, at most: long enough to start the download, no longer. */
export const portalLinkTtlMs = 60_000;

/** The S3-compatible API, as the portal's copy-ready `aws s3 cp` command needs it. */
export interface PortalS3Api {
  readonly endpointUrl: string;
  readonly bucket: string;
}

/** A file of the built portal: its media type and bytes. */
export interface PortalAsset {
  readonly contentType: string;
  readonly body: Buffer;
}

export interface PortalSettings {
  /** The built page (`index.html`); `undefined` when the portal was not built. */
  readonly page: () => Promise<PortalAsset | undefined>;
  /** A file of `assets/` by name; `undefined` for any name the build did not write. */
  readonly asset: (name: string) => Promise<PortalAsset | undefined>;
  /** Makes the portal's single-client, single-file download links, valid `ttlMs`. */
  readonly links: DirectLinks;
  /** The bucket of the S3-compatible API when it is on (S3_API=on; the portal then shows `aws s3 cp`). */
  readonly s3Bucket: string | undefined;
}

const contentTypes: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/**
 * The built portal in `folder` (`dist/portal`): the page, and the files its `assets/` folder held
 * when first asked, each read once. A name is looked up among the names the folder listed, never
 * joined onto a path as sent, so no request reaches beyond it; and the names held are bounded by
 * the build's own output.
 */
export function builtPortalFiles(folder: string): Pick<PortalSettings, 'page' | 'asset'> {
  let listing: Promise<ReadonlySet<string>> | undefined;
  const loaded = new Map<string, Promise<PortalAsset>>();
  const read = (path: string, contentType: string): Promise<PortalAsset> => {
    let reading = loaded.get(path);
    if (reading === undefined) {
      reading = readFile(path).then((body) => ({ contentType, body }));
      // A failed read is not kept, so the next request tries again.
      reading.catch(() => loaded.delete(path));
      loaded.set(path, reading);
    }
    return reading;
  };
  const assetsFolder = join(folder, 'assets');
  return {
    page: () => read(join(folder, 'index.html'), 'text/html; charset=utf-8').catch(() => undefined),
    async asset(name) {
      if (listing === undefined) {
        const reading = readdir(assetsFolder).then((names) => new Set(names.filter((entry) => Object.hasOwn(contentTypes, extname(entry)))));
        // A folder that cannot be read (not built yet) is not remembered as empty: it is read again.
        reading.catch(() => (listing = undefined));
        listing = reading;
      }
      const names = await listing.catch(() => new Set<string>());
      if (!names.has(name)) return undefined;
      return read(join(assetsFolder, name), contentTypes[extname(name)] ?? 'application/octet-stream');
    },
  };
}

/**
 * `/portal/config.json`: what the portal cannot know from the API alone. The S3 API answers at the
 * gateway's own origin (path-style, `s3://<bucket>/<storage path>`).
 */
export function portalConfiguration(settings: Pick<PortalSettings, 's3Bucket'>, origin: string): { readonly s3Api: PortalS3Api | null } {
  return { s3Api: settings.s3Bucket === undefined ? null : { endpointUrl: origin, bucket: settings.s3Bucket } };
}
