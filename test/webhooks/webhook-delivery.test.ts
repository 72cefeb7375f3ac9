import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { auditEvents } from '../../src/adapters/audit/audit-trail.js';
import { MemoryChangeLog } from '../../src/adapters/changes/memory-change-log.js';
import { originZeroClock } from '../support/change-log-origin.js';
import { JoseSigner } from '../../src/adapters/signing/jose-signer.js';
import { FileWebhookRegistry } from '../../src/adapters/webhooks/file-webhook-registry.js';
import { MemoryWebhookRegistry } from '../../src/adapters/webhooks/memory-webhook-registry.js';
import { NodeWebhookSender } from '../../src/adapters/webhooks/node-webhook-sender.js';
import { WebhookTargetPolicy } from '../../src/adapters/webhooks/webhook-targets.js';
import { EventBus } from '../../src/application/events.js';
import { WebhookDelivery } from '../../src/application/webhook-delivery.js';
import { Webhooks } from '../../src/application/webhooks.js';
import type { FileChange } from '../../src/domain/changes.js';
import type { WebhookRegistry, WebhookRequest, WebhookSender } from '../../src/domain/ports.js';
import type { DeliveryOutcome, WebhookEndpoint } from '../../src/domain/webhooks.js';
import { capturedAudit } from '../support/audit-capture.js';
import { HandClock } from '../contract/signer-contract.js';
import { startReceiver, type Received, type TestReceiver } from './receiver.js';

const rootKey = new TextEncoder().encode('webhook-delivery-test-key-of-32-bytes-at-least');
const schedule = [5, 300];

/** When the changes a test appends were found: the test's clock, set by `setUp`. */
let foundAt: () => Date = () => new Date();

const change = (clientId: string, symbol: string, overrides: Partial<FileChange> = {}): FileChange => ({
  clientId,
  type: 'file.released',
  time: foundAt(),
  file: { symbol, fileName: `data/${symbol}.csv`, size: 10, etag: '"0x1"', uploaded: new Date('2026-05-01T09:59:00.000Z'), sha256: 'a'.repeat(64) },
  ...overrides,
});

/** Everything a test drives: the log, the registry, the use cases over a real sender, a hand clock, the audit. */
function setUp(registry: WebhookRegistry = new MemoryWebhookRegistry()) {
  // Real time to start from, so `standardwebhooks` accepts the timestamps of the first attempts.
  const clock = new HandClock(new Date(Math.floor(Date.now() / 1000) * 1000));
  foundAt = () => clock.now();
  const log = new MemoryChangeLog({ clock: originZeroClock });
  const signer = new JoseSigner({ rootKey, clock });
  const audited = capturedAudit();
  const events = new EventBus();
  events.subscribe(auditEvents(audited.audit));
  const webhooks = new Webhooks({ registry, log, targets: new WebhookTargetPolicy({ allowPrivate: true }), signer, clock });
  const delivery = (on: WebhookRegistry = registry): WebhookDelivery =>
    new WebhookDelivery({ registry: on, log, sender: new NodeWebhookSender({ allowPrivate: true, clock }), signer, clock, retrySeconds: schedule, events });
  return { clock, log, signer, audited, webhooks, delivery, registry };
}

/** Checks a delivery the way a subscriber would, with the `standardwebhooks` package: its signature, under the secret shown at registration. */
function verifiedBy(secret: string, received: Received, options: { readonly checkTime: boolean }): unknown {
  const headers = {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  };
  const hook = new Webhook(secret);
  // verify() also refuses a timestamp 5 minutes off the real clock; retries on a moved clock are checked by the package's own signing.
  if (options.checkTime) return hook.verify(received.body, headers);
  expect(hook.sign(headers['webhook-id'], new Date(Number(headers['webhook-timestamp']) * 1000), received.body)).to.equal(headers['webhook-signature']);
  return JSON.parse(received.body);
}

