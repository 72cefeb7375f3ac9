import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { formatSize } from '../../portal/src/catalog.js';
import { MemoryChangeLog } from '../../src/adapters/changes/memory-change-log.js';
import { originZeroClock } from '../support/change-log-origin.js';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import type { FileChangeType } from '../../src/domain/changes.js';
import type { Clock } from '../../src/domain/ports.js';
import { findOrInstallChromium, launchChromium } from '../support/chromium.js';
import { changeStoresWith, startGateway, type TestGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { jsonOf } from '../support/json.js';
import { buildPortal } from '../support/portal-build.js';
import { deadline } from '../support/deadlines.js';

/*
 * The subscriber portal in a real browser (Debian's Chromium driven by playwright-core), against
 * the real gateway: signing in, browsing, searching, sorting, folders, a download through the
 * browser's own download manager, token expiry, a 100,000-file catalog, keyboard use, axe-core,
 * the Content-Security-Policy, and the layouts the subscribers' guide shows (whose screenshots
 * `npm run docs:screenshots` takes with these tests; the suite itself writes none).
 */

// A subscriber with a term and a monthly quota of 10 MiB, as `npm run clients -- add` records them.
const acme = {
  clientId: 'acme',
  secret: 'acme-secret-acme-secret',
  validUntil: new Date('2099-01-01T00:00:00Z'),
  monthlyBytes: 10 * 1024 * 1024,
};
const big = { clientId: 'big', secret: 'big-secret-big-secret-big' };
// Two pages of /list for the portal (it asks 10,000 files a page), with files released mid-listing.
const paged = { clientId: 'paged', secret: 'paged-secret-paged-secret' };
const restless = { clientId: 'restless', secret: 'restless-secret-restless' };
const throttled = { clientId: 'throttled', secret: 'throttled-secret-throttled' };
// Ten files, most of them one, two or three folders down (paths no other client's index names).
const ten = { clientId: 'ten', secret: 'ten-secret-ten-secret-ten' };
const tenPaths = [
  'notes.csv',
  'curves/di1.csv',
  'curves/2024/jan.csv',
  'curves/2024/feb.csv',
  'stocks/b3/petr4.csv',
  'stocks/b3/vale3.csv',
  'stocks/us/aapl.csv',
  'fx/usd/brl/daily.csv',
  'fx/usd/brl/intraday.csv',
  'fx/eur/brl/daily.csv',
];
const bigCatalogSize = 100_000;
const CURVE = randomBytes(256 * 1024);

/** A clock the test moves (token expiry). */
class TestClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
}

/** An index row with the same description in both languages, and the release window given. */
function row(symbol: string, description: string, fileName: string, window: { readonly AvailableFrom?: string; readonly AvailableUntil?: string } = {}) {
  return buildIndexRow({ Symbol: symbol, ShortDescriptionPt: description, ShortDescription: description, FileName: fileName, ...window });
}

const hourMs = 3600_000;
const dayMs = 24 * hourMs;

/** The UTC midnight that starts `time`'s day, moved by `days` and `hours`, as an index cell. */
function dayFrom(time: Date, days: number, hours = 0): string {
  return new Date(Math.floor(time.getTime() / dayMs) * dayMs + days * dayMs + hours * hourMs).toISOString();
}

/** acme's release windows, around the day the test runs: two files within theirs, two outside. */
function acmeWindows(now: Date) {
  return {
    calendarFrom: dayFrom(now, -1, 21),
    holidaysUntil: dayFrom(now, 30),
    embargoedFrom: dayFrom(now, 1, 21),
    withdrawnUntil: dayFrom(now, -1),
  };
}

function acmeFiles(store: MemoryBlobStore, now: Date): void {
  const windows = acmeWindows(now);
  store.put(
    'indexes/acme.csv',
    buildIndexCsv([
      row('CURVE', 'Yield curve, daily', 'rates/curve.csv'),
      row('CURVE_JAN', 'Yield curve, January', 'rates/2024/jan.csv'),
      row('PETR4', 'Petrobras PN, end of day', 'equities/petr4.parquet'),
      row('VALE3', 'Vale ON, end of day', 'equities/vale3.parquet'),
      row('HOLIDAYS', 'Exchange holidays', 'holidays.csv', { AvailableUntil: windows.holidaysUntil }),
      row('CALENDAR_2027', 'Trading calendar, 2027', 'calendar-2027.csv', { AvailableFrom: windows.calendarFrom }),
      row('EMBARGOED', 'Earnings, released tomorrow', 'embargoed.csv', { AvailableFrom: windows.embargoedFrom }),
      row('WITHDRAWN', 'Withdrawn yesterday', 'withdrawn.csv', { AvailableUntil: windows.withdrawnUntil }),
      row('NOT_STORED', 'Listed, never uploaded', 'rates/missing.csv'),
    ]),
  );
  store.put('rates/curve.csv', CURVE, { contentType: 'text/csv' });
  store.put('rates/2024/jan.csv', 'date,rate\n2024-01-02,10.5\n');
  store.put('equities/petr4.parquet', randomBytes(3000));
  store.put('equities/vale3.parquet', randomBytes(9000));
  store.put('holidays.csv', 'date\n2024-12-25\n');
  store.put('calendar-2027.csv', 'date,open\n2027-01-04,true\n');
  // Stored, but outside their release windows: not shown.
  store.put('embargoed.csv', 'not yet');
  store.put('withdrawn.csv', 'no longer');
  // In storage, but in no index of acme's: never shown.
  store.put('rates/secret-unlisted.csv', 'not yours');
}

