import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { findOrInstallChromium, launchChromium } from '../support/chromium.js';
import { openApi } from '../support/contract.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { deadline } from '../support/deadlines.js';

/*
 * The /docs page in a real browser (Debian's Chromium driven by playwright-core): it renders every
 * operation of openapi.yaml from files of this origin only, and its "try it" gets a token and
 * calls the API, as a consumer meeting the gateway for the first time would.
 */

const acme = { clientId: 'acme', secret: 'acme-secret-acme-secret' };

interface PageWatch {
  readonly page: Page;
  /** Every URL the page asked for. */
  readonly requested: string[];
  /** Console errors and uncaught exceptions (a Content-Security-Policy violation is one). */
  readonly errors: string[];
}

describe('GET /docs in a browser (Swagger UI in Chromium)', function () {
  let browser: Browser | undefined;
  let gateway: TestGateway;

  before(async function () {
    // Installing Chromium with apt on a fresh machine takes a minute or two.
    this.timeout(600_000);
    const chromium = await findOrInstallChromium();
    if ('unavailable' in chromium) {
      process.stderr.write(`    skipped: the browser test of /docs needs Chromium: ${chromium.unavailable}\n`);
      this.skip();
    }
    browser = await launchChromium(chromium.executablePath);
    const store = new MemoryBlobStore();
    store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'CURVE', FileName: 'rates/curve.csv' })]));
    store.put('rates/curve.csv', 'date,rate\n2024-01-02,10.5\n');
    gateway = await startGateway({ store, clients: [acme] });
  });

  after(async function () {
    await browser?.close();
    await gateway?.close();
  });

  async function openDocs(): Promise<PageWatch> {
    if (browser === undefined) throw new Error('no browser');
    const page = await browser.newPage();
    page.setDefaultTimeout(deadline(30_000));
    const watch: PageWatch = { page, requested: [], errors: [] };
    page.on('request', (request) => watch.requested.push(request.url()));
    page.on('console', (message) => {
      if (message.type() === 'error') watch.errors.push(message.text());
    });
    page.on('pageerror', (error) => watch.errors.push(error.message));
    await page.goto(`${gateway.baseUrl}/docs`);
    await page.waitForSelector('.opblock');
    return watch;
  }

  /** Expands an operation, presses "Try it out" then "Execute", and returns the status the page shows. */
  async function execute(page: Page, operationElementId: string): Promise<string> {
    const operation = page.locator(`#${operationElementId}`);
    await operation.locator('.opblock-summary-control').click();
    await operation.locator('button.try-out__btn').click();
    await operation.locator('button.execute').click();
    const status = operation.locator('.live-responses-table .response .response-col_status');
    await status.waitFor();
    return (await status.innerText()).trim();
  }

  it('shows every operation of openapi.yaml', async function () {
    const { page } = await openDocs();
    const api = await openApi();

    const shown = await page.$$eval('.opblock', (elements) => elements.map((element) => element.id));

    const declared = api.getOperations().map((operation) => `operations-${operation.tags?.[0] ?? 'default'}-${operation.operationId}`);
    expect(shown.sort()).to.deep.equal(declared.sort());
    await page.close();
  });

  it('loads everything from the gateway itself (no CDN) without a script error or a policy violation', async function () {
    const { page, requested, errors } = await openDocs();

    const elsewhere = requested.filter((url) => !url.startsWith(`${gateway.baseUrl}/`));

    expect(elsewhere).to.deep.equal([]);
    expect(requested).to.include(`${gateway.baseUrl}/openapi.yaml`);
    expect(errors).to.deep.equal([]);
    await page.close();
  });

  it('gets a token with the client credentials in Authorize (oauth2 scheme) and answers GET /catalog with 200', async function () {
    const { page, errors } = await openDocs();
    await page.locator('button.authorize').first().click();
    await page.fill('#client_id_clientCredentials', acme.clientId);
    await page.fill('#client_secret_clientCredentials', acme.secret);
    await page.locator('button[aria-label="Apply given OAuth2 credentials"]').click();
    // Swagger UI shows Logout once the token endpoint answered with a token.
    await page.locator('.modal-ux button.btn-done', { hasText: 'Close' }).first().waitFor();
    await page.locator('.modal-ux button', { hasText: 'Logout' }).first().waitFor();
    await page.locator('button.close-modal').click();

    const status = await execute(page, 'operations-catalog-getCatalog');
    const body = await page.locator('#operations-catalog-getCatalog .live-responses-table .response-col_description pre').first().innerText();

    expect(status).to.equal('200');
    expect(body).to.include('"clientId": "acme"');
    expect(errors).to.deep.equal([]);
    await page.close();
  });

  it('takes a pasted token in Authorize (bearerAuth scheme) and answers GET /count with 200', async function () {
    const { page } = await openDocs();
    const token = await gateway.tokenFor(acme.clientId);
    await page.locator('button.authorize').first().click();
    const bearer = page.locator('.modal-ux form', { has: page.locator('h4', { hasText: /^bearerAuth/ }) });
    await bearer.locator('input').fill(token);
    await bearer.locator('button[type="submit"]').click();
    await page.locator('button.close-modal').click();

    const status = await execute(page, 'operations-catalog-countFiles');

    expect(status).to.equal('200');
    await page.close();
  });

  it('authorizes the other operations with the token a try of POST /oauth/token returns: GET /list answers 200', async function () {
    const { page } = await openDocs();
    const issueToken = page.locator('#operations-auth-issueToken');
    await issueToken.locator('.opblock-summary-control').click();
    await issueToken.locator('button.try-out__btn').click();
    await issueToken.locator('input[placeholder="client_id"]').fill(acme.clientId);
    await issueToken.locator('input[placeholder="client_secret"]').fill(acme.secret);
    await issueToken.locator('button.execute').click();
    const tokenStatus = issueToken.locator('.live-responses-table .response .response-col_status');
    await tokenStatus.waitFor();

    const status = await execute(page, 'operations-catalog-listFiles');

    expect((await tokenStatus.innerText()).trim()).to.equal('200');
    expect(status).to.equal('200');
    await page.close();
  });

  it('answers GET /catalog without a token with 401', async function () {
    const { page } = await openDocs();

    const status = await execute(page, 'operations-catalog-getCatalog');

    expect(status).to.equal('401');
    await page.close();
  });
});
