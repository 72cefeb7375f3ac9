import { execFile } from 'node:child_process';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createAuditTrail } from '../../src/adapters/audit/audit-trail.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { packageRoot } from '../../src/app/package-root.js';
import { quotaPeriodOf } from '../../src/domain/monthly-quota.js';
import { startGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { signedRaw } from '../support/s3-signing.js';

const run = promisify(execFile);

/** The real `usage` command line, from the sources, in a child process. */
async function usage(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/app/usage-cli.ts', ...args], {
      cwd: packageRoot(),
      env: { ...process.env, CLIENTS_FILE: '', ...env },
    });
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
      // A link: counted as one; it costs no quota bytes (each use of a gateway-signed link is a download of its own).
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
      { clientId: 'acme', downloads: 4, s3Downloads: 1, interrupted: 0, links: 1, bytes: 2400, files: 2, quotaBytes: 2400, monthlyBytes: null, termActive: null, validFrom: null, validUntil: null },
      { clientId: 'beta', downloads: 1, s3Downloads: 0, interrupted: 0, links: 1, bytes: 300, files: 2, quotaBytes: 300, monthlyBytes: null, termActive: null, validFrom: null, validUntil: null },
    ]);
    expect(result.stderr).to.match(/lines were not download records/);
  });

  it('counts only the period asked for: --until is exclusive', async function () {
    const result = await usage([auditFile, '--json', '--since', '2026-01-01', '--until', '2026-02-01']);
    expect(JSON.parse(result.stdout)).to.deep.equal([{ clientId: 'acme', downloads: 1, s3Downloads: 0, interrupted: 0, links: 0, bytes: 5000, files: 1, quotaBytes: 5000, monthlyBytes: null, termActive: null, validFrom: null, validUntil: null }]);
  });

  it('prints an aligned table by default', async function () {
    const result = await usage([auditFile, '--since', '2026-02-01']);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).to.match(/^CLIENT_ID\s+DOWNLOADS\s+S3\s+INTERRUPTED\s+LINKS\s+BYTES\s+MIB\s+FILES\s+QUOTA_USED\s+MONTHLY_BYTES\s+USED_%\s+TERM_ACTIVE$/);
    expect(lines[1]).to.match(/^acme\s+4\s+1\s+0\s+1\s+2400\s+0\.0\s+2\s+2400\s+-\s+-\s+-$/);
    expect(lines[2]).to.match(/^beta\s+1\s+0\s+0\s+1\s+300\s+0\.0\s+2\s+300\s+-\s+-\s+-$/);
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
      { clientId: 'acme', downloads: 1, s3Downloads: 0, interrupted: 0, links: 0, bytes: 10, files: 1, quotaBytes: 10, monthlyBytes: null, termActive: null, validFrom: null, validUntil: null },
      { clientId: 'evil\u001b[2J\u009b', downloads: 1, s3Downloads: 0, interrupted: 0, links: 0, bytes: 5, files: 1, quotaBytes: 5, monthlyBytes: null, termActive: null, validFrom: null, validUntil: null },
    ]);
    expect(json.stderr).to.contain('2 lines');
    for (const output of [json.stdout, table.stdout]) expect(output).not.to.match(rawControl);
    expect(table.stdout).to.contain('evil\\u001b[2J\\u009b');
  });

  it('with --month and CLIENTS_FILE, sets every registered client\'s quota bytes of that month against its quota and says whether its term is in force', async function () {
    const clientsFile = join(dir, 'clients.json');
    const stored = (fields: Record<string, unknown>) => ({
      secretHash: 'scrypt$x',
      indexPath: 'indexes/x.csv',
      enabled: true,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      ...fields,
    });
    await writeFile(
      clientsFile,
      JSON.stringify({
        version: 1,
        clients: {
          acme: stored({ monthlyBytes: 10_000 }),
          beta: stored({ validUntil: '2026-01-01T00:00:00.000Z' }),
          idle: stored({ validFrom: '2026-01-01T00:00:00.000Z', monthlyBytes: 500 }),
        },
      }),
    );
    const thisMonth = quotaPeriodOf(new Date()).key;
    const result = await usage([auditFile, '--json', '--month', thisMonth], { CLIENTS_FILE: clientsFile });
    expect(result.code, result.stderr).to.equal(0);
    const zeros = { downloads: 0, s3Downloads: 0, interrupted: 0, links: 0, bytes: 0, files: 0, quotaBytes: 0 };
    expect(JSON.parse(result.stdout)).to.deep.equal([
      { clientId: 'acme', downloads: 4, s3Downloads: 1, interrupted: 0, links: 1, bytes: 2400, files: 2, quotaBytes: 2400, monthlyBytes: 10_000, termActive: true, validFrom: null, validUntil: null },
      { clientId: 'beta', downloads: 1, s3Downloads: 0, interrupted: 0, links: 1, bytes: 300, files: 2, quotaBytes: 300, monthlyBytes: null, termActive: false, validFrom: null, validUntil: '2026-01-01T00:00:00.000Z' },
      { clientId: 'idle', ...zeros, monthlyBytes: 500, termActive: true, validFrom: '2026-01-01T00:00:00.000Z', validUntil: null },
    ]);
    const january = await usage([auditFile, '--json', '--month', '2026-01'], { CLIENTS_FILE: clientsFile });
    expect(JSON.parse(january.stdout)[0]).to.include({ clientId: 'acme', bytes: 5000, quotaBytes: 5000 });
  });

  it('exits 2 for a month that is not YYYY-MM, or --month with --since', async function () {
    expect((await usage([auditFile, '--month', '2026-13'])).code).to.equal(2);
    expect((await usage([auditFile, '--month', '2026-11', '--since', '2026-11-01'])).code).to.equal(2);
  });

  it('exits 2 for a date that is not one, and 1 for a file it cannot read', async function () {
    expect((await usage([auditFile, '--since', 'last month'])).code).to.equal(2);
    expect((await usage([join(dir, 'missing.jsonl')])).code).to.equal(1);
  });
});