function bigFiles(store: MemoryBlobStore): void {
  const rows = bigRows(bigCatalogSize);
  store.put('indexes/big.csv', buildIndexCsv(rows));
  const bytes = new TextEncoder().encode('x\n1\n');
  for (const row of rows) store.put(row.FileName, bytes);
}

function bigRows(count: number) {
  return Array.from({ length: count }, (_, index) => {
    const symbol = `B${String(index).padStart(6, '0')}`;
    return row(symbol, `Series ${index}`, `series/${symbol.toLowerCase()}.csv`);
  });
}

/** `ten`'s index: symbols T01 to T10, each file `index + 1` hundred bytes. */
function tenFiles(store: MemoryBlobStore): void {
  store.put('indexes/ten.csv', buildIndexCsv(tenPaths.map((path, index) => row(tenSymbol(index), `File ${index + 1}`, path))));
  for (const [index, path] of tenPaths.entries()) store.put(path, 'x'.repeat((index + 1) * 100));
}

function tenSymbol(index: number): string {
  return `T${String(index + 1).padStart(2, '0')}`;
}

/** Minutes after `start`, as an index cell. */
function minutesAfter(start: Date, minutes: number): string {
  return new Date(start.getTime() + minutes * 60_000).toISOString();
}

/**
 * Indexes of 10,010 of big's stored files (two pages for the portal) and files released 20, 25 and
 * 30 minutes after `start`: `paged` has one, `restless` three.
 */
function pagedFiles(store: MemoryBlobStore, start: Date): void {
  const rows = bigRows(10_010);
  store.put('indexes/paged.csv', buildIndexCsv([row('OPENS', 'Released mid-listing', 'opens.csv', { AvailableFrom: minutesAfter(start, 20) }), ...rows]));
  store.put(
    'indexes/restless.csv',
    buildIndexCsv([
      ...[20, 25, 30].map((minutes, index) => row(`OPENS_${index + 1}`, 'Released mid-listing', 'opens.csv', { AvailableFrom: minutesAfter(start, minutes) })),
      ...rows,
    ]),
  );
  store.put('opens.csv', 'released\n');
}

async function storedBytes(store: MemoryBlobStore, path: string): Promise<Buffer> {
  const properties = await store.getProperties(path);
  if (properties === undefined) throw new Error(`${path} is not stored`);
  const chunks: Uint8Array[] = [];
  for await (const chunk of await store.read(path, { ifMatch: properties.etag })) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * The page's own globals, as the few functions this test runs in the page use them (the test is
 * compiled without the DOM library; the casts vanish, leaving `globalThis.document`).
 */
interface PageGlobals {
  readonly document: {
    readonly activeElement: { matches(selector: string): boolean } | null;
    readonly documentElement: { readonly scrollWidth: number; readonly clientWidth: number };
    querySelectorAll(selector: string): ArrayLike<PageNode>;
  };
  readonly axe?: { run(): Promise<unknown> };
}

interface PageNode {
  readonly textContent: string | null;
}

interface Watched {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Console errors and uncaught exceptions. */
  readonly errors: string[];
}

