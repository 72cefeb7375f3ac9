import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonClientRegistry } from '../../src/adapters/clients/json-client-registry.js';
import { verifySecret } from '../../src/adapters/clients/secret-hash.js';
import { runClientsCli } from '../../src/app/clients-command.js';

interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** The `key: value` lines of stdout. */
  readonly fields: Readonly<Record<string, string>>;
}

function parseFields(stdout: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const match = /^([a-z_]+): (.*)$/.exec(line);
    if (match) fields[match[1] as string] = match[2] as string;
  }
  return fields;
}

describe('clients CLI (runClientsCli)', () => {
  let dir: string;
  let clientsFile: string;
  let clock: Date;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'clients-cli-'));
    clientsFile = join(dir, 'clients.json');
    clock = new Date('2024-03-01T12:00:00.000Z');
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function run(args: string[], env: Record<string, string | undefined> = { CLIENTS_FILE: clientsFile }): Promise<CliRun> {
    let stdout = '';
    let stderr = '';
    const code = await runClientsCli(args, {
      env,
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      now: () => clock,
    });
    return { code, stdout, stderr, fields: parseFields(stdout) };
  }

  const stored = async (clientId: string) => (await new JsonClientRegistry(clientsFile).load()).clients[clientId];

  describe('add <client_id>', () => {
    describe('without --secret', () => {
      it('prints client_id, index_path and a generated client_secret that verifies against the stored hash', async () => {
        const result = await run(['add', 'acme']);
        expect(result.code).to.equal(0);
        expect(result.fields).to.deep.equal({
          client_id: 'acme',
          index_path: 'indexes/acme.csv',
          client_secret: result.fields['client_secret'],
        });
        const secret = result.fields['client_secret'] ?? '';
        expect(secret).to.match(/^[A-Za-z0-9_-]{43}$/);
        const client = await stored('acme');
        expect(client).to.deep.include({
          indexPath: 'indexes/acme.csv',
          enabled: true,
          createdAt: '2024-03-01T12:00:00.000Z',
          updatedAt: '2024-03-01T12:00:00.000Z',
        });
        expect(await verifySecret(secret, client?.secretHash ?? '')).to.equal(true);
        expect(result.stderr).to.include('will not be shown again');
      });

      it('stores only the hash, never the secret', async () => {
        const result = await run(['add', 'acme']);
        const text = await readFile(clientsFile, 'utf8');
        expect(text).to.not.include(result.fields['client_secret']);
      });

      it('makes the client findable by the registry the gateway uses', async () => {
        await run(['add', 'acme', '--index', 'subscribers/acme/index.csv']);
        expect(await new JsonClientRegistry(clientsFile).find('acme')).to.deep.include({
          clientId: 'acme',
          indexPath: 'subscribers/acme/index.csv',
          enabled: true,
        });
      });
    });

    describe('with --secret (an imported secret)', () => {
      it('stores a hash that verifies the imported secret and does not echo it', async () => {
        const imported = 'Legacy-Vendor-Secret_0123456789!';
        const result = await run(['add', 'acme', '--secret', imported]);
        expect(result.code).to.equal(0);
        expect(result.fields).to.deep.equal({ client_id: 'acme', index_path: 'indexes/acme.csv' });
        expect(result.stdout + result.stderr).to.not.include(imported);
        expect(await verifySecret(imported, (await stored('acme'))?.secretHash ?? '')).to.equal(true);
      });

      for (const [name, secret] of [
        ['shorter than 16 characters', 'short-secret'],
        ['containing a space', 'has a space in it, long enough'],
        ['containing a non-ASCII character', 'segredo-com-acentuação-1'],
        ['longer than 512 characters', 'x'.repeat(513)],
      ] as const) {
        it(`refuses a secret ${name} with exit 2 and does not print it`, async () => {
          const result = await run(['add', 'acme', '--secret', secret]);
          expect(result.code).to.equal(2);
          expect(result.stderr).to.include('the imported secret must be 16 to 512 printable ASCII characters');
          expect(result.stderr).to.not.include(secret);
          expect(await stored('acme')).to.equal(undefined);
        });
      }
    });

    it('refuses an id that already exists with exit 1 and keeps the first secret', async () => {
      await run(['add', 'acme']);
      const before = await stored('acme');
      const result = await run(['add', 'acme']);
      expect(result.code).to.equal(1);
      expect(result.stderr).to.include('client "acme" already exists').and.to.include(clientsFile);
      expect(result.stdout).to.equal('');
      expect(await stored('acme')).to.deep.equal(before);
    });

    for (const id of ['.hidden', 'a/b', 'x'.repeat(65), 'açme']) {
      it(`refuses the invalid id ${JSON.stringify(id.length > 20 ? `${id.slice(0, 10)}...` : id)} with exit 2`, async () => {
        const result = await run(['add', id]);
        expect(result.code).to.equal(2);
        expect(result.stderr).to.include('invalid client id');
        expect(result.stdout).to.equal('');
      });
    }

    for (const index of ['/etc/passwd', '../other/index.csv', 'indexes//a.csv', 'indexes\\a.csv', 'indexes/...', 'a\u0000.csv']) {
      it(`refuses the index path ${JSON.stringify(index)} with exit 2`, async () => {
        const result = await run(['add', 'acme', '--index', index]);
        expect(result.code).to.equal(2);
        expect(result.stderr).to.include('invalid --index');
      });
    }

    // The same rule as every storage path the gateway serves: a "%" can never be read back, so a
    // client registered with it would get 400 on every request, blamed on the subscriber.
    it('refuses the index path "indexes/100%.csv" with exit 2, saying why, and registers nothing', async () => {
      const result = await run(['add', 'acme', '--index', 'indexes/100%.csv']);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('invalid --index "indexes/100%.csv"');
      expect(result.stderr).to.include('"%"');
      expect(result.stdout).to.equal('');
      expect((await run(['list', '--json'])).stdout.trim()).to.equal('[]');
    });
  });

  describe('list', () => {
    beforeEach(async () => {
      await run(['add', 'zeta']);
      clock = new Date('2024-03-02T08:30:00.000Z');
      await run(['add', 'acme', '--index', 'custom/acme.csv']);
      await run(['disable', 'zeta']);
    });

    it('prints a table of client_id, enabled, index path, term, quota and updatedAt, sorted by id', async () => {
      await run(['set', 'acme', '--valid-until', '2025-01-01', '--monthly-bytes', '10GiB']);
      const result = await run(['list']);
      expect(result.code).to.equal(0);
      expect(result.stdout.trimEnd().split('\n')).to.deep.equal([
        'CLIENT_ID  ENABLED  INDEX_PATH        VALID_FROM  VALID_UNTIL               MONTHLY_BYTES  UPDATED_AT',
        'acme       true     custom/acme.csv   -           2025-01-01T00:00:00.000Z  10 GiB         2024-03-02T08:30:00.000Z',
        'zeta       false    indexes/zeta.csv  -           -                         -              2024-03-02T08:30:00.000Z',
      ]);
    });

    it('prints a JSON array with --json', async () => {
      const result = await run(['list', '--json']);
      expect(result.code).to.equal(0);
      expect(JSON.parse(result.stdout)).to.deep.equal([
        { clientId: 'acme', enabled: true, indexPath: 'custom/acme.csv', createdAt: '2024-03-02T08:30:00.000Z', updatedAt: '2024-03-02T08:30:00.000Z', validFrom: null, validUntil: null, monthlyBytes: null },
        { clientId: 'zeta', enabled: false, indexPath: 'indexes/zeta.csv', createdAt: '2024-03-01T12:00:00.000Z', updatedAt: '2024-03-02T08:30:00.000Z', validFrom: null, validUntil: null, monthlyBytes: null },
      ]);
    });

    it('never shows a secret or a hash', async () => {
      const registry = await new JsonClientRegistry(clientsFile).load();
      for (const args of [['list'], ['list', '--json']]) {
        const result = await run(args);
        expect(result.stdout).to.not.match(/scrypt|secret/i);
        for (const client of Object.values(registry.clients)) {
          expect(result.stdout).to.not.include(client.secretHash.split('$')[5]);
        }
      }
    });

    it('prints only the header, or [], when there is no registry file yet', async () => {
      await rm(clientsFile);
      expect((await run(['list'])).stdout).to.equal('CLIENT_ID  ENABLED  INDEX_PATH  VALID_FROM  VALID_UNTIL  MONTHLY_BYTES  UPDATED_AT\n');
      expect(JSON.parse((await run(['list', '--json'])).stdout)).to.deep.equal([]);
    });
  });

  describe('the subscription term and monthly quota (add and set)', () => {
    it('add stores --valid-from, --valid-until (UTC) and --monthly-bytes in bytes, and prints them', async () => {
      const result = await run(['add', 'acme', '--valid-from', '2026-11-01', '--valid-until', '2027-10-31T21:00:00-03:00', '--monthly-bytes', '500GiB']);
      expect(result.code).to.equal(0);
      expect(result.fields).to.deep.include({
        valid_from: '2026-11-01T00:00:00.000Z',
        valid_until: '2027-11-01T00:00:00.000Z',
        monthly_bytes: '536870912000 (500 GiB)',
      });
      expect(await stored('acme')).to.deep.include({
        validFrom: '2026-11-01T00:00:00.000Z',
        validUntil: '2027-11-01T00:00:00.000Z',
        monthlyBytes: 536870912000,
      });
      expect(await new JsonClientRegistry(clientsFile).find('acme')).to.deep.include({
        validFrom: new Date('2026-11-01T00:00:00.000Z'),
        validUntil: new Date('2027-11-01T00:00:00.000Z'),
        monthlyBytes: 536870912000,
      });
    });

    it('set changes one bound of an existing client, keeps the others, and stamps updatedAt', async () => {
      await run(['add', 'acme', '--valid-from', '2026-11-01', '--monthly-bytes', '1MiB']);
      clock = new Date('2024-05-01T00:00:00.000Z');
      const result = await run(['set', 'acme', '--valid-until', '2027-01-01T00:00:00Z']);
      expect(result.code).to.equal(0);
      expect(result.fields).to.deep.equal({
        client_id: 'acme',
        valid_from: '2026-11-01T00:00:00.000Z',
        valid_until: '2027-01-01T00:00:00.000Z',
        monthly_bytes: '1048576 (1 MiB)',
      });
      expect(await stored('acme')).to.deep.include({ validUntil: '2027-01-01T00:00:00.000Z', monthlyBytes: 1048576, updatedAt: '2024-05-01T00:00:00.000Z' });
    });

    it('set with none clears a bound or the quota', async () => {
      await run(['add', 'acme', '--valid-until', '2027-01-01', '--monthly-bytes', '1MiB']);
      const result = await run(['set', 'acme', '--valid-until', 'none', '--monthly-bytes', 'none']);
      expect(result.code).to.equal(0);
      expect(result.fields).to.deep.include({ valid_until: 'none', monthly_bytes: 'none' });
      const client = await stored('acme');
      expect(client).to.not.have.property('validUntil');
      expect(client).to.not.have.property('monthlyBytes');
    });

    for (const [flag, value] of [
      ['--valid-from', '2026-13-01'],
      ['--valid-until', 'tomorrow'],
      ['--monthly-bytes', '10GB'],
      ['--monthly-bytes', '-5'],
    ] as const) {
      it(`refuses ${flag} ${value} with exit 2, naming the flag, and changes nothing`, async () => {
        await run(['add', 'acme']);
        const before = await stored('acme');
        const result = await run(['set', 'acme', flag, value]);
        expect(result.code).to.equal(2);
        expect(result.stderr).to.include(flag);
        expect(await stored('acme')).to.deep.equal(before);
        const added = await run(['add', 'beta', flag, value]);
        expect(added.code).to.equal(2);
        expect(added.stderr).to.include(flag);
        expect(await stored('beta')).to.equal(undefined);
      });
    }

    it('refuses a term that ends before it starts with exit 2', async () => {
      await run(['add', 'acme', '--valid-from', '2027-01-01']);
      const result = await run(['set', 'acme', '--valid-until', '2026-12-31']);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('must come after --valid-from');
      expect(await stored('acme')).to.not.have.property('validUntil');
    });

    it('set without a flag is a usage error', async () => {
      await run(['add', 'acme']);
      expect((await run(['set', 'acme'])).code).to.equal(2);
    });

    it('set of an unknown client exits 1', async () => {
      expect((await run(['set', 'nobody', '--monthly-bytes', '1GiB'])).code).to.equal(1);
    });
  });

  describe('rotate <client_id>', () => {
    it('stores a new hash, prints the new secret once, and the old secret no longer verifies', async () => {
      const added = await run(['add', 'acme']);
      const before = await stored('acme');
      clock = new Date('2024-04-01T00:00:00.000Z');
      const result = await run(['rotate', 'acme']);
      expect(result.code).to.equal(0);
      const secret = result.fields['client_secret'] ?? '';
      expect(result.fields).to.deep.equal({ client_id: 'acme', client_secret: secret });
      expect(secret).to.match(/^[A-Za-z0-9_-]{43}$/).and.to.not.equal(added.fields['client_secret']);
      const after = await stored('acme');
      expect(after?.secretHash).to.not.equal(before?.secretHash);
      expect(await verifySecret(secret, after?.secretHash ?? '')).to.equal(true);
      expect(await verifySecret(added.fields['client_secret'] ?? '', after?.secretHash ?? '')).to.equal(false);
      expect(after).to.deep.include({ createdAt: before?.createdAt, updatedAt: '2024-04-01T00:00:00.000Z' });
      expect(result.stderr).to.include('no longer accepted').and.to.include('within CLIENTS_FILE_RECHECK_SECONDS');
    });

    it('imports a secret with --secret without printing it', async () => {
      await run(['add', 'acme']);
      const imported = 'Rotated-Imported-Secret-42';
      const result = await run(['rotate', 'acme', '--secret', imported]);
      expect(result.code).to.equal(0);
      expect(result.fields).to.deep.equal({ client_id: 'acme' });
      expect(result.stdout + result.stderr).to.not.include(imported);
      expect(await verifySecret(imported, (await stored('acme'))?.secretHash ?? '')).to.equal(true);
    });
  });

  describe('disable, enable and remove', () => {
    it('disable turns enabled off and enable turns it back on', async () => {
      await run(['add', 'acme']);
      const disabled = await run(['disable', 'acme']);
      expect(disabled.code).to.equal(0);
      expect(disabled.fields).to.deep.equal({ client_id: 'acme', enabled: 'false' });
      // Not "at once": a running gateway looks at the file again once CLIENTS_FILE_RECHECK_SECONDS have passed.
      expect(disabled.stderr).to.include('within CLIENTS_FILE_RECHECK_SECONDS').and.to.not.include('at once');
      expect((await new JsonClientRegistry(clientsFile).find('acme'))?.enabled).to.equal(false);

      const enabled = await run(['enable', 'acme']);
      expect(enabled.code).to.equal(0);
      expect(enabled.fields).to.deep.equal({ client_id: 'acme', enabled: 'true' });
      expect((await new JsonClientRegistry(clientsFile).find('acme'))?.enabled).to.equal(true);
    });

    it('disabling a disabled client succeeds and leaves updatedAt alone', async () => {
      await run(['add', 'acme']);
      await run(['disable', 'acme']);
      clock = new Date('2025-01-01T00:00:00.000Z');
      const again = await run(['disable', 'acme']);
      expect(again.code).to.equal(0);
      expect((await stored('acme'))?.updatedAt).to.equal('2024-03-01T12:00:00.000Z');
    });

    it('remove deletes the client and keeps the others', async () => {
      await run(['add', 'acme']);
      await run(['add', 'beta']);
      const result = await run(['remove', 'acme']);
      expect(result.code).to.equal(0);
      expect(result.fields).to.deep.equal({ client_id: 'acme', removed: 'true' });
      expect(result.stderr).to.include('within CLIENTS_FILE_RECHECK_SECONDS');
      const registry = new JsonClientRegistry(clientsFile);
      expect(await registry.find('acme')).to.equal(undefined);
      expect(await registry.find('beta')).to.not.equal(undefined);
    });
  });

  describe('when the client does not exist', () => {
    for (const command of ['rotate', 'disable', 'enable', 'remove']) {
      it(`${command} exits 1 with a message naming the client and the file`, async () => {
        await run(['add', 'acme']);
        const result = await run([command, 'nobody']);
        expect(result.code).to.equal(1);
        expect(result.stdout).to.equal('');
        expect(result.stderr).to.include('no client "nobody"').and.to.include(clientsFile);
      });
    }

    it('does not match names of Object.prototype', async () => {
      await run(['add', 'acme']);
      expect((await run(['remove', 'constructor'])).code).to.equal(1);
    });
  });

  describe('when CLIENTS_FILE is not set', () => {
    for (const env of [{}, { CLIENTS_FILE: '' }]) {
      it(`exits 2 with "CLIENTS_FILE is not set" (${JSON.stringify(env)})`, async () => {
        const result = await run(['list'], env);
        expect(result.code).to.equal(2);
        expect(result.stderr).to.match(/^error: CLIENTS_FILE is not set: /);
      });
    }
  });

  describe('when the registry file is malformed', () => {
    it('exits 1 naming the file and leaves the file untouched', async () => {
      const { writeFile } = await import('node:fs/promises');
      await writeFile(clientsFile, '{ broken');
      const result = await run(['add', 'acme']);
      expect(result.code).to.equal(1);
      expect(result.stderr).to.include(clientsFile).and.to.include('not valid JSON');
      expect(await readFile(clientsFile, 'utf8')).to.equal('{ broken');
    });
  });

  describe('usage', () => {
    it('exits 2 for an unknown command', async () => {
      const result = await run(['bogus']);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include("unknown command 'bogus'");
    });

    it('exits 2 for a missing argument', async () => {
      const result = await run(['rotate']);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include("missing required argument 'client_id'");
    });

    it('exits 0 for --help, printing the commands, even without CLIENTS_FILE', async () => {
      const result = await run(['--help'], {});
      expect(result.code).to.equal(0);
      for (const command of ['add', 'list', 'rotate', 'disable', 'enable', 'remove']) {
        expect(result.stdout).to.include(command);
      }
    });
  });
  describe('s3-key add|list|revoke', () => {
    const signingKey = 'test-signing-key-of-at-least-32-bytes!!';
    const withKey = (): Record<string, string> => ({ CLIENTS_FILE: clientsFile, TOKEN_SIGNING_KEY: signingKey });

    it('add prints access_key_id and the secret_access_key derived from TOKEN_SIGNING_KEY, and stores only the id', async () => {
      await run(['add', 'acme']);
      const result = await run(['s3-key', 'add', 'acme'], withKey());
      expect(result.code).to.equal(0);
      const accessKeyId = result.fields['access_key_id'] ?? '';
      expect(accessKeyId).to.match(/^DFGK[A-Z2-7]{16}$/);
      // The formula every issued key was made with: HMAC-SHA-256 of the labelled id under the key itself.
      const expected = createHmac('sha256', signingKey).update(`dfg-s3-secret-access-key\0${accessKeyId}`, 'utf8').digest('base64url');
      expect(result.fields['secret_access_key']).to.equal(expected);
      expect(result.stderr).to.include('will not be shown again');
      const text = await readFile(clientsFile, 'utf8');
      expect(text).to.include(accessKeyId);
      expect(text).to.not.include(result.fields['secret_access_key'] ?? 'missing');
      expect((await stored('acme'))?.accessKeys).to.deep.equal({ [accessKeyId]: { createdAt: '2024-03-01T12:00:00.000Z' } });
    });

    it('list --json gives the key ids and when they were made; revoke removes one', async () => {
      await run(['add', 'acme']);
      const first = (await run(['s3-key', 'add', 'acme'], withKey())).fields['access_key_id'];
      clock = new Date('2024-03-02T12:00:00.000Z');
      const second = (await run(['s3-key', 'add', 'acme'], withKey())).fields['access_key_id'];
      const listed = await run(['s3-key', 'list', 'acme', '--json']);
      expect(JSON.parse(listed.stdout)).to.deep.equal([
        { accessKeyId: first, createdAt: '2024-03-01T12:00:00.000Z' },
        { accessKeyId: second, createdAt: '2024-03-02T12:00:00.000Z' },
      ]);
      const revoked = await run(['s3-key', 'revoke', 'acme', first ?? '']);
      expect(revoked.fields).to.deep.equal({ client_id: 'acme', access_key_id: first, revoked: 'true' });
      expect(Object.keys((await stored('acme'))?.accessKeys ?? {})).to.deep.equal([second]);
    });

    it('revoke of a key the client does not have exits 1 and changes nothing', async () => {
      await run(['add', 'acme']);
      const before = await readFile(clientsFile, 'utf8');
      const result = await run(['s3-key', 'revoke', 'acme', 'DFGKAAAAAAAAAAAAAAAA']);
      expect(result.code).to.equal(1);
      expect(result.stderr).to.include('has no access key DFGKAAAAAAAAAAAAAAAA');
      expect(await readFile(clientsFile, 'utf8')).to.equal(before);
    });

    it('add without TOKEN_SIGNING_KEY exits 2 and names the variable', async () => {
      await run(['add', 'acme']);
      const result = await run(['s3-key', 'add', 'acme']);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('TOKEN_SIGNING_KEY is not set');
      expect((await stored('acme'))?.accessKeys).to.equal(undefined);
    });
  });
});
