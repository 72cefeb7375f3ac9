import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { NodeWebhookSender } from '../../src/adapters/webhooks/node-webhook-sender.js';
import { isPublicAddress } from '../../src/adapters/webhooks/public-address.js';
import { WebhookTargetPolicy, webhookUrlProblem } from '../../src/adapters/webhooks/webhook-targets.js';
import { HandClock } from '../contract/signer-contract.js';
import { startReceiver } from './receiver.js';

const clock = new HandClock(new Date('2026-05-01T10:00:00.000Z'));

describe('where webhooks may be sent (the SSRF guard)', function () {
  describe('isPublicAddress', function () {
    const refused = [
      ['0.0.0.0', 'this network'],
      ['10.1.2.3', 'private'],
      ['100.64.0.1', 'carrier-grade NAT'],
      ['100.127.255.254', 'carrier-grade NAT'],
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['169.254.169.254', 'cloud metadata (link-local)'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.0.2.10', 'documentation'],
      ['192.168.1.1', 'private'],
      ['198.18.0.1', 'benchmarking'],
      ['224.0.0.1', 'multicast'],
      ['255.255.255.255', 'broadcast'],
      ['::', 'unspecified'],
      ['::1', 'loopback'],
      ['[::1]', 'loopback in brackets'],
      ['fe80::1', 'link-local'],
      ['fe80::1%eth0', 'link-local with a zone'],
      ['fc00::1', 'unique-local'],
      ['fd12:3456:789a::1', 'unique-local'],
      ['ff02::1', 'multicast'],
      ['2001:db8::1', 'documentation'],
      ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
      ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
      ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
      ['::ffff:10.0.0.1', 'IPv4-mapped private'],
      ['0:0:0:0:0:ffff:c0a8:0101', 'IPv4-mapped private, written out'],
      ['64:ff9b::a00:1', 'NAT64 of a private address'],
      ['2002:a00:1::1', '6to4 of a private address'],
      ['::127.0.0.1', 'IPv4-compatible'],
      ['localhost', 'not an address at all'],
    ] as const;
    for (const [address, why] of refused) {
      it(`refuses ${address} (${why})`, function () {
        expect(isPublicAddress(address)).to.equal(false);
      });
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']) {
      it(`accepts the public address ${address}`, function () {
        expect(isPublicAddress(address)).to.equal(true);
      });
    }
  });

  describe('webhookUrlProblem (without the network)', function () {
    it('accepts an https URL to a name or a public address', function () {
      expect(webhookUrlProblem('https://hooks.example.com/dfg?x=1', false)).to.equal(undefined);
      expect(webhookUrlProblem('https://8.8.8.8:8443/hook', false)).to.equal(undefined);
      expect(webhookUrlProblem('https://[2606:4700:4700::1111]/hook', false)).to.equal(undefined);
    });

    for (const [url, problem] of [
      ['http://hooks.example.com/', /https/],
      ['ftp://hooks.example.com/', /https/],
      ['hooks.example.com/x', /absolute/],
      ['https://user:pass@hooks.example.com/', /credentials/],
      ['https://hooks.example.com/#frag', /fragment/],
      ['https://127.0.0.1/', /not a public address/],
      ['https://[::1]/', /not a public address/],
      ['https://[::ffff:169.254.169.254]/', /not a public address/],
      ['https://0x7f000001/', /not a public address/],
      ['https://2130706433/', /not a public address/],
      [`https://hooks.example.com/${'a'.repeat(2100)}`, /longer/],
    ] as const) {
      it(`refuses ${url.slice(0, 60)}`, function () {
        expect(webhookUrlProblem(url, false)).to.match(problem);
      });
    }

    it('lets http and private addresses through with WEBHOOK_ALLOW_PRIVATE=on', function () {
      expect(webhookUrlProblem('http://127.0.0.1:8080/hook', true)).to.equal(undefined);
      expect(webhookUrlProblem('ftp://127.0.0.1/', true)).to.match(/https/);
    });
  });

  describe('WebhookTargetPolicy (at registration)', function () {
    it('refuses a name that resolves to any address that is not public, and one that does not resolve', async function () {
      const resolve = async (host: string): Promise<readonly string[]> => {
        if (host === 'public.example') return ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'];
        if (host === 'mixed.example') return ['93.184.215.14', '10.0.0.5'];
        throw new Error('ENOTFOUND');
      };
      const policy = new WebhookTargetPolicy({ allowPrivate: false, resolve });
      expect(await policy.problem('https://public.example/hook')).to.equal(undefined);
      expect(await policy.problem('https://mixed.example/hook')).to.match(/resolves to 10\.0\.0\.5/);
      expect(await policy.problem('https://nowhere.example/hook')).to.match(/does not resolve/);
    });

    it('refuses localhost by what it resolves to', async function () {
      expect(await new WebhookTargetPolicy({ allowPrivate: false }).problem('https://localhost/hook')).to.match(/not a public address/);
    });
  });

  describe('NodeWebhookSender (at delivery)', function () {
    const request = (url: string) => ({ url, headers: { 'webhook-id': 'chg_000000000001' }, body: '{}' });

    it('never connects to a loopback receiver without WEBHOOK_ALLOW_PRIVATE, whether named by address or by a name that resolves there', async function () {
      const hook = await startReceiver();
      try {
        const sender = new NodeWebhookSender({ allowPrivate: false, clock });
        const port = new URL(hook.url).port;
        for (const url of [hook.url, `https://127.0.0.1:${port}/hook`, `https://localhost:${port}/hook`, `https://[::ffff:127.0.0.1]:${port}/hook`]) {
          const outcome = await sender.send(request(url));
          expect(outcome, url).to.include({ kind: 'failed' });
          expect(outcome.kind === 'failed' && outcome.reason, url).to.match(/refused/);
        }
        expect(hook.received).to.deep.equal([]);
      } finally {
        await hook.close();
      }
    });

    it('follows no redirect: a 3xx is the answer', async function () {
      const target = await startReceiver();
      const redirecting = await startReceiver([{ status: 307, headers: { Location: target.url } }]);
      try {
        const outcome = await new NodeWebhookSender({ allowPrivate: true, clock }).send(request(redirecting.url));
        expect(outcome).to.deep.equal({ kind: 'answered', status: 307 });
        expect(target.received).to.deep.equal([]);
      } finally {
        await Promise.all([target.close(), redirecting.close()]);
      }
    });

    it('gives up on a receiver that does not answer within its deadline', async function () {
      const server = createServer(() => undefined);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const outcome = await new NodeWebhookSender({ allowPrivate: true, clock, timeoutMs: 100 }).send(request(`http://127.0.0.1:${port}/`));
        expect(outcome).to.deep.equal({ kind: 'failed', reason: 'no answer in 100 ms' });
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });
});