describe('webhook delivery (WebhookDelivery over a local receiver)', function () {
  let receivers: TestReceiver[] = [];
  const receiver = async (...answers: Parameters<typeof startReceiver>[0] & object): Promise<TestReceiver> => {
    const started = await startReceiver([...answers]);
    receivers.push(started);
    return started;
  };

  afterEach(async function () {
    await Promise.all(receivers.map((r) => r.close()));
    receivers = [];
  });

  describe('when the receiver answers 2xx', function () {
    it('POSTs each change of the client after registration, in order, signed as Standard Webhooks says, and never again', async function () {
      const { clock, webhooks, log, delivery } = setUp();
      await log.append([change('acme', 'BEFORE')]);
      const hook = await receiver();
      const { endpoint, secret } = await webhooks.register('acme', hook.url);
      await log.append([change('acme', 'ONE'), change('acme', 'TWO', { type: 'file.updated' })]);
      const deliverer = delivery();

      expect(await deliverer.tick()).to.deep.equal({ attempts: 2, delivered: 2, disabled: 0 });
      expect(await deliverer.tick()).to.deep.equal({ attempts: 0, delivered: 0, disabled: 0 });

      expect(hook.received.map((r) => r.headers['webhook-id'])).to.deep.equal(['chg_000000000002', 'chg_000000000003']);
      const bodies = hook.received.map((r) => verifiedBy(secret, r, { checkTime: true }));
      expect(bodies[0]).to.deep.equal({
        type: 'file.released',
        timestamp: clock.now().toISOString(),
        data: { symbol: 'ONE', fileName: 'data/ONE.csv', size: 10, etag: '"0x1"', uploaded: '2026-05-01T09:59:00.000Z', sha256: 'a'.repeat(64) },
      });
      expect(bodies[1]).to.include({ type: 'file.updated' });
      expect(hook.received[0]?.headers['content-type']).to.equal('application/json');
      expect((await webhooks.list('acme'))[0]?.delivery).to.deep.equal({ delivered: 3, attempts: 0 });
      expect(endpoint.startsAfter).to.equal(1);
    });

    it('passes over the changes found before registration when the log\'s head was not known (an endpoint starting at 0)', async function () {
      const { clock, log, delivery, registry, signer } = setUp();
      await log.append([change('acme', 'OLD1'), change('acme', 'OLD2')]);
      clock.advance(1_000);
      const hook = await receiver();
      const endpoint = await registry.add({ clientId: 'acme', url: hook.url, createdAt: clock.now(), startsAfter: 0 });
      await log.append([change('acme', 'NEW')]);
      expect(await delivery().tick()).to.deep.equal({ attempts: 1, delivered: 1, disabled: 0 });
      expect(hook.received.map((r) => r.headers['webhook-id'])).to.deep.equal(['chg_000000000003']);
      verifiedBy(signer.webhookSecret(endpoint.id), hook.received[0] as Received, { checkTime: true });
      expect((await registry.list('acme'))[0]?.delivery.delivered).to.equal(3);
    });

    it('gives a client\'s endpoint only that client\'s changes (isolation)', async function () {
      const { webhooks, log, delivery } = setUp();
      const acme = await receiver();
      const globex = await receiver();
      await webhooks.register('acme', acme.url);
      await webhooks.register('globex', globex.url);
      await log.append([change('acme', 'A1'), change('globex', 'G1'), change('acme', 'A2')]);
      await delivery().tick();
      expect(acme.received.map((r) => (JSON.parse(r.body) as { data: { symbol: string } }).data.symbol)).to.deep.equal(['A1', 'A2']);
      expect(globex.received.map((r) => (JSON.parse(r.body) as { data: { symbol: string } }).data.symbol)).to.deep.equal(['G1']);
    });

    it('sends nothing to an endpoint once it is removed', async function () {
      const { webhooks, log, delivery } = setUp();
      const hook = await receiver();
      const { endpoint } = await webhooks.register('acme', hook.url);
      await webhooks.remove('acme', endpoint.id);
      await log.append([change('acme', 'ONE')]);
      expect(await delivery().tick()).to.deep.equal({ attempts: 0, delivered: 0, disabled: 0 });
      expect(hook.received).to.deep.equal([]);
    });
  });

  describe('when the receiver answers 500, then 200', function () {
    it('sends the same change again with the same webhook-id once the first delay has passed, and not the next one before it', async function () {
      const { clock, webhooks, log, delivery } = setUp();
      const hook = await receiver({ status: 500 });
      const { secret } = await webhooks.register('acme', hook.url);
      await log.append([change('acme', 'ONE'), change('acme', 'TWO')]);
      const deliverer = delivery();

      expect(await deliverer.tick()).to.deep.equal({ attempts: 1, delivered: 0, disabled: 0 });
      clock.advance(4_999);
      expect(await deliverer.tick()).to.deep.equal({ attempts: 0, delivered: 0, disabled: 0 });
      clock.advance(1);
      expect(await deliverer.tick()).to.deep.equal({ attempts: 2, delivered: 2, disabled: 0 });

      expect(hook.received.map((r) => r.headers['webhook-id'])).to.deep.equal(['chg_000000000001', 'chg_000000000001', 'chg_000000000002']);
      for (const received of hook.received) verifiedBy(secret, received, { checkTime: true });
      expect(hook.received[0]?.body).to.equal(hook.received[1]?.body);
    });

    it('keeps the pending delivery across a restart (a new registry and delivery over the same file)', async function () {
      const dir = await mkdtemp(join(tmpdir(), 'dfg-webhook-restart-'));
      try {
        const path = join(dir, 'webhooks.json');
        const { clock, webhooks, log, delivery } = setUp(new FileWebhookRegistry(path));
        const hook = await receiver({ status: 503 });
        await webhooks.register('acme', hook.url);
        await log.append([change('acme', 'ONE')]);
        await delivery().tick();

        clock.advance(5_000);
        const afterRestart = delivery(new FileWebhookRegistry(path));
        expect(await afterRestart.tick()).to.deep.equal({ attempts: 1, delivered: 1, disabled: 0 });
        expect(hook.received.map((r) => r.headers['webhook-id'])).to.deep.equal(['chg_000000000001', 'chg_000000000001']);
        expect(await afterRestart.tick()).to.deep.equal({ attempts: 0, delivered: 0, disabled: 0 });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });

  describe('when the receiver answers with Retry-After', function () {
    it('waits the seconds it asks instead of the schedule\'s delay', async function () {
      const { clock, webhooks, log, delivery } = setUp();
      const hook = await receiver({ status: 429, headers: { 'Retry-After': '120' } });
      await webhooks.register('acme', hook.url);
      await log.append([change('acme', 'ONE')]);
      const deliverer = delivery();
      await deliverer.tick();
      clock.advance(119_000);
      expect((await deliverer.tick()).attempts).to.equal(0);
      clock.advance(1_000);
      expect(await deliverer.tick()).to.deep.equal({ attempts: 1, delivered: 1, disabled: 0 });
    });

    it('takes an HTTP date, and waits no longer than the schedule\'s longest delay', async function () {
      const { clock, webhooks, log, delivery } = setUp();
      const far = new Date(clock.now().getTime() + 86_400_000).toUTCString();
      const hook = await receiver({ status: 503, headers: { 'Retry-After': far } });
      await webhooks.register('acme', hook.url);
      await log.append([change('acme', 'ONE')]);
      const deliverer = delivery();
      await deliverer.tick();
      clock.advance(299_000);
      expect((await deliverer.tick()).attempts).to.equal(0);
      clock.advance(1_000);
      expect((await deliverer.tick()).delivered).to.equal(1);
    });
  });

  describe('when the endpoint is gone or never answers well', function () {
    it('disables an endpoint that answers 410 at once, audits it, and lists it disabled with the reason', async function () {
      const { clock, webhooks, log, delivery, audited } = setUp();
      const hook = await receiver({ status: 410 });
      const { endpoint } = await webhooks.register('acme', hook.url);
      await log.append([change('acme', 'ONE')]);
      const deliverer = delivery();
      expect(await deliverer.tick()).to.deep.equal({ attempts: 1, delivered: 0, disabled: 1 });
      clock.advance(86_400_000);
      expect(await deliverer.tick()).to.deep.equal({ attempts: 0, delivered: 0, disabled: 0 });

      const [listed] = await webhooks.list('acme');
      expect(listed).to.include({ enabled: false });
      expect(listed?.disabled?.reason).to.equal('gone');
      expect(audited.records().filter((record) => record.event === 'webhook')).to.have.length(1);
      expect(audited.records().find((record) => record.event === 'webhook')).to.include({
        action: 'disabled',
        clientId: 'acme',
        endpointId: endpoint.id,
        reason: 'gone',
        attempts: 1,
      });
    });

    it('disables an endpoint once every delay of the schedule was tried (1 + 2 attempts), and audits it', async function () {
      const { clock, webhooks, log, delivery, audited } = setUp();
      const hook = await receiver({ status: 500 }, { status: 500 }, { status: 502 });
      await webhooks.register('acme', hook.url);
      await log.append([change('acme', 'ONE')]);
      const deliverer = delivery();
      await deliverer.tick();
      clock.advance(5_000);
      await deliverer.tick();
      clock.advance(299_000);
      expect((await deliverer.tick()).attempts).to.equal(0);
      clock.advance(1_000);
      expect(await deliverer.tick()).to.deep.equal({ attempts: 1, delivered: 0, disabled: 1 });
      expect(hook.received).to.have.length(3);
      const [listed] = await webhooks.list('acme');
      expect(listed?.disabled?.reason).to.equal('retries_exhausted');
      expect(listed?.disabled?.detail).to.match(/3 attempts .* answered 502/);
      expect(audited.records().find((record) => record.event === 'webhook')).to.include({ reason: 'retries_exhausted', attempts: 3 });
    });

    it('counts a receiver that cannot be reached as a failed attempt', async function () {
      const { webhooks, log, delivery } = setUp();
      const hook = await receiver();
      const { url } = hook;
      await hook.close();
      receivers = receivers.filter((r) => r !== hook);
      await webhooks.register('acme', url);
      await log.append([change('acme', 'ONE')]);
      expect(await delivery().tick()).to.deep.equal({ attempts: 1, delivered: 0, disabled: 0 });
      expect((await webhooks.list('acme'))[0]?.delivery.attempts).to.equal(1);
    });
  });

  describe('when receivers are slow (each endpoint in a lane of its own)', function () {
    /** A sender whose answers the test gives by hand: every send waits until answered. */
    class HeldSender implements WebhookSender {
      readonly waiting: Array<{ readonly url: string; readonly answer: (outcome: DeliveryOutcome) => void }> = [];
      readonly #arrivals: Array<() => void> = [];
      sent(url: string): number {
        return this.waiting.filter((held) => held.url === url).length + (this.answered.get(url) ?? 0);
      }
      readonly answered = new Map<string, number>();
      send(request: WebhookRequest): Promise<DeliveryOutcome> {
        return new Promise((resolve) => {
          this.waiting.push({
            url: request.url,
            answer: (outcome) => {
              this.answered.set(request.url, (this.answered.get(request.url) ?? 0) + 1);
              resolve(outcome);
            },
          });
          for (const arrived of this.#arrivals.splice(0)) arrived();
        });
      }
      /** Resolves once `count` sends wait in all. */
      async held(count: number): Promise<void> {
        while (this.waiting.length < count) await new Promise<void>((resolve) => this.#arrivals.push(resolve));
      }
      /** Answers every waiting send of `url` with 200. */
      answerAll(url: string): void {
        for (const held of this.waiting.filter((h) => h.url === url)) held.answer({ kind: 'answered', status: 200 });
        this.waiting.splice(0, this.waiting.length, ...this.waiting.filter((h) => h.url !== url));
      }
    }

    const sendingWith = (sender: HeldSender, context: ReturnType<typeof setUp>, options: { turnMs?: number; concurrencyPerClient?: number } = {}) =>
      new WebhookDelivery({ registry: context.registry, log: context.log, sender, signer: context.signer, clock: context.clock, retrySeconds: schedule, events: new EventBus(), ...options });

    it('serves another endpoint while a slow receiver has not answered, and a later tick starts no second turn for the slow one', async function () {
      const context = setUp();
      const slow = await context.webhooks.register('acme', 'http://127.0.0.1:1/slow');
      const fast = await context.webhooks.register('other', 'http://127.0.0.1:1/fast');
      await context.log.append([change('acme', 'ONE'), change('acme', 'TWO'), change('other', 'THEIRS')]);
      const sender = new HeldSender();
      const deliverer = sendingWith(sender, context);
      const first = deliverer.tick();
      await sender.held(2);
      sender.answerAll(fast.endpoint.url);
      // The fast endpoint's turn ends while the slow one still waits for its first answer.
      await new Promise((resolve) => setImmediate(resolve));
      await context.log.append([change('other', 'MORE')]);
      const second = deliverer.tick();
      await sender.held(2);
      expect(sender.sent(fast.endpoint.url), 'the new change went out in a turn of its own').to.equal(2);
      expect(sender.sent(slow.endpoint.url), 'still one: no second turn beside the running one').to.equal(1);
      sender.answerAll(fast.endpoint.url);
      expect(await second).to.deep.equal({ attempts: 1, delivered: 1, disabled: 0 });
      expect(deliverer.running, 'the slow turn runs on').to.equal(1);
      sender.answerAll(slow.endpoint.url);
      await sender.held(1);
      sender.answerAll(slow.endpoint.url);
      expect(await first).to.deep.equal({ attempts: 3, delivered: 3, disabled: 0 });
      await deliverer.idle();
      expect(deliverer.running).to.equal(0);
    });

    it("gives one client's endpoints at most concurrencyPerClient lanes, leaving the others to other clients", async function () {
      const context = setUp();
      const mine = await Promise.all(['a', 'b', 'c'].map((name) => context.webhooks.register('acme', `http://127.0.0.1:1/${name}`)));
      const theirs = await context.webhooks.register('other', 'http://127.0.0.1:1/theirs');
      await context.log.append([change('acme', 'ONE'), change('other', 'THEIRS')]);
      const sender = new HeldSender();
      const deliverer = sendingWith(sender, context, { concurrencyPerClient: 2 });
      const ticked = deliverer.tick();
      await sender.held(3);
      expect(mine.map(({ endpoint }) => sender.sent(endpoint.url)).reduce((sum, n) => sum + n, 0), "two of acme's three").to.equal(2);
      expect(sender.sent(theirs.endpoint.url)).to.equal(1);
      for (const { endpoint } of [...mine, theirs]) sender.answerAll(endpoint.url);
      // A lane of acme, free again, goes on with its third endpoint.
      await sender.held(1);
      expect(mine.map(({ endpoint }) => sender.sent(endpoint.url))).to.deep.equal([1, 1, 1]);
      for (const { endpoint } of mine) sender.answerAll(endpoint.url);
      expect(await ticked).to.deep.equal({ attempts: 4, delivered: 4, disabled: 0 });
    });

    it('ends a turn that ran past turnMs after the answer it waited for, and goes on at the next tick', async function () {
      const context = setUp();
      const slow = await context.webhooks.register('acme', 'http://127.0.0.1:1/slow');
      await context.log.append([change('acme', 'ONE'), change('acme', 'TWO'), change('acme', 'THREE')]);
      const sender = new HeldSender();
      const deliverer = sendingWith(sender, context, { turnMs: 30_000 });
      const ticked = deliverer.tick();
      await sender.held(1);
      // The receiver took 31 s to answer the first change: the turn is spent.
      context.clock.advance(31_000);
      sender.answerAll(slow.endpoint.url);
      expect(await ticked).to.deep.equal({ attempts: 1, delivered: 1, disabled: 0 });
      const next = deliverer.tick();
      await sender.held(1);
      sender.answerAll(slow.endpoint.url);
      await sender.held(1);
      sender.answerAll(slow.endpoint.url);
      expect(await next, 'the rest, in order').to.deep.equal({ attempts: 2, delivered: 2, disabled: 0 });
      expect((await context.webhooks.list('acme'))[0]?.delivery.delivered).to.equal(3);
    });

    it('never starts a turn from a copy of an endpoint read before its last turn ended (no change sent twice, no retry early)', async function () {
      const context = setUp();
      const { endpoint } = await context.webhooks.register('acme', 'http://127.0.0.1:1/hook');
      await context.log.append([change('acme', 'ONE'), change('acme', 'TWO')]);
      const sender = new HeldSender();
      // A registry whose answer to the second tick is held until the first turn ended: it answers what it read before.
      let holdNext: ((release: () => void) => void) | undefined;
      const registry = context.registry;
      const staleEnabled = async (): Promise<readonly WebhookEndpoint[]> => {
        const read = await registry.enabled();
        if (holdNext !== undefined) await new Promise<void>((resolve) => holdNext?.(resolve));
        return read;
      };
      const stale = new Proxy(registry, {
        get: (target, property) => {
          if (property === 'enabled') return staleEnabled;
          const value: unknown = Reflect.get(target, property);
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
      const deliverer = new WebhookDelivery({ registry: stale, log: context.log, sender, signer: context.signer, clock: context.clock, retrySeconds: schedule, events: new EventBus() });
      const first = deliverer.tick();
      await sender.held(1);
      let release: (() => void) | undefined;
      holdNext = (resolve) => {
        release = resolve;
      };
      const second = deliverer.tick();
      await new Promise((resolve) => setImmediate(resolve));
      holdNext = undefined;
      sender.answerAll(endpoint.url);
      await sender.held(1);
      sender.answerAll(endpoint.url);
      expect(await first).to.deep.equal({ attempts: 2, delivered: 2, disabled: 0 });
      release?.();
      expect(await second, 'its copy said nothing was delivered yet: stale, so no turn').to.deep.equal({ attempts: 0, delivered: 0, disabled: 0 });
      expect(sender.sent(endpoint.url)).to.equal(2);
    });

    it('stops a lane after the attempt under way once this instance no longer holds the scanner lease', async function () {
      const context = setUp();
      const { endpoint } = await context.webhooks.register('acme', 'http://127.0.0.1:1/hook');
      await context.log.append([change('acme', 'ONE'), change('acme', 'TWO'), change('acme', 'THREE')]);
      const sender = new HeldSender();
      let leading = true;
      const deliverer = new WebhookDelivery({ registry: context.registry, log: context.log, sender, signer: context.signer, clock: context.clock, retrySeconds: schedule, events: new EventBus(), leading: () => leading });
      const ticked = deliverer.tick();
      await sender.held(1);
      leading = false;
      sender.answerAll(endpoint.url);
      expect(await ticked, 'the attempt under way was answered and recorded; nothing more sent').to.deep.equal({ attempts: 1, delivered: 1, disabled: 0 });
      expect((await context.webhooks.list('acme'))[0]?.delivery.delivered).to.equal((await context.log.read('acme', 0, 1))[0]?.position);
    });
  });
});
