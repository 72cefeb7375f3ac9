import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import { JsonClientRegistry } from '../../src/adapters/clients/json-client-registry.js';
import { runClientsCli } from '../../src/app/clients-command.js';
import { packageRoot } from '../../src/app/package-root.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { startGateway, testSigningKeyText, type TestGateway } from '../support/gateway.js';
import { installDebianPackages } from '../support/debian-packages.js';
import { azuriteFixture, type BlobStoreFixture } from '../support/store-fixtures.js';
import { deadline } from '../support/deadlines.js';

/*
 * The S3-compatible API as subscribers use it: the real aws-cli (Debian's awscli 2), boto3
 * (Debian's python3-boto3), rclone, s3cmd and @aws-sdk/client-s3 against the gateway on Azurite.
 * A missing tool is installed with apt when this runs as root with apt-get; otherwise its tests
 * are skipped, saying why.
 */

const TOOL_TIMEOUT_MS = deadline(60_000);
const APT_TIMEOUT_MS = 15 * 60_000;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(file: string, args: readonly string[], env: Record<string, string>, cwd?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env, timeout: TOOL_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, ...(cwd !== undefined && { cwd }) }, (error, stdout, stderr) => {
      const code = error === null ? 0 : (error as NodeJS.ErrnoException & { code?: unknown }).code;
      if (error !== null && typeof code !== 'number') return reject(error);
      resolve({ code: typeof code === 'number' ? code : 0, stdout: stdout.toString(), stderr: stderr.toString() });
    });
  });
}

const exists = (path: string): Promise<boolean> => access(path).then(() => true, () => false);

/** The Debian package that provides each tool, and the file that proves it is installed. */
const TOOLS = {
  aws: { package: 'awscli', probe: '/usr/bin/aws' },
  rclone: { package: 'rclone', probe: '/usr/bin/rclone' },
  s3cmd: { package: 's3cmd', probe: '/usr/bin/s3cmd' },
  boto3: { package: 'python3-boto3', probe: '/usr/lib/python3/dist-packages/boto3/__init__.py' },
} as const;
type Tool = keyof typeof TOOLS;

/** Installs what is missing, once; says for each tool why it is unavailable, if it is. */
async function ensureTools(): Promise<Map<Tool, string>> {
  const missing = new Map<Tool, string>();
  const absent: Tool[] = [];
  for (const tool of Object.keys(TOOLS) as Tool[]) if (!(await exists(TOOLS[tool].probe))) absent.push(tool);
  if (absent.length === 0) return missing;
  const refused = await installDebianPackages(absent.map((tool) => TOOLS[tool].package));
  for (const tool of absent) {
    if (await exists(TOOLS[tool].probe)) continue;
    missing.set(tool, refused ?? `apt-get install ${TOOLS[tool].package} did not install ${TOOLS[tool].probe}`);
  }
  return missing;
}

const md5 = (bytes: Buffer | string): string => createHash('md5').update(bytes).digest('hex');

const FILES: Record<string, Buffer> = {
  'funds/2024/a.csv': Buffer.from('a,1\n'),
  'funds/2024/b.csv': Buffer.from('b,22\n'.repeat(1000)),
  'funds/top.csv': Buffer.from('top\n'),
  'reports/daily report.csv': Buffer.from('date,value\n2024-01-02,1\n'),
  'other/secret.csv': Buffer.from('only for beta\n'),
};
const ACME_PATHS = ['funds/2024/a.csv', 'funds/2024/b.csv', 'funds/top.csv', 'reports/daily report.csv'];