describe('the subscriber portal in a browser (Chromium)', function () {
  let browser: Browser | undefined;
  let gateway: TestGateway;
  let store: MemoryBlobStore;
  /** The change feed's log, into which the "What's new" tests append what a scanner would. */
  const changeLog = new MemoryChangeLog({ clock: originZeroClock });
  const clock = new TestClock();
  const contexts: BrowserContext[] = [];
  /** When the test's indexes were written: their release windows are set from it. */
  let started: Date;

  before(async function () {
    // Installing Chromium with apt on a fresh machine takes a minute or two.
    this.timeout(600_000);
    const chromium = await findOrInstallChromium();
    if ('unavailable' in chromium) {
      process.stderr.write(`    skipped: the browser test of /portal needs Chromium: ${chromium.unavailable}\n`);
      this.skip();
    }
    store = new MemoryBlobStore();
    started = new Date();
    acmeFiles(store, started);
    bigFiles(store);
    pagedFiles(store, started);
    tenFiles(store);
    const [launched] = await Promise.all([launchChromium(chromium.executablePath), buildPortal()]);
    browser = launched;
    gateway = await startGateway({
      store,
      clients: [acme, big, throttled, paged, restless, ten],
      clock,
      changeStores: changeStoresWith({ log: changeLog }),
      // The long polls' watcher reads the log every 50 ms here (every second in production).
      changesPollMs: 50,
      env: { TOKEN_FAILURE_LIMIT: '2', DOWNLOAD_RATE_LIMIT: '1000' },
    });
  });

  afterEach(async function () {
    clock.offsetMs = 0;
    await Promise.all(contexts.splice(0).map((context) => context.close()));
  });

  after(async function () {
    await browser?.close();
    await gateway?.close();
  });

  async function open(options: { readonly bypassCSP?: boolean; readonly width?: number } = {}): Promise<Watched> {
    if (browser === undefined) throw new Error('no browser');
    const context = await browser.newContext({
      acceptDownloads: true,
      bypassCSP: options.bypassCSP ?? false,
      viewport: { width: options.width ?? 1440, height: 900 },
    });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(deadline(30_000));
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${gateway.baseUrl}/portal`);
    return { context, page, errors };
  }

  async function signIn(page: Page, client: { clientId: string; secret: string } = acme): Promise<void> {
    await page.getByLabel('Client id').fill(client.clientId);
    await page.getByLabel('Client secret').fill(client.secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('table.files').waitFor();
  }

  describe('signing in', function () {
    it('with the right client id and secret shows the top folder: its folders first, then its files', async function () {
      const { page, errors } = await open();
      await signIn(page);

      expect(await shownNames(page)).to.deep.equal(['equities/', 'rates/', 'CALENDAR_2027', 'HOLIDAYS']);
      expect(await page.locator('header .who').innerText()).to.equal('Signed in as acme');
      expect(errors).to.deep.equal([]);
    });

    it('with a wrong secret says the client id or secret is wrong, and stays on the sign-in form', async function () {
      const { page } = await open();
      await page.getByLabel('Client id').fill(acme.clientId);
      await page.getByLabel('Client secret').fill('not-the-secret');
      await page.getByRole('button', { name: 'Sign in' }).click();

      const alert = page.getByRole('alert');

      expect(await alert.innerText()).to.match(/client id or secret is wrong/);
      expect(await page.locator('table.files').count()).to.equal(0);
    });

    it('after too many wrong secrets says to wait, with the gateway\'s Retry-After', async function () {
      const { page } = await open();
      await page.getByLabel('Client id').fill(throttled.clientId);
      await page.getByLabel('Client secret').fill('wrong');
      const alert = page.getByRole('alert');
      for (let attempt = 0; attempt < 5; attempt += 1) {
        await page.getByRole('button', { name: 'Sign in' }).click();
        await alert.waitFor();
        if (/Too many/.test(await alert.innerText())) break;
        await page.getByRole('button', { name: 'Sign in' }).waitFor();
      }

      expect(await alert.innerText()).to.match(/^Too many sign-in attempts\. Try again in \d+ (seconds?|minutes)\.$/);
    });
  });

  describe('your files', function () {
    it('the top shows the catalog\'s total: as many files as /count, and the sum of their sizes', async function () {
      const { page } = await open();
      await signIn(page);
      const { count } = jsonOf<{ count: number }>(await gateway.get('acme', '/count'));
      const listed = jsonOf<{ files: { size: number }[] }>(await gateway.get('acme', '/list?limit=10000')).files;
      const bytes = listed.reduce((sum, file) => sum + file.size, 0);

      const totals = await page.locator('#catalog-totals').innerText();

      expect(count).to.equal(6);
      expect(totals).to.equal(`In your catalog: ${count} files, ${formatSize(bytes)} (${bytes.toLocaleString('en')} bytes)`);
    });

    it('the flat view lists every file of a 10-file catalog at once, without opening a folder', async function () {
      const { page } = await open();
      await signIn(page, ten);
      await expectNames(page, ['curves/', 'fx/', 'stocks/', 'T01']);

      await page.getByRole('radio', { name: 'Every file' }).check();

      await expectNames(page, tenPaths.map((_, index) => tenSymbol(index)));
      expect(await page.locator('#file-count').innerText()).to.equal('10 files');
      expect(await page.locator('table.files tr[data-symbol="T08"] td.mono').innerText()).to.equal('fx/usd/brl/daily.csv');
      expect(await page.locator('.breadcrumb [aria-current="location"]').innerText()).to.equal('All files');
      await page.getByRole('radio', { name: 'Folders' }).check();
      await expectNames(page, ['curves/', 'fx/', 'stocks/', 'T01']);
    });

    it('search narrows the table as you type (symbol, description or path), across folders', async function () {
      const { page } = await open();
      await signIn(page);

      await page.getByLabel('Search').pressSequentially('curve');
      await expectNames(page, ['CURVE', 'CURVE_JAN']);
      await page.getByLabel('Search').fill('end of day');
      await expectNames(page, ['PETR4', 'VALE3']);
      await page.getByLabel('Search').fill('2024/');
      await expectNames(page, ['CURVE_JAN']);
      expect(await page.locator('#file-count').innerText()).to.equal('1 file matching “2024/”');
    });

    it('sorts by a column, and the other way round on a second click (aria-sort says which)', async function () {
      const { page } = await open();
      await signIn(page);
      await page.getByRole('button', { name: 'equities/' }).click();
      await expectNames(page, ['PETR4', 'VALE3']);

      const size = page.getByRole('columnheader', { name: 'Size' });
      await size.getByRole('button').click();
      await expectNames(page, ['PETR4', 'VALE3']);
      expect(await size.getAttribute('aria-sort')).to.equal('ascending');
      await size.getByRole('button').click();

      await expectNames(page, ['VALE3', 'PETR4']);
      expect(await size.getAttribute('aria-sort')).to.equal('descending');
    });

    it('opens a folder, then goes back up through the breadcrumb', async function () {
      const { page } = await open();
      await signIn(page);

      await page.getByRole('button', { name: 'rates/' }).click();
      await expectNames(page, ['2024/', 'CURVE']);
      await page.getByRole('button', { name: '2024/' }).click();
      await expectNames(page, ['CURVE_JAN']);
      expect(await page.getByRole('navigation', { name: 'Folder' }).innerText()).to.match(/All files\s*\/?\s*rates\s*\/?\s*2024/);
      await page.getByRole('navigation', { name: 'Folder' }).getByRole('button', { name: 'All files' }).click();

      await expectNames(page, ['equities/', 'rates/', 'CALENDAR_2027', 'HOLIDAYS']);
    });

    it('never shows a file outside the index, nor a listed one that storage does not hold', async function () {
      const { page } = await open();
      await signIn(page);

      await page.getByLabel('Search').fill('secret');
      await expectNames(page, []);
      await page.getByLabel('Search').fill('missing');
      await expectNames(page, []);
      await page.getByLabel('Search').fill('');
      await page.getByRole('button', { name: 'rates/' }).click();
      expect(await page.content()).not.to.include('secret-unlisted');
    });

    it('downloads a file through the browser\'s download manager: the saved bytes are storage\'s', async function () {
      const { page } = await open();
      await signIn(page);
      await page.getByRole('button', { name: 'rates/' }).click();

      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CURVE' }).click()]);
      const saved = await readFile(await download.path());

      expect(download.suggestedFilename()).to.equal('curve.csv');
      expect(new URL(download.url()).pathname).to.equal('/download/signed/curve.csv');
      expect(saved.equals(await storedBytes(store, 'rates/curve.csv'))).to.equal(true);
    });

    it('details show size, ETag, MD5 and dates, with curl, dfg, requests and pandas commands, and no aws s3 cp while the S3 API is off', async function () {
      const { page } = await open();
      await signIn(page);
      await page.getByRole('button', { name: 'rates/' }).click();
      await page.getByRole('button', { name: 'CURVE (details)' }).click();
      const dialog = page.getByRole('dialog', { name: 'CURVE' });
      await dialog.getByText('text/csv').waitFor();
      const properties = (await store.getProperties('rates/curve.csv'))!;

      const text = await dialog.innerText();

      expect(text).to.include(`${CURVE.length.toLocaleString('en')} bytes`);
      expect(text).to.include(properties.etag);
      expect(text).to.include(properties.contentMd5!);
      expect(text).to.include('rates/curve.csv');
      const commands = await dialog.locator('.command').evaluateAll((elements) => elements.map((element) => element.getAttribute('data-command')));
      expect(commands).to.deep.equal(['curl', 'dfg', 'python', 'pandas']);
      expect(await dialog.locator('[data-command="curl"] pre').innerText()).to.include(`${gateway.baseUrl}/download/CURVE`);
      expect(await dialog.locator('[data-command="dfg"] pre').innerText()).to.equal(`DFG_URL='${gateway.baseUrl}' dfg download 'CURVE' -o 'curve.csv'`);
      expect(text).not.to.include(acme.secret);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
    });

    it('the account view shows the term, the quota used and left, and when it resets (GET /account)', async function () {
      const { page } = await open();
      await signIn(page);
      const account = jsonOf<{ quota: { used: number; remaining: number; resetsAt: string } }>(await gateway.get('acme', '/account'));

      await page.getByRole('button', { name: 'Account' }).click();

      const details = page.locator('section.account dl');
      await details.waitFor();
      const text = await details.innerText();
      expect(text).to.include('Active');
      expect(text).to.include('2099-01-01 00:00 UTC');
      expect(text).to.include('10 MiB per month');
      expect(text).to.match(new RegExp(`Used this month\\s+${formatSizeForTest(account.quota.used)}`));
      expect(text).to.match(new RegExp(`Left this month\\s+${formatSizeForTest(account.quota.remaining)}`));
      expect(text).to.include(`${account.quota.resetsAt.slice(0, 16).replace('T', ' ')} UTC`);
    });

    it('the account view is titled Account and shows the quota as a meter: used of the monthly bytes, what is left, when it resets', async function () {
      const { page } = await open();
      await signIn(page);
      const { quota } = jsonOf<{ quota: { monthlyBytes: number; used: number; remaining: number; resetsAt: string } }>(await gateway.get('acme', '/account'));

      await page.getByRole('button', { name: 'Account' }).click();

      await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
      expect(await page.title()).to.equal('Account: Data File Gateway');
      const meter = page.getByRole('meter', { name: 'Monthly quota' });
      const text = `${formatSize(quota.used)} of ${formatSize(acme.monthlyBytes)} used, ${formatSize(quota.remaining)} left, resets ${utcMinutes(quota.resetsAt)}`;
      expect(await meter.getAttribute('aria-valuemin')).to.equal('0');
      expect(await meter.getAttribute('aria-valuemax')).to.equal(String(acme.monthlyBytes));
      expect(await meter.getAttribute('aria-valuenow')).to.equal(String(quota.used));
      expect(await meter.getAttribute('aria-valuetext')).to.equal(text);
      expect(await page.locator('.quota-text').innerText()).to.equal(text);
      await page.getByRole('button', { name: 'Files' }).click();
      await page.getByRole('heading', { level: 1, name: 'Your files' }).waitFor();
    });
  });

  describe('release windows', function () {
    it('shows a file\'s window in its row (from, or until), and no file outside its window', async function () {
      const windows = acmeWindows(started);
      const { page } = await open();
      await signIn(page);

      expect(await windowCell(page, 'CALENDAR_2027')).to.equal(`from ${utcMinutes(windows.calendarFrom)}`);
      expect(await windowCell(page, 'HOLIDAYS')).to.equal(`until ${utcMinutes(windows.holidaysUntil)}`);
      await page.getByRole('button', { name: 'rates/' }).click();
      expect(await windowCell(page, 'CURVE')).to.equal('');
      for (const hidden of ['embargoed', 'withdrawn']) {
        await page.getByLabel('Search').fill(hidden);
        await expectNames(page, []);
      }
    });

    it('sorts by the release window column, files without one first, then the other way round', async function () {
      const { page } = await open();
      await signIn(page);
      await page.getByLabel('Search').fill('.csv');
      await expectNames(page, ['CALENDAR_2027', 'CURVE', 'CURVE_JAN', 'HOLIDAYS']);

      const column = page.getByRole('columnheader', { name: 'Release window' });
      await column.getByRole('button').click();
      await expectNames(page, ['CURVE', 'CURVE_JAN', 'CALENDAR_2027', 'HOLIDAYS']);
      expect(await column.getAttribute('aria-sort')).to.equal('ascending');
      await column.getByRole('button').click();

      await expectNames(page, ['HOLIDAYS', 'CALENDAR_2027', 'CURVE', 'CURVE_JAN']);
      expect(await column.getAttribute('aria-sort')).to.equal('descending');
    });

    it('the details of a file with a window show it (GET /info)', async function () {
      const { page } = await open({ width: 375 });
      await signIn(page);
      await page.getByRole('button', { name: 'HOLIDAYS (details)' }).click();
      const dialog = page.getByRole('dialog', { name: 'HOLIDAYS' });

      await dialog.getByText('Release window').waitFor();
      expect(await dialog.innerText()).to.match(new RegExp(`Release window\\s+until ${utcMinutes(acmeWindows(started).holidaysUntil)}`));
    });
  });

  describe('when the listing\'s cursor expires mid-load (410 cursor_expired)', function () {
    /** Lets each `/list` with a cursor reach the gateway only after `before` ran; counts the first pages asked for. */
    async function onNextPages(page: Page, before: (nextPage: number) => void): Promise<{ firstPages: number }> {
      const seen = { firstPages: 0 };
      let nextPages = 0;
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (url.pathname === '/list' && !url.searchParams.has('cursor')) seen.firstPages += 1;
      });
      await page.route(
        (url) => url.pathname === '/list' && url.searchParams.has('cursor'),
        async (route) => {
          nextPages += 1;
          before(nextPages);
          await route.continue();
        },
      );
      return seen;
    }

    /** Moves the test clock to a second after `minutes` past `started`. */
    function moveClockPast(minutes: number): void {
      clock.offsetMs = started.getTime() + minutes * 60_000 + 1000 - Date.now();
    }

    it('starts the listing over and shows every file, the one released meanwhile included', async function () {
      this.timeout(60_000);
      const { page, errors } = await open();
      // A release window opens between the first page and the second: the second page's cursor is refused.
      const seen = await onNextPages(page, (nextPage) => {
        if (nextPage === 1) moveClockPast(20);
      });
      await signIn(page, paged);
      await page.getByRole('button', { name: 'series/' }).waitFor();
      const listed = await listedByGateway(gateway, paged.clientId);

      expect(listed).to.include('OPENS');
      expect(await shownNames(page)).to.deep.equal(['series/', 'OPENS']);
      expect(await page.locator('tr.folder td').nth(1).innerText()).to.equal(`${listed.filter((symbol) => symbol.startsWith('B')).length.toLocaleString('en')} files`);
      expect(await windowCell(page, 'OPENS')).to.equal(`from ${utcMinutes(minutesAfter(started, 20))}`);
      expect(seen.firstPages).to.equal(2);
      // The browser's own line for the refused page: the one error of the run.
      expect(errors).to.deep.equal(['Failed to load resource: the server responded with a status of 410 (Gone)']);
    });

    it('gives up after 3 listings, saying the files kept changing', async function () {
      this.timeout(60_000);
      const { page } = await open();
      // Every listing's second page comes after one more window opened: 20, 25, then 30 minutes on.
      const seen = await onNextPages(page, (nextPage) => moveClockPast(15 + 5 * nextPage));
      await page.getByLabel('Client id').fill(restless.clientId);
      await page.getByLabel('Client secret').fill(restless.secret);
      await page.getByRole('button', { name: 'Sign in' }).click();

      const alert = page.getByRole('alert');
      await alert.waitFor();

      expect(await alert.innerText()).to.equal('Your files kept changing while they were loading (3 tries): reload the page in a moment.');
      expect(seen.firstPages).to.equal(3);
    });
  });

  describe('when the token expires', function () {
    it('asks to sign in again, then carries on where the subscriber was (folder, search, the details asked for)', async function () {
      const { page } = await open();
      await signIn(page);
      await page.getByRole('button', { name: 'rates/' }).click();
      await page.getByLabel('Search').fill('curve');
      await expectNames(page, ['CURVE', 'CURVE_JAN']);

      // An hour and a second later (TOKEN_TTL_SECONDS=3600): the gateway refuses the token.
      clock.offsetMs = 3601_000;
      await page.getByRole('button', { name: 'CURVE (details)' }).click();
      const again = page.getByRole('dialog', { name: 'Your session has expired' });
      await again.waitFor();
      expect(await again.getByLabel('Client id').inputValue()).to.equal('acme');
      await again.getByLabel('Client secret').fill(acme.secret);
      await again.getByRole('button', { name: 'Sign in' }).click();

      await page.getByRole('dialog', { name: 'CURVE' }).getByText('text/csv').waitFor();
      expect(await page.getByLabel('Search').inputValue()).to.equal('curve');
      expect(await page.getByRole('navigation', { name: 'Folder' }).innerText()).to.include('rates');
    });
  });

  describe('with a 100,000-file catalog', function () {
    it('renders only the rows in view (a few dozen in the DOM), scrolls to the last file, and searches it', async function () {
      this.timeout(120_000);
      // What the gateway lists, page after page while it sends nextCursor (ten pages of 10,000):
      // the portal must show every one of them.
      const expected: string[] = [];
      let page = jsonOf<{ files: { symbol: string }[]; nextCursor?: string }>(await gateway.get('big', '/list?limit=10000'));
      expected.push(...page.files.map((file) => file.symbol));
      while (page.nextCursor !== undefined) {
        page = jsonOf(await gateway.get('big', `/list?limit=10000&cursor=${encodeURIComponent(page.nextCursor)}`));
        expected.push(...page.files.map((file) => file.symbol));
      }
      const { page: browserPage } = await open();
      await signIn(browserPage, big);
      await browserPage.getByRole('button', { name: 'series/' }).click();
      const table = browserPage.locator('table.files');
      await browserPage.locator('#file-count').getByText(`${expected.length.toLocaleString('en')} files`).waitFor();

      const rowsInDom = await browserPage.locator('table.files tbody tr.row').count();
      expect(Number(await table.getAttribute('aria-rowcount'))).to.equal(expected.length + 1);
      expect(rowsInDom).to.be.within(10, 60);

      await browserPage.locator('.table-scroll').evaluate((element) => element.scrollTo({ top: element.scrollHeight }));
      const last = expected.sort().at(-1) ?? '';
      await browserPage.getByRole('button', { name: `${last} (details)` }).waitFor();
      expect(await browserPage.locator('table.files tbody tr.row').count()).to.be.within(10, 60);

      const target = expected[Math.floor(expected.length / 2)] ?? '';
      await browserPage.getByLabel('Search').fill(target);
      await expectNames(browserPage, [target]);
    });
  });

  describe('keyboard only', function () {
    it('signs in, searches, opens the details of a file, closes them, and downloads it, with Tab, typing, Enter and Escape', async function () {
      const { page } = await open();
      await page.keyboard.press('Tab');
      await page.keyboard.type(acme.clientId);
      await page.keyboard.press('Tab');
      await page.keyboard.type(acme.secret);
      await page.keyboard.press('Enter');
      await page.locator('table.files').waitFor();

      await tabTo(page, '#search');
      await page.keyboard.type('holidays');
      await expectNames(page, ['HOLIDAYS']);
      await tabTo(page, 'td.col-name button');
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'HOLIDAYS' });
      await dialog.waitFor();
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      await tabTo(page, 'button.download');
      const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);

      expect((await readFile(await download.path())).toString()).to.equal('date\n2024-12-25\n');
    });
  });

  describe('accessibility (axe-core)', function () {
    it('finds no serious or critical violation on the sign-in form, the file table, the flat view, a folder, the details and the account view with its quota bar', async function () {
      // Only to inject axe-core's script: the portal's own policy is checked without a bypass below.
      const { page } = await open({ bypassCSP: true });
      const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
      const audit = async (where: string): Promise<string[]> => {
        if (!(await page.evaluate(() => (globalThis as unknown as PageGlobals).axe !== undefined))) await page.addScriptTag({ content: axeSource });
        const results = (await page.evaluate(() => (globalThis as unknown as PageGlobals).axe?.run())) as {
          violations: { id: string; impact: string | null; nodes: { target: unknown }[] }[];
        };
        return results.violations
          .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
          .map((violation) => `${where}: ${violation.id} (${violation.impact}) at ${JSON.stringify(violation.nodes.map((node) => node.target))}`);
      };
      const found: string[] = [];

      found.push(...(await audit('sign-in')));
      await signIn(page);
      found.push(...(await audit('files')));
      await page.getByRole('radio', { name: 'Every file' }).check();
      await expectNames(page, ['CALENDAR_2027', 'CURVE', 'CURVE_JAN', 'HOLIDAYS', 'PETR4', 'VALE3']);
      found.push(...(await audit('flat')));
      await page.getByRole('radio', { name: 'Folders' }).check();
      await page.getByRole('button', { name: 'rates/' }).click();
      found.push(...(await audit('folder')));
      await page.getByRole('button', { name: 'CURVE (details)' }).click();
      await page.getByRole('dialog', { name: 'CURVE' }).getByText('text/csv').waitFor();
      found.push(...(await audit('details')));
      await page.keyboard.press('Escape');
      await page.getByRole('button', { name: 'Account' }).click();
      await page.getByText('Used this month').waitFor();
      await page.getByRole('meter', { name: 'Monthly quota' }).waitFor();
      found.push(...(await audit('account')));

      expect(found).to.deep.equal([]);
    });
  });

  describe("what's new", function () {
    const logged = (clientId: string, type: FileChangeType, index: number, minute: number) => ({
      clientId,
      type,
      time: new Date(Date.UTC(2026, 10, 20, 9, minute)),
      file: { symbol: tenSymbol(index), fileName: tenPaths[index] ?? '', size: (index + 1) * 100, etag: `"v${minute}"`, uploaded: new Date(Date.UTC(2026, 10, 20, 9, minute)) },
    });
    const shownEvents = (page: Page): Promise<string[]> => page.locator('ol.changes li.change').evaluateAll((items) => items.map((item) => (item as unknown as PageNode).textContent ?? ''));

    it('shows the client’s recent events newest first, none of another client’s, adds a new one on top while open, and passes axe-core', async function () {
      await changeLog.append([logged('ten', 'file.released', 0, 1), logged('acme', 'file.released', 4, 2), logged('ten', 'file.updated', 1, 3)]);
      const { page, errors } = await open({ bypassCSP: true });
      await signIn(page, ten);
      await page.getByRole('button', { name: "What's new" }).click();
      await page.locator('ol.changes li.change').nth(1).waitFor();

      expect(await page.locator('h1').innerText()).to.equal("What's new");
      expect(await shownEvents(page)).to.deep.equal([
        'Updated T02 curves/di1.csv2026-11-20 09:03 UTC · 200 B',
        'Released T01 notes.csv2026-11-20 09:01 UTC · 100 B',
      ]);

      await changeLog.append([logged('ten', 'file.withdrawn', 2, 4)]);
      await page.locator('ol.changes li.change').nth(2).waitFor();
      expect((await shownEvents(page))[0]).to.equal('Withdrawn T03 curves/2024/jan.csv2026-11-20 09:04 UTC');

      const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
      await page.addScriptTag({ content: axeSource });
      const results = (await page.evaluate(() => (globalThis as unknown as PageGlobals).axe?.run())) as { violations: { id: string; impact: string | null }[] };
      expect(results.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')).to.deep.equal([]);
      expect(errors).to.deep.equal([]);
    });
  });

  describe('the Content-Security-Policy (no bypass)', function () {
    it('holds: signing in, browsing, details and a download raise no policy violation and no script error', async function () {
      const { page, errors } = await open();
      const violations: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
      });
      await signIn(page);
      await page.getByRole('button', { name: 'rates/' }).click();
      await page.getByRole('button', { name: 'CURVE (details)' }).click();
      await page.getByRole('dialog', { name: 'CURVE' }).getByText('text/csv').waitFor();
      await page.keyboard.press('Escape');
      await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CURVE' }).click()]);

      const policy = await page.evaluate(async () => (await fetch('/portal')).headers.get('content-security-policy'));

      expect(policy).to.include("frame-ancestors 'none'");
      expect(violations).to.deep.equal([]);
      expect(errors).to.deep.equal([]);
    });
  });

  describe('at 375 px, 800 px and 1440 px wide', function () {
    for (const width of [375, 800, 1440]) {
      it(`at ${width} px, nothing overflows sideways and no date is cut short`, async function () {
        // The guide shows a phone and a desktop; 800 px is between the two column breakpoints. Its
        // screenshots are taken only by `npm run docs:screenshots`, which runs these tests with
        // DOCS_SCREENSHOTS_DIR set: the suite itself never writes a tracked file.
        const images = process.env['DOCS_SCREENSHOTS_DIR'];
        const screenshot = images !== undefined && images !== '' && width !== 800;
        if (screenshot) await mkdir(images, { recursive: true });
        const { page } = await open({ width });
        if (screenshot) await page.screenshot({ path: join(images, `portal-sign-in-${width}.png`) });
        await signIn(page);
        await page.getByRole('button', { name: 'equities/' }).waitFor();

        const overflow = await page.evaluate(() => {
          const root = (globalThis as unknown as PageGlobals).document.documentElement;
          return root.scrollWidth - root.clientWidth;
        });
        const tableOverflow = await page.locator('.table-scroll').evaluate((element) => element.scrollWidth - element.clientWidth);
        const cutDates = await page.locator('table.files td.time').evaluateAll((cells) => cells.filter((cell) => cell.scrollWidth > cell.clientWidth).map((cell) => cell.textContent));
        if (screenshot) await page.screenshot({ path: join(images, `portal-files-${width}.png`) });
        await page.getByRole('button', { name: 'rates/' }).click();
        await page.getByRole('button', { name: 'CURVE (details)' }).click();
        await page.getByRole('dialog', { name: 'CURVE' }).getByText('text/csv').waitFor();
        if (screenshot) await page.screenshot({ path: join(images, `portal-details-${width}.png`) });

        expect(overflow).to.equal(0);
        expect(tableOverflow).to.equal(0);
        expect(cutDates).to.deep.equal([]);
        expect(await page.getByRole('button', { name: 'Download CURVE' }).first().isVisible()).to.equal(true);
      });
    }
  });
});

/** The symbols (or folder names, as `name/`) of the rows in the DOM, in order. */
function shownNames(page: Page): Promise<string[]> {
  return page.$$eval('table.files tbody tr.row td.col-name .name', (names) => names.map((name) => name.textContent ?? ''));
}

/** Waits until the table shows exactly these rows (folders as `name/`), in this order. */
async function expectNames(page: Page, names: readonly string[]): Promise<void> {
  const expected = JSON.stringify(names);
  try {
    await page.waitForFunction(
      (wanted) => {
        const nodes = (globalThis as unknown as PageGlobals).document.querySelectorAll('table.files tbody tr.row td.col-name .name');
        const shown = Array.from(nodes).map((node) => node.textContent ?? '');
        return JSON.stringify(shown) === wanted;
      },
      expected,
      { timeout: deadline(10_000) },
    );
  } catch {
    expect(await shownNames(page), 'rows shown').to.deep.equal(names);
  }
}

/** Presses Tab until the focused element matches `selector` (at most 40 times). */
async function tabTo(page: Page, selector: string): Promise<void> {
  for (let presses = 0; presses < 40; presses += 1) {
    if (await page.evaluate((wanted) => (globalThis as unknown as PageGlobals).document.activeElement?.matches(wanted) ?? false, selector)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${selector}`);
}

/** The text of a file row's release window cell. */
function windowCell(page: Page, symbol: string): Promise<string> {
  return page.locator(`table.files tr[data-symbol="${symbol}"] td.col-window`).innerText();
}

/** `2026-11-24 21:00 UTC` for an ISO 8601 time. */
function utcMinutes(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

/** Every symbol the gateway lists for `clientId` now, following `nextCursor`. */
async function listedByGateway(gateway: TestGateway, clientId: string): Promise<string[]> {
  const symbols: string[] = [];
  let path: string | undefined = '/list?limit=10000';
  while (path !== undefined) {
    const page: { files: { symbol: string }[]; nextCursor?: string } = jsonOf(await gateway.get(clientId, path));
    symbols.push(...page.files.map((file) => file.symbol));
    path = page.nextCursor === undefined ? undefined : `/list?limit=10000&cursor=${encodeURIComponent(page.nextCursor)}`;
  }
  return symbols;
}

/** The portal's own binary-unit rendering (portal/src/catalog.ts `formatSize`), escaped for a pattern. */
function formatSizeForTest(bytes: number): string {
  return formatSize(bytes).replace('.', '\\.');
}
