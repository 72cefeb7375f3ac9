import { execFile } from 'node:child_process';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createAuditTrail } from '../../src/adapters/audit/audit-trail.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { packageRoot } from '../../src/app/package-root.js';
import { startGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { signedRaw } from '../support/s3-signing.js';

const run = promisify(execFile);

/** The real `usage` command line, from the sources, in a child process. */
async function usage(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/app/usage-cli.ts', ...args], { cwd: packageRoot() });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('npm run usage (per-client usage from audit files)', function () {
  let dir: string;
  let auditFile: string;

  before(async function () {
    dir = await mkdtemp(join(tmpdir(), 'usage-'));
    auditFile = join(dir, 'audit.jsonl');
    // A recorded month: two clients downloading through the real gateway, with its audit file.
    const store = new MemoryBlobStore();
    for (const client of ['acme', 'beta']) {
      store.put(`indexes/${client}.csv`, buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'data/a.bin' }), buildIndexRow({ Symbol: 'B', FileName: 'data/b.bin' })]));
    }
    store.put('data/a.bin', new Uint8Array(1000));
    store.put('data/b.bin', new Uint8Array(300));
    const audit = createAuditTrail(new Writable({ write: (_chunk, _encoding, callback) => callback() }), auditFile);
    const gateway = await startGateway({
      store,
      audit,
      env: { DOWNLOAD_LINKS: 'on', S3_API: 'on' },
      clients: [
        { clientId: 'acme', secret: 'acme-secret-acme-secret' },
        { clientId: 'beta', secret: 'beta-secret-beta-secret' },
      ],
    });
    try {
      await gateway.get('acme', '/download/A');
      await gateway.get('acme', '/download/A');
      await gateway.get('acme', '/download/B', { range: 'bytes=0-99' });
      await gateway.get('beta', '/download/B');
      await gateway.get('beta', '/download/NOPE');
      // A link: counted as one, its bytes (moved by storage or a signed URL) are not the link's.
      await gateway.get('acme', '/link/A');
      // A link to a file not downloaded adds a file; a link refused is no link.
      await gateway.get('beta', '/link/A');
      await gateway.get('beta', '/link/NOPE');
      // One GetObject through the S3 API, with temporary credentials: a download like the others.
      const token = await gateway.tokenFor('acme');
      const issued = await gateway.request('POST', '/oauth/s3-credentials', { headers: { authorization: `Bearer ${token}` } });
      const credentials = JSON.parse(issued.body.toString()) as { AccessKeyId: string; SecretAccessKey: string; SessionToken: string };
      const key = { accessKeyId: credentials.AccessKeyId, secretAccessKey: credentials.SecretAccessKey, sessionToken: credentials.SessionToken };
      expect((await signedRaw(gateway, 'GET', '/data/data/b.bin', key, new Date())).status).to.equal(200);
    } finally {
      await gateway.close();
      await audit.close();
    }
    // Older records, and a line that is not one.
    const old = { level: 30, time: '2026-01-15T10:00:00.000Z', event: 'download', requestId: 'r', clientId: 'acme', symbol: 'A', path: 'data/a.bin', method: 'GET', status: 200, range: null, bytesSent: 5000, fileSize: 5000, etag: '"x"', outcome: 'completed', durationMs: 3, msg: 'audit' };
    await appendFile(auditFile, `${JSON.stringify(old)}\nnot json at all\n`);
  });

  after(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  it('reports downloads, bytes and distinct files per client, as JSON', async function () {
    const result = await usage([auditFile, '--json', '--since', '2026-02-01']);
    expect(result.code, result.stderr).to.equal(0);
    expect(JSON.parse(result.stdout)).to.deep.equal([
      { clientId: 'acme', downloads: 4, s3Downloads: 1, interrupted: 0, links: 1, bytes: 2400, files: 2 },
      { clientId: 'beta', downloads: 1, s3Downloads: 0, interrupted: 0, links: 1, bytes: 300, files: 2 },
    ]);
    expect(result.stderr).to.match(/lines were not download records/);
  });

  it('counts only the period asked for: --until is exclusive', async function () {
    const result = await usage([auditFile, '--json', '--since', '2026-01-01', '--until', '2026-02-01']);
    expect(JSON.parse(result.stdout)).to.deep.equal([{ clientId: 'acme', downloads: 1, s3Downloads: 0, interrupted: 0, links: 0, bytes: 5000, files: 1 }]);
  });

  it('prints an aligned table by default', async function () {
    const result = await usage([auditFile, '--since', '2026-02-01']);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).to.match(/^CLIENT_ID\s+DOWNLOADS\s+S3\s+INTERRUPTED\s+LINKS\s+BYTES\s+MIB\s+FILES$/);
    expect(lines[1]).to.match(/^acme\s+4\s+1\s+0\s+1\s+2400\s+0\.0\s+2$/);
    expect(lines[2]).to.match(/^beta\s+1\s+0\s+0\s+1\s+300\s+0\.0\s+2$/);
  });

  it('does not count HEAD as a download, skips a byte count that is negative or not finite, and escapes control characters', async function () {
    const hostileFile = join(dir, 'hostile.jsonl');
    const record = (fields: Record<string, unknown>): string =>
      JSON.stringify({ level: 30, time: '2026-03-01T10:00:00.000Z', event: 'download', requestId: 'r', clientId: 'acme', symbol: 'A', path: 'data/a.bin', method: 'GET', status: 200, range: null, bytesSent: 10, fileSize: 10, etag: '"x"', outcome: 'completed', durationMs: 1, msg: 'audit', ...fields });
    await appendFile(
      hostileFile,
      [
        record({}),
        record({ method: 'HEAD', bytesSent: 0 }),
        record({ bytesSent: -100 }),
        record({ bytesSent: 12345 }).replace('12345', '1e999'),
        record({ clientId: 'evil\u001b[2J\u009b', bytesSent: 5 }),
      ].join('\n') + '\n',
    );
    const rawControl = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

    const [json, table] = [await usage([hostileFile, '--json']), await usage([hostileFile])];

    expect(json.code, json.stderr).to.equal(0);
    expect(JSON.parse(json.stdout)).to.deep.equal([
      { clientId: 'acme', downloads: 1, s3Downloads: 0, interrupted: 0, links: 0, bytes: 10, files: 1 },
      { clientId: 'evil\u001b[2J\u009b', downloads: 1, s3Downloads: 0, interrupted: 0, links: 0, bytes: 5, files: 1 },
    ]);
    expect(json.stderr).to.contain('2 lines');
    for (const output of [json.stdout, table.stdout]) expect(output).not.to.match(rawControl);
    expect(table.stdout).to.contain('evil\\u001b[2J\\u009b');
  });

  it('exits 2 for a date that is not one, and 1 for a file it cannot read', async function () {
    expect((await usage([auditFile, '--since', 'last month'])).code).to.equal(2);
    expect((await usage([join(dir, 'missing.jsonl')])).code).to.equal(1);
  });
});