interface IssuedKey {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

describe('real S3 clients against the gateway\'s S3 API on Azurite', function () {
  this.timeout(TOOL_TIMEOUT_MS * 3);
  let unavailable: Map<Tool, string>;
  let fixture: BlobStoreFixture;
  let gateway: TestGateway;
  let work: string;
  let clientsFile: string;
  let acmeSecret: string;
  let acmeKey: IssuedKey;
  let betaKey: IssuedKey;

  const cli = async (args: readonly string[]): Promise<Record<string, string>> => {
    let stdout = '';
    let stderr = '';
    const code = await runClientsCli(args, {
      env: { CLIENTS_FILE: clientsFile, TOKEN_SIGNING_KEY: testSigningKeyText },
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    });
    if (code !== 0) throw new Error(`clients ${args.join(' ')} exited ${code}: ${stderr}`);
    return Object.fromEntries(stdout.split('\n').flatMap((line) => {
      const match = /^([a-z_]+): (.*)$/.exec(line);
      return match === null ? [] : [[match[1], match[2]]];
    }));
  };
  const issueKey = async (clientId: string): Promise<IssuedKey> => {
    const fields = await cli(['s3-key', 'add', clientId]);
    return { accessKeyId: fields['access_key_id'] ?? '', secretAccessKey: fields['secret_access_key'] ?? '' };
  };

  before(async function () {
    this.timeout(APT_TIMEOUT_MS);
    unavailable = await ensureTools();
    fixture = await azuriteFixture('s3-clients');
    for (const [path, bytes] of Object.entries(FILES)) await fixture.put(path, bytes, { contentType: 'text/csv' });
    await fixture.put('indexes/acme.csv', Buffer.from(buildIndexCsv(ACME_PATHS.map((path, i) => buildIndexRow({ Symbol: `A${i}`, FileName: path })))));
    await fixture.put('indexes/beta.csv', Buffer.from(buildIndexCsv([buildIndexRow({ Symbol: 'B0', FileName: 'other/secret.csv' })])));
    work = await mkdtemp(join(tmpdir(), 's3-clients-'));
    clientsFile = join(work, 'clients.json');
    acmeSecret = (await cli(['add', 'acme']))['client_secret'] ?? '';
    await cli(['add', 'beta']);
    acmeKey = await issueKey('acme');
    betaKey = await issueKey('beta');
    gateway = await startGateway({
      store: fixture.store,
      registry: new JsonClientRegistry(clientsFile, { recheckMs: 0 }),
      env: { S3_API: 'on', CLIENTS_FILE_RECHECK_SECONDS: '0' },
    });
  });

  after(async function () {
    await gateway?.close();
    await fixture?.cleanup();
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  });

  const requireTool = (context: Mocha.Context, tool: Tool): void => {
    const reason = unavailable.get(tool);
    if (reason !== undefined) {
      // Reported as pending, with the reason in its title.
      if (context.test !== undefined) context.test.title += ` (skipped: ${reason})`;
      context.skip();
    }
  };

  /** The environment of a tool: nothing from the developer's own AWS set-up, no CA bundle. */
  const baseEnv = (home: string): Record<string, string> => ({ PATH: `${join(work, 'bin')}:${process.env['PATH'] ?? '/usr/bin:/bin'}`, HOME: home, LANG: 'C.UTF-8' });

  async function awsHome(name: string, profile: string): Promise<string> {
    const home = join(work, name);
    await mkdir(join(home, '.aws'), { recursive: true });
    await writeFile(join(home, '.aws', 'config'), profile);
    return home;
  }

  const awsEnv = (home: string, key?: IssuedKey): Record<string, string> => ({
    ...baseEnv(home),
    AWS_CONFIG_FILE: join(home, '.aws', 'config'),
    AWS_SHARED_CREDENTIALS_FILE: join(home, '.aws', 'credentials'),
    AWS_DEFAULT_REGION: 'eu-west-1',
    AWS_PAGER: '',
    ...(key !== undefined && { AWS_ACCESS_KEY_ID: key.accessKeyId, AWS_SECRET_ACCESS_KEY: key.secretAccessKey }),
  });
  const pathStyle = '[default]\ns3 =\n  addressing_style = path\n';
  const aws = (home: string, key: IssuedKey | undefined, args: readonly string[]): Promise<Run> =>
    run('/usr/bin/aws', ['--endpoint-url', gateway.baseUrl, ...args], awsEnv(home, key));

  describe('aws-cli', function () {
    let home: string;
    before(async function () {
      home = await awsHome('aws-home', pathStyle);
    });

    it('lists only the client\'s entitled keys', async function () {
      requireTool(this, 'aws');
      const listed = await aws(home, acmeKey, ['s3', 'ls', 's3://data/', '--recursive']);
      expect(listed.code, listed.stderr).to.equal(0);
      const keys = listed.stdout.trim().split('\n').map((line) => line.slice(31));
      expect(keys).to.deep.equal([...ACME_PATHS].sort());
    });

    it('copies one file byte for byte', async function () {
      requireTool(this, 'aws');
      const target = join(work, 'aws-top.csv');
      const copied = await aws(home, acmeKey, ['s3', 'cp', 's3://data/reports/daily report.csv', target]);
      expect(copied.code, copied.stderr).to.equal(0);
      expect((await readFile(target)).equals(FILES['reports/daily report.csv']!)).to.equal(true);
    });

    it('syncs the bucket, and a second sync copies nothing', async function () {
      requireTool(this, 'aws');
      const target = join(work, 'aws-sync');
      const first = await aws(home, acmeKey, ['s3', 'sync', 's3://data', target]);
      expect(first.code, first.stderr).to.equal(0);
      expect(first.stdout.match(/download:/g)?.length).to.equal(ACME_PATHS.length);
      for (const path of ACME_PATHS) expect((await readFile(join(target, ...path.split('/')))).equals(FILES[path]!), path).to.equal(true);
      const second = await aws(home, acmeKey, ['s3', 'sync', 's3://data', target]);
      expect(second.code, second.stderr).to.equal(0);
      expect(second.stdout).to.not.include('download:');
    });

    it('gets a byte range with s3api get-object --range', async function () {
      requireTool(this, 'aws');
      const target = join(work, 'aws-range.bin');
      const got = await aws(home, acmeKey, ['s3api', 'get-object', '--bucket', 'data', '--key', 'funds/2024/b.csv', '--range', 'bytes=5-9', target]);
      expect(got.code, got.stderr).to.equal(0);
      expect(JSON.parse(got.stdout).ContentRange).to.equal(`bytes 5-9/${FILES['funds/2024/b.csv']!.length}`);
      expect((await readFile(target)).toString()).to.equal('b,22\n');
    });

    it('makes a presigned URL (aws s3 presign) that curl downloads', async function () {
      requireTool(this, 'aws');
      const presigned = await aws(home, acmeKey, ['s3', 'presign', 's3://data/funds/top.csv', '--expires-in', '300']);
      expect(presigned.code, presigned.stderr).to.equal(0);
      const fetched = await run('/usr/bin/curl', ['-sS', '-f', presigned.stdout.trim()], baseEnv(home));
      expect(fetched.code, fetched.stderr).to.equal(0);
      expect(fetched.stdout).to.equal('top\n');
    });

    it('fails with SignatureDoesNotMatch on a wrong secret', async function () {
      requireTool(this, 'aws');
      const listed = await aws(home, { accessKeyId: acmeKey.accessKeyId, secretAccessKey: `${acmeKey.secretAccessKey}x` }, ['s3', 'ls', 's3://data/']);
      expect(listed.code).to.not.equal(0);
      expect(listed.stderr).to.include('SignatureDoesNotMatch');
    });

    it('shows a second client\'s key none of the first one\'s files', async function () {
      requireTool(this, 'aws');
      const listed = await aws(home, betaKey, ['s3', 'ls', 's3://data/', '--recursive']);
      expect(listed.code, listed.stderr).to.equal(0);
      expect(listed.stdout.trim().split('\n').map((line) => line.slice(31))).to.deep.equal(['other/secret.csv']);
    });

    it('is refused a PUT with AccessDenied, and storage keeps no such blob', async function () {
      requireTool(this, 'aws');
      const local = join(work, 'upload.txt');
      await writeFile(local, 'must not land');
      const put = await aws(home, acmeKey, ['s3', 'cp', local, 's3://data/funds/upload.txt']);
      expect(put.code).to.not.equal(0);
      expect(put.stderr).to.include('AccessDenied');
      expect(await fixture.store.getProperties('funds/upload.txt')).to.equal(undefined);
    });

    it('fails with InvalidAccessKeyId once the key is revoked (clients s3-key revoke)', async function () {
      requireTool(this, 'aws');
      const doomed = await issueKey('acme');
      expect((await aws(home, doomed, ['s3', 'ls', 's3://data/'])).code).to.equal(0);
      await cli(['s3-key', 'revoke', 'acme', doomed.accessKeyId]);
      const listed = await aws(home, doomed, ['s3', 'ls', 's3://data/']);
      expect(listed.code).to.not.equal(0);
      expect(listed.stderr).to.include('InvalidAccessKeyId');
    });

    it('gets temporary credentials through credential_process = dfg credentials --aws', async function () {
      requireTool(this, 'aws');
      await writeDfgWrapper();
      const processHome = await awsHome('aws-process-home', `${pathStyle}credential_process = dfg credentials --aws\n`);
      const env = { ...awsEnv(processHome), DFG_URL: gateway.baseUrl, DFG_CLIENT_ID: 'acme', DFG_CLIENT_SECRET: acmeSecret };
      const listed = await run('/usr/bin/aws', ['--endpoint-url', gateway.baseUrl, 's3', 'ls', 's3://data/', '--recursive'], env);
      expect(listed.code, listed.stderr).to.equal(0);
      expect(listed.stdout.trim().split('\n').map((line) => line.slice(31))).to.deep.equal([...ACME_PATHS].sort());
    });
  });

  /** `dfg` on the tools' PATH: the client's command, run from source. */
  async function writeDfgWrapper(): Promise<void> {
    const bin = join(work, 'bin');
    await mkdir(bin, { recursive: true });
    const script = `#!/bin/sh\ncd '${packageRoot()}' && exec '${process.execPath}' --import tsx client/src/cli/dfg.ts "$@"\n`;
    await writeFile(join(bin, 'dfg'), script);
    await chmod(join(bin, 'dfg'), 0o755);
  }

  describe('boto3', function () {
    const python = (home: string, script: string, env: Record<string, string>): Promise<Run> => run('/usr/bin/python3', ['-c', script], { ...awsEnv(home), ...env });

    it('lists and gets with an operator key, and verifies MD5 ETags', async function () {
      requireTool(this, 'boto3');
      const home = await awsHome('boto-home', pathStyle);
      const script = `
import boto3, hashlib, json, os
from botocore.config import Config
s3 = boto3.client('s3', endpoint_url=os.environ['ENDPOINT'], config=Config(s3={'addressing_style': 'path'}))
keys = [o['Key'] for o in s3.list_objects_v2(Bucket='data')['Contents']]
got = s3.get_object(Bucket='data', Key='funds/top.csv')
body = got['Body'].read()
print(json.dumps({'keys': keys, 'body': body.decode(), 'etag': got['ETag'], 'md5': hashlib.md5(body).hexdigest()}))
`;
      const result = await python(home, script, { ENDPOINT: gateway.baseUrl, AWS_ACCESS_KEY_ID: acmeKey.accessKeyId, AWS_SECRET_ACCESS_KEY: acmeKey.secretAccessKey });
      expect(result.code, result.stderr).to.equal(0);
      const answer = JSON.parse(result.stdout) as { keys: string[]; body: string; etag: string; md5: string };
      expect(answer.keys).to.deep.equal([...ACME_PATHS].sort());
      expect(answer.body).to.equal('top\n');
      expect(answer.etag).to.equal(`"${answer.md5}"`);
    });

    it('refreshes its credentials from credential_process = dfg credentials --aws', async function () {
      requireTool(this, 'boto3');
      await writeDfgWrapper();
      const home = await awsHome('boto-process-home', `${pathStyle}credential_process = dfg credentials --aws\n`);
      const script = `
import boto3, os
from botocore.config import Config
s3 = boto3.Session().client('s3', endpoint_url=os.environ['ENDPOINT'], config=Config(s3={'addressing_style': 'path'}))
print(s3.get_object(Bucket='data', Key='funds/top.csv')['Body'].read().decode(), end='')
`;
      const result = await python(home, script, { ENDPOINT: gateway.baseUrl, DFG_URL: gateway.baseUrl, DFG_CLIENT_ID: 'acme', DFG_CLIENT_SECRET: acmeSecret });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.equal('top\n');
    });
  });

  describe('rclone', function () {
    /** A remote `gw` from environment variables; rclone 1.60 refuses to start with AWS_CA_BUNDLE set and a plain-HTTP endpoint: never set here. */
    const rcloneEnv = async (name: string, auth: Record<string, string>): Promise<Record<string, string>> => {
      const home = join(work, name);
      await mkdir(home, { recursive: true });
      return {
        ...baseEnv(home),
        RCLONE_CONFIG: join(home, 'rclone.conf'),
        RCLONE_CONFIG_GW_TYPE: 's3',
        RCLONE_CONFIG_GW_PROVIDER: 'Other',
        RCLONE_CONFIG_GW_ENDPOINT: gateway.baseUrl,
        RCLONE_CONFIG_GW_FORCE_PATH_STYLE: 'true',
        RCLONE_CONFIG_GW_REGION: 'us-east-1',
        ...auth,
      };
    };

    it('copies a folder, then rclone check finds every file identical (sizes and MD5s)', async function () {
      requireTool(this, 'rclone');
      const env = await rcloneEnv('rclone-home', { RCLONE_CONFIG_GW_ACCESS_KEY_ID: acmeKey.accessKeyId, RCLONE_CONFIG_GW_SECRET_ACCESS_KEY: acmeKey.secretAccessKey });
      const target = join(work, 'rclone-copy');
      const copied = await run('/usr/bin/rclone', ['copy', 'gw:data/funds', target], env);
      expect(copied.code, copied.stderr).to.equal(0);
      expect((await readdir(target, { recursive: true })).filter((name) => name.endsWith('.csv')).sort()).to.deep.equal(['2024/a.csv', '2024/b.csv', 'top.csv']);
      const checked = await run('/usr/bin/rclone', ['check', 'gw:data/funds', target], env);
      expect(checked.code, checked.stderr).to.equal(0);
      expect(checked.stderr).to.match(/0 differences found/);
      expect(checked.stderr).to.not.match(/hashes could not be checked/);
    });

    it('uses temporary credentials from credential_process = dfg credentials --aws (env_auth)', async function () {
      requireTool(this, 'rclone');
      await writeDfgWrapper();
      const processHome = await awsHome('rclone-process-home', `[profile gateway]\ncredential_process = dfg credentials --aws\n`);
      const env = {
        ...(await rcloneEnv('rclone-process-home', { RCLONE_CONFIG_GW_ENV_AUTH: 'true' })),
        HOME: processHome,
        AWS_CONFIG_FILE: join(processHome, '.aws', 'config'),
        AWS_PROFILE: 'gateway',
        AWS_SDK_LOAD_CONFIG: '1',
        DFG_URL: gateway.baseUrl,
        DFG_CLIENT_ID: 'acme',
        DFG_CLIENT_SECRET: acmeSecret,
      };
      const listed = await run('/usr/bin/rclone', ['lsf', '--recursive', '--files-only', 'gw:data'], env);
      expect(listed.code, listed.stderr).to.equal(0);
      expect(listed.stdout.trim().split('\n')).to.deep.equal([...ACME_PATHS].sort());
    });
  });

  describe('s3cmd', function () {
    it('lists the bucket and gets a file', async function () {
      requireTool(this, 's3cmd');
      const home = join(work, 's3cmd-home');
      await mkdir(home, { recursive: true });
      const host = `127.0.0.1:${gateway.port}`;
      const common = ['--config=/dev/null', `--host=${host}`, `--host-bucket=${host}`, '--no-ssl', `--access_key=${acmeKey.accessKeyId}`, `--secret_key=${acmeKey.secretAccessKey}`, '--region=us-east-1'];
      const listed = await run('/usr/bin/s3cmd', [...common, 'ls', '--recursive', 's3://data/'], baseEnv(home));
      expect(listed.code, listed.stderr).to.equal(0);
      expect(listed.stdout.trim().split('\n').map((line) => line.replace(/^.* s3:\/\/data\//, ''))).to.deep.equal([...ACME_PATHS].sort());
      const target = join(work, 's3cmd-top.csv');
      const got = await run('/usr/bin/s3cmd', [...common, 'get', 's3://data/funds/top.csv', target], baseEnv(home));
      expect(got.code, got.stderr).to.equal(0);
      expect(await readFile(target, 'utf8')).to.equal('top\n');
    });
  });

  describe('@aws-sdk/client-s3', function () {
    it('lists and gets with MD5 ETags from Azure Blob storage', async function () {
      const client = new S3Client({ endpoint: gateway.baseUrl, region: 'us-east-1', forcePathStyle: true, credentials: acmeKey, maxAttempts: 1 });
      try {
        const listed = await client.send(new ListObjectsV2Command({ Bucket: 'data' }));
        expect(listed.Contents?.map((object) => object.Key)).to.deep.equal([...ACME_PATHS].sort());
        const b = listed.Contents?.find((object) => object.Key === 'funds/2024/b.csv');
        expect(b?.ETag).to.equal(`"${md5(FILES['funds/2024/b.csv']!)}"`);
        const got = await client.send(new GetObjectCommand({ Bucket: 'data', Key: 'funds/2024/b.csv' }));
        expect(Buffer.from((await got.Body?.transformToByteArray()) ?? []).equals(FILES['funds/2024/b.csv']!)).to.equal(true);
      } finally {
        client.destroy();
      }
    });
  });
});
