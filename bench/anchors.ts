/**
 * The anchors the gateway is measured against, in the same run: servers that do the same work
 * with nothing of the gateway's (no authentication, entitlement, policy or logging), and nginx
 * when it is installed. Each is the floor of what a Node (or nginx) server on this machine can do.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ContainerClient } from '@azure/storage-blob';
import express from 'express';
import { STREAMING_MALLOC_TRIM_THRESHOLD_BYTES } from '../src/app/heap-tuning.js';

export interface RunningServer {
  readonly port: number;
  /** The process serving (its CPU time and RSS are its own). */
  readonly pid: number;
  stop(): Promise<void>;
}

/** What an anchor server does; each runs in a process of its own, as the gateway does. */
export type AnchorSpec =
  /** The minimal Node reverse proxy to `targetPort`: `http.request(...).pipe(res)`, nothing else. */
  | { readonly kind: 'proxy'; readonly targetPort: number }
  /** A bare file server of `root`: `fs.createReadStream(file).pipe(res)`. */
  | { readonly kind: 'files'; readonly root: string }
  /**
   * Bare Express doing the same work as three gateway operations, without the gateway: `/catalog`
   * answers the JSON in `catalogFile` (serialized per request, as a plain Express app would),
   * `/info/<blob>` does the same property read through the SDK, `/list` the same List Blobs calls.
   */
  | { readonly kind: 'express'; readonly catalogFile: string; readonly connectionString: string; readonly container: string };

/**
 * The environment the gateway is deployed with for streaming, given to it and to the Node anchors
 * alike (so that their ratios compare like with like): glibc's trim threshold, as the Azure kit's
 * app settings set it (`STREAMING_MALLOC_TRIM_THRESHOLD_BYTES`).
 */
export const STREAMING_ENV = { MALLOC_TRIM_THRESHOLD_: String(STREAMING_MALLOC_TRIM_THRESHOLD_BYTES) };

/** Starts an anchor in a child process (run by the Node binary `node`, the bench's own by default) and waits until it listens. */
export async function startAnchor(spec: AnchorSpec, node = process.execPath): Promise<RunningServer> {
  const child = spawn(node, ['--import', 'tsx', fileURLToPath(import.meta.url), 'serve', JSON.stringify(spec)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...STREAMING_ENV, NODE_OPTIONS: '' },
  });
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (\d+)/.exec(output);
      if (match !== null) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`anchor ${spec.kind} exited with ${code}`)));
  });
  return {
    port,
    pid: child.pid ?? 0,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function serve(spec: AnchorSpec): Promise<Server> {
  switch (spec.kind) {
    case 'proxy':
      return createServer((req, res) => {
        const upstream = httpRequest({ host: '127.0.0.1', port: spec.targetPort, method: req.method, path: req.url, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        req.pipe(upstream);
      });
    case 'files':
      return createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        createReadStream(join(spec.root, decodeURIComponent((req.url ?? '/').slice(1)))).pipe(res);
      });
    case 'express': {
      const catalogJson: unknown = JSON.parse(await readFile(spec.catalogFile, 'utf8'));
      const container = new ContainerClient(spec.connectionString, spec.container);
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
      return createServer(app);
    }
  }
}

export interface Nginx extends RunningServer {
  /** Port of the reverse proxy to Azurite. */
  readonly proxyPort: number;
  /** Port of the static server (`sendfile`) of the local folder. */
  readonly staticPort: number;
  /** The one worker process, which does all the work (its CPU time is the anchor's). */
  readonly workerPid: number;
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
  const masterPid = child.pid ?? 0;
  // worker_processes 1: the master's one child.
  const workerPid = Number((await readFile(`/proc/${masterPid}/task/${masterPid}/children`, 'utf8')).trim().split(' ')[0]);
  if (!Number.isInteger(workerPid) || workerPid <= 0) throw new Error('nginx started no worker process');
  return {
    port: proxyPort,
    pid: masterPid,
    workerPid,
    proxyPort,
    staticPort,
    stop: async () => {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGQUIT');
      await exited;
    },
  };
}

// `node --import tsx bench/anchors.ts serve '<spec as JSON>'`: one anchor server, until SIGTERM.
if (process.argv[2] === 'serve') {
  const server = await serve(JSON.parse(process.argv[3] ?? '{}') as AnchorSpec);
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`listening ${typeof address === 'object' && address !== null ? address.port : 0}\n`);
  });
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
