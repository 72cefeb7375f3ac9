/**
 * The anchors the gateway is measured against, in the same run: servers that do the same work
 * with nothing of the gateway's (no authentication, entitlement, policy or logging), and nginx
 * when it is installed. Each is the floor of what a Node (or nginx) server on this machine can do.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { join } from 'node:path';
import type { ContainerClient } from '@azure/storage-blob';
import express from 'express';

export interface RunningServer {
  readonly port: number;
  stop(): Promise<void>;
}

async function listen(server: Server): Promise<RunningServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The minimal Node reverse proxy: `http.request(...).pipe(res)`, nothing else. */
export function nodeReverseProxy(targetPort: number): Promise<RunningServer> {
  return listen(
    createServer((req, res) => {
      const upstream = httpRequest({ host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    }),
  );
}

/** A bare file server: `fs.createReadStream(file).pipe(res)`. */
export function bareFileServer(root: string): Promise<RunningServer> {
  return listen(
    createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      createReadStream(join(root, decodeURIComponent((req.url ?? '/').slice(1)))).pipe(res);
    }),
  );
}

/**
 * Bare Express doing the same work as three gateway operations, without the gateway: `/catalog`
 * answers the same JSON (serialized per request, as a plain Express app would), `/info` does the
 * same property read through the SDK, `/list` the same List Blobs calls.
 */
export function bareExpress(catalogJson: unknown, container: ContainerClient): Promise<RunningServer> {
  const app = express();
  app.get('/catalog', (_req, res) => {
    res.json(catalogJson);
  });
  app.get('/info/:blob', async (req, res) => {
    const properties = await container.getBlobClient(`quotes/${req.params['blob'] ?? ''}`).getProperties();
    res.json({ size: properties.contentLength, etag: properties.etag, uploaded: properties.lastModified?.toISOString() });
  });
  app.get('/list', async (_req, res) => {
    const files: Array<{ name: string; size: number | undefined }> = [];
    for await (const blob of container.listBlobsFlat({ prefix: 'quotes/' })) files.push({ name: blob.name, size: blob.properties.contentLength });
    res.json({ files, count: files.length });
  });
  return listen(createServer(app));
}

export interface Nginx extends RunningServer {
  /** Port of the reverse proxy to Azurite. */
  readonly proxyPort: number;
  /** Port of the static server (`sendfile`) of the local folder. */
  readonly staticPort: number;
}

/** nginx, when installed: a reverse proxy to Azurite and a `sendfile` static server of `root`. */
export async function startNginx(workDir: string, azuritePort: number, root: string, ports: readonly [number, number]): Promise<Nginx | undefined> {
  const binary = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((path) => existsSync(path));
  if (binary === undefined) return undefined;
  const dir = join(workDir, 'nginx');
  await mkdir(join(dir, 'temp'), { recursive: true });
  const [proxyPort, staticPort] = ports;
  const config = `
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  client_body_temp_path ${dir}/temp/body;
  proxy_temp_path ${dir}/temp/proxy;
  fastcgi_temp_path ${dir}/temp/fastcgi;
  uwsgi_temp_path ${dir}/temp/uwsgi;
  scgi_temp_path ${dir}/temp/scgi;
  server {
    listen 127.0.0.1:${proxyPort};
    location / {
      proxy_pass http://127.0.0.1:${azuritePort};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_max_temp_file_size 0;
    }
  }
  server {
    listen 127.0.0.1:${staticPort};
    root ${root};
    location / { }
  }
}
`;
  await writeFile(join(dir, 'nginx.conf'), config);
  const child: ChildProcess = spawn(binary, ['-c', join(dir, 'nginx.conf'), '-p', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  // Ready once it answers.
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const answered = await new Promise<boolean>((resolve) => {
      const probe = httpRequest({ host: '127.0.0.1', port: staticPort, path: '/', method: 'HEAD' }, (res) => {
        res.resume();
        resolve(true);
      });
      probe.on('error', () => resolve(false));
      probe.end();
    });
    if (answered) break;
    if (child.exitCode !== null) throw new Error(`nginx exited: ${errors}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port: proxyPort,
    proxyPort,
    staticPort,
    stop: async () => {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGQUIT');
      await exited;
    },
  };
}
