import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { JoseSigner } from '../../src/adapters/signing/jose-signer.js';
import { FileWebhookRegistry } from '../../src/adapters/webhooks/file-webhook-registry.js';
import { runClientsCli } from '../../src/app/clients-command.js';

const signingKey = 'cli-webhook-test-signing-key-of-32-bytes-or-more';

describe('clients webhook add|list|remove (the operator CLI)', function () {
  let dir: string;
  let env: Record<string, string>;

  const run = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    let stdout = '';
    let stderr = '';
    const code = await runClientsCli(args, {
      env,
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    });
    return { code, stdout, stderr };
  };

  beforeEach(async function () {
    dir = await mkdtemp(join(tmpdir(), 'dfg-webhook-cli-'));
    env = { CLIENTS_FILE: join(dir, 'clients.json'), DATA_DIR: dir, TOKEN_SIGNING_KEY: signingKey, WEBHOOK_ALLOW_PRIVATE: 'on' };
    expect((await run('add', 'acme')).code).to.equal(0);
  });

  afterEach(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  it('adds an endpoint beside CLIENTS_FILE, printing its id and its secret (the signer\'s, derived from TOKEN_SIGNING_KEY), then lists and removes it', async function () {
    const added = await run('webhook', 'add', 'acme', 'http://127.0.0.1:9/hook');
    expect(added.code, added.stderr).to.equal(0);
    const id = /^id: (wh_[a-z2-7]{26})$/m.exec(added.stdout)?.[1] ?? '';
    const secret = /^secret: (whsec_\S+)$/m.exec(added.stdout)?.[1];
    const signer = new JoseSigner({ rootKey: new TextEncoder().encode(signingKey), clock: { now: () => new Date() } });
    expect(secret).to.equal(signer.webhookSecret(id));
    expect(added.stderr).to.match(/not be shown again/);

    const stored = await new FileWebhookRegistry(join(dir, 'webhooks.json')).list('acme');
    expect(stored.map((endpoint) => endpoint.id)).to.deep.equal([id]);

    const listed = await run('webhook', 'list', 'acme', '--json');
    expect(JSON.parse(listed.stdout)).to.have.length(1);
    expect((JSON.parse(listed.stdout) as Array<Record<string, unknown>>)[0]).to.include({ id, url: 'http://127.0.0.1:9/hook', enabled: true, disabledReason: null });
    expect(listed.stdout).to.not.match(/whsec_/);

    expect((await run('webhook', 'remove', 'acme', id)).stdout).to.match(/removed: true/);
    expect(JSON.parse((await run('webhook', 'list', 'acme', '--json')).stdout)).to.deep.equal([]);
  });

  it('lists a disabled endpoint as disabled, with why, when, and no next attempt', async function () {
    const id = /^id: (\S+)$/m.exec((await run('webhook', 'add', 'acme', 'http://127.0.0.1:9/hook')).stdout)?.[1] ?? '';
    await new FileWebhookRegistry(join(dir, 'webhooks.json')).update('acme', id, {
      delivery: { delivered: 0, attempts: 1 },
      disabled: { reason: 'gone', at: new Date('2026-05-01T00:00:00Z'), detail: 'the endpoint answered 410 Gone to the change at position 1' },
    });
    const listed = (await run('webhook', 'list', 'acme')).stdout;
    expect(listed).to.match(new RegExp(`^${id}  disabled \\(gone: the endpoint answered 410 Gone`, 'm'));
    expect(listed).to.match(/^ {2}1 failed attempt; disabled at 2026-05-01T00:00:00\.000Z: never tried again \(remove it and add it again to resume\)$/m);
    expect(listed).to.not.match(/next at/);
    const [json] = JSON.parse((await run('webhook', 'list', 'acme', '--json')).stdout) as Array<Record<string, unknown>>;
    expect(json).to.include({ enabled: false, disabledReason: 'gone', disabledAt: '2026-05-01T00:00:00.000Z', nextAttemptAt: null });
  });

  it('lists an enabled endpoint with failed attempts with its next attempt', async function () {
    const id = /^id: (\S+)$/m.exec((await run('webhook', 'add', 'acme', 'http://127.0.0.1:9/hook')).stdout)?.[1] ?? '';
    await new FileWebhookRegistry(join(dir, 'webhooks.json')).update('acme', id, {
      delivery: { delivered: 0, attempts: 2, nextAttemptAt: new Date('2026-05-01T00:05:00Z') },
    });
    expect((await run('webhook', 'list', 'acme')).stdout).to.match(/^ {2}2 failed attempts, next at 2026-05-01T00:05:00\.000Z$/m);
  });

  it('refuses (exit 1, "no client") to list or remove the endpoints of an unknown client, printing nothing on stdout', async function () {
    for (const args of [['list', 'nosuch'], ['list', 'nosuch', '--json'], ['remove', 'nosuch', 'wh_aaaaaaaaaaaaaaaaaaaaaaaaaa']]) {
      const refused = await run('webhook', ...args);
      expect(refused.code, args.join(' ')).to.equal(1);
      expect(refused.stderr, args.join(' ')).to.match(/no client "nosuch"/);
      expect(refused.stdout, args.join(' ')).to.equal('');
    }
  });

  it('refuses (exit 1) an http URL without WEBHOOK_ALLOW_PRIVATE, an unknown client, and an unknown endpoint', async function () {
    delete env['WEBHOOK_ALLOW_PRIVATE'];
    const refused = await run('webhook', 'add', 'acme', 'http://hooks.example.com/');
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(/must use https/);
    expect((await run('webhook', 'add', 'nobody', 'https://hooks.example.com/')).code).to.equal(1);
    const missing = await run('webhook', 'remove', 'acme', 'wh_aaaaaaaaaaaaaaaaaaaaaaaaaa');
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.match(/No webhook endpoint/);
  });
});
