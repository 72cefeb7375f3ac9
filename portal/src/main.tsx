import { render, type ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { breadcrumbOf, catalogTotals, formatSize, formatTime, formatWindow, portalFilesOf, releaseWindowOf, tableRows, type PortalFile, type SortKey, type SortOrder } from './catalog.js';
import { commandsFor, type S3Api } from './commands.js';
import { FileTable } from './file-table.js';
import { ApiRefused, GatewayApi, isCursorExpired, listingAttempts, portalConfig, signIn, SignInFailed, type FileInfo, type Token } from './gateway-api.js';
import { changeLabel, newestFirst, type FeedEvent } from './whats-new.js';
import './styles.css';

type View = 'files' | 'changes' | 'account';

/** Each view's title: the page's one `h1` and the browser tab's title say where the subscriber is. */
const viewTitles: Readonly<Record<View, string>> = { files: 'Your files', changes: "What's new", account: 'Account' };

interface Session {
  readonly clientId: string;
  readonly api: GatewayApi;
}

function App() {
  const [session, setSession] = useState<Session | undefined>(undefined);
  const [view, setView] = useState<View>('files');
  const [announcement, setAnnouncement] = useState('');
  // A pending sign-in while a session's token expired: the view stays, the dialog asks.
  const [reauthentication, setReauthentication] = useState<{ readonly resolve: (token: Token) => void } | undefined>(undefined);

  // A layout effect: the tab's title changes in the same update as the view's heading, never after it.
  useLayoutEffect(() => {
    document.title = session === undefined ? 'Data File Gateway: sign in' : `${viewTitles[view]}: Data File Gateway`;
  }, [session, view]);

  const start = (clientId: string, token: Token): void => {
    const api = new GatewayApi(token, () => new Promise<Token>((resolve) => setReauthentication({ resolve })));
    setSession({ clientId, api });
    setAnnouncement(`Signed in as ${clientId}.`);
  };

  if (session === undefined) {
    return (
      <main class="sign-in-page">
        <h1>Data File Gateway</h1>
        <p>Sign in with the client id and secret your data vendor gave you.</p>
        <SignInForm onSignedIn={start} />
      </main>
    );
  }
  return (
    <>
      <header class="top">
        <h1 id="view-title">{viewTitles[view]}</h1>
        <nav aria-label="Portal">
          <button type="button" aria-current={view === 'files' ? 'page' : undefined} onClick={() => setView('files')}>
            Files
          </button>
          <button type="button" aria-current={view === 'changes' ? 'page' : undefined} onClick={() => setView('changes')}>
            What's new
          </button>
          <button type="button" aria-current={view === 'account' ? 'page' : undefined} onClick={() => setView('account')}>
            Account
          </button>
        </nav>
        <p class="who">
          Signed in as <strong>{session.clientId}</strong>
        </p>
        <button
          type="button"
          onClick={() => {
            session.api.forget();
            setSession(undefined);
            setView('files');
          }}
        >
          Sign out
        </button>
      </header>
      <main>
        {view === 'files' ? (
          <FilesView api={session.api} announce={setAnnouncement} />
        ) : view === 'changes' ? (
          <WhatsNewView api={session.api} announce={setAnnouncement} />
        ) : (
          <AccountView api={session.api} />
        )}
      </main>
      <p class="visually-hidden" role="status" aria-live="polite">
        {announcement}
      </p>
      {reauthentication !== undefined && (
        <Modal titleId="sign-in-again-title" onClose={undefined}>
          <h2 id="sign-in-again-title">Your session has expired</h2>
          <p>Sign in again to carry on where you were.</p>
          <SignInForm
            clientId={session.clientId}
            onSignedIn={(_clientId, token) => {
              reauthentication.resolve(token);
              setReauthentication(undefined);
            }}
          />
        </Modal>
      )}
    </>
  );
}

function SignInForm(props: { readonly clientId?: string; readonly onSignedIn: (clientId: string, token: Token) => void }) {
  const [clientId, setClientId] = useState(props.clientId ?? '');
  const [secret, setSecret] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event): Promise<void> => {
    // Handled here: the page's policy allows no form submission anywhere (form-action 'none').
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const token = await signIn(clientId.trim(), secret);
      setSecret('');
      props.onSignedIn(clientId.trim(), token);
    } catch (failure) {
      setError(failure instanceof SignInFailed ? failure.message : 'Signing in failed.');
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="sign-in" onSubmit={(event) => void submit(event)} aria-describedby={error === undefined ? undefined : 'sign-in-error'}>
      <label for="client-id">Client id</label>
      <input id="client-id" name="client_id" autocomplete="username" required value={clientId} onInput={(event) => setClientId(event.currentTarget.value)} />
      <label for="client-secret">Client secret</label>
      <input
        id="client-secret"
        name="client_secret"
        type="password"
        autocomplete="off"
        required
        value={secret}
        onInput={(event) => setSecret(event.currentTarget.value)}
      />
      {error !== undefined && (
        <p id="sign-in-error" class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}

/** A modal `<dialog>`: the browser keeps focus inside it and closes it on Escape. */
function Modal(props: { readonly titleId: string; readonly onClose: (() => void) | undefined; readonly children: ComponentChildren }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (element !== null && !element.open) element.showModal();
    return () => element?.close();
  }, []);
  return (
    <dialog
      ref={dialog}
      aria-labelledby={props.titleId}
      onCancel={(event) => {
        // A sign-in that a call waits for cannot be dismissed.
        if (props.onClose === undefined) event.preventDefault();
        else props.onClose();
      }}
    >
      {props.children}
    </dialog>
  );
}

function FilesView(props: { readonly api: GatewayApi; readonly announce: (text: string) => void }) {
  const { api } = props;
  const [files, setFiles] = useState<PortalFile[] | undefined>(undefined);
  const [progress, setProgress] = useState('Loading your files…');
  const [note, setNote] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [s3Api, setS3Api] = useState<S3Api | null>(null);
  const [query, setQuery] = useState('');
  const [folder, setFolder] = useState('');
  const [flat, setFlat] = useState(false);
  const [sort, setSort] = useState<SortOrder>({ key: 'name', descending: false });
  const [details, setDetails] = useState<PortalFile | undefined>(undefined);

  useEffect(() => {
    let current = true;
    void (async () => {
      try {
        const [config, { files: listed, last }] = await Promise.all([
          portalConfig(),
          api.listing(({ loaded, count, attempt }) => {
            if (!current) return;
            const again = attempt > 1 ? 'Your files changed while they were loading: loading them again…' : 'Loading your files…';
            setProgress(`${again} ${loaded.toLocaleString('en')} of ${count.toLocaleString('en')}`);
          }),
        ]);
        if (!current) return;
        setS3Api(config.s3Api);
        setFiles(portalFilesOf(listed));
        if (last.truncated && last.nextCursor === undefined) {
          setNote(`The gateway listed ${listed.length.toLocaleString('en')} of your ${last.count.toLocaleString('en')} files.`);
        }
      } catch (failure) {
        if (!current) return;
        setError(
          failure instanceof ApiRefused && failure.status === 403
            ? `Your subscription gives no access to files right now: ${failure.message}`
            : failure instanceof ApiRefused && failure.status === 404
              ? 'No catalog has been set up for this client yet.'
              : isCursorExpired(failure)
                ? `Your files kept changing while they were loading (${listingAttempts} tries): reload the page in a moment.`
                : `Your files could not be loaded: ${failure instanceof Error ? failure.message : String(failure)}`,
        );
      }
    })();
    return () => {
      current = false;
    };
  }, [api]);

  const rows = useMemo(() => (files === undefined ? [] : tableRows(files, { folder, query, sort, flat })), [files, folder, query, sort, flat]);
  const totals = useMemo(() => catalogTotals(files ?? []), [files]);
  const fileCount = rows.filter((row) => row.kind === 'file').length;
  const folderCount = rows.length - fileCount;

  const download = async (file: PortalFile): Promise<void> => {
    setError(undefined);
    try {
      const link = await api.downloadLink(file.symbol);
      // The browser's own download manager fetches it: no bytes pass through this tab's memory,
      // and pause and resume work as for any download.
      const anchor = document.createElement('a');
      anchor.href = link.url;
      anchor.download = '';
      anchor.rel = 'noopener';
      document.body.append(anchor);
      anchor.click();
      anchor.remove();
      props.announce(`Download of ${file.symbol} started.`);
    } catch (failure) {
      const message = failure instanceof Error ? failure.message : String(failure);
      setError(`${file.symbol} could not be downloaded: ${message}`);
    }
  };

  const sortBy = (key: SortKey): void => setSort((current) => ({ key, descending: current.key === key ? !current.descending : false }));

  if (error !== undefined && files === undefined) {
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  }
  if (files === undefined) return <p role="status">{progress}</p>;
  return (
    <section aria-labelledby="files-heading" class="files-view">
      <h2 id="files-heading" class="visually-hidden">
        Files
      </h2>
      <p id="catalog-totals" class="totals">
        In your catalog: <strong>{`${totals.files.toLocaleString('en')} file${totals.files === 1 ? '' : 's'}`}</strong>,{' '}
        <strong>{formatSize(totals.bytes)}</strong> {`(${totals.bytes.toLocaleString('en')} bytes)`}
      </p>
      <div class="toolbar">
        <div class="search">
          <label for="search">Search</label>
          <input
            id="search"
            type="search"
            placeholder="Symbol, description or path"
            value={query}
            onInput={(event) => setQuery(event.currentTarget.value)}
            aria-controls="file-count"
          />
        </div>
        <fieldset class="layout">
          <legend>Show</legend>
          <input type="radio" id="layout-folders" name="layout" checked={!flat} onChange={() => setFlat(false)} aria-controls="file-count" />
          <label for="layout-folders">Folders</label>
          <input type="radio" id="layout-flat" name="layout" checked={flat} onChange={() => setFlat(true)} aria-controls="file-count" />
          <label for="layout-flat">Every file</label>
        </fieldset>
      </div>
      <nav aria-label="Folder" class="breadcrumb">
        <ol>
          <li>
            <button type="button" class="link" aria-current={folder === '' ? 'location' : undefined} onClick={() => setFolder('')}>
              All files
            </button>
          </li>
          {breadcrumbOf(folder).map((crumb) => (
            <li>
              <button type="button" class="link" aria-current={crumb.prefix === folder ? 'location' : undefined} onClick={() => setFolder(crumb.prefix)}>
                {crumb.name}
              </button>
            </li>
          ))}
        </ol>
      </nav>
      <p id="file-count" class="count" role="status" aria-live="polite">
        {`${fileCount.toLocaleString('en')} file${fileCount === 1 ? '' : 's'}`}
        {folderCount > 0 && `, ${folderCount.toLocaleString('en')} folder${folderCount === 1 ? '' : 's'}`}
        {query.trim() !== '' && ` matching “${query.trim()}”`}
      </p>
      {note !== undefined && <p class="note">{note}</p>}
      {error !== undefined && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <FileTable
        rows={rows}
        sort={sort}
        onSort={sortBy}
        onOpenFolder={(prefix) => {
          setFolder(prefix);
          setQuery('');
        }}
        onDetails={setDetails}
        onDownload={(file) => void download(file)}
        resetKey={`${folder}\n${query}\n${flat}`}
      />
      {details !== undefined && (
        <DetailsDialog api={api} file={details} s3Api={s3Api} onClose={() => setDetails(undefined)} onDownload={() => void download(details)} />
      )}
    </section>
  );
}

function DetailsDialog(props: {
  readonly api: GatewayApi;
  readonly file: PortalFile;
  readonly s3Api: S3Api | null;
  readonly onClose: () => void;
  readonly onDownload: () => void;
}) {
  const { file } = props;
  const [info, setInfo] = useState<FileInfo | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [copied, setCopied] = useState('');
  useEffect(() => {
    props.api.info(file.symbol).then(setInfo, (failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)));
  }, [file.symbol]);
  const commands = commandsFor({ origin: window.location.origin, symbol: file.symbol, path: file.path, s3Api: props.s3Api });
  const md5 = info?.httpMetadata['contentMd5'] ?? file.md5;
  const releaseWindow = info === undefined ? file.window : releaseWindowOf(info);
  const copy = async (label: string, text: string): Promise<void> => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(`${label} command copied.`);
    } catch {
      setCopied(`Copying is not allowed here: select the ${label} command and copy it.`);
    }
  };
  return (
    <Modal titleId="details-title" onClose={props.onClose}>
      <div class="details">
        <h2 id="details-title">{file.symbol}</h2>
        <p>{file.description}</p>
        <dl>
          <dt>Storage path</dt>
          <dd class="mono">{file.path}</dd>
          <dt>Size</dt>
          <dd>{`${formatSize(info?.size ?? file.size)} (${(info?.size ?? file.size).toLocaleString('en')} bytes)`}</dd>
          <dt>Uploaded</dt>
          <dd>{formatTime(info?.uploaded ?? file.uploaded)}</dd>
          {releaseWindow !== undefined && (
            <>
              <dt>Release window</dt>
              <dd>{formatWindow(releaseWindow)}</dd>
            </>
          )}
          <dt>ETag</dt>
          <dd class="mono">{info?.etag ?? file.etag}</dd>
          <dt>MD5</dt>
          <dd class="mono">{md5 ?? 'not recorded by storage'}</dd>
          {info?.httpMetadata['contentType'] !== undefined && (
            <>
              <dt>Content type</dt>
              <dd class="mono">{info.httpMetadata['contentType']}</dd>
            </>
          )}
        </dl>
        {error !== undefined && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <h3>Commands</h3>
        <p class="hint">Each reads your credentials from DFG_CLIENT_ID and DFG_CLIENT_SECRET; none holds a secret.</p>
        {commands.map((command) => (
          <div class="command" data-command={command.id}>
            <div class="command-head">
              <h4 id={`command-${command.id}`}>{command.label}</h4>
              <button type="button" onClick={() => void copy(command.label, command.text)} aria-describedby={`command-${command.id}`}>
                Copy
              </button>
            </div>
            <pre tabIndex={0} aria-labelledby={`command-${command.id}`}>
              <code>{command.text}</code>
            </pre>
          </div>
        ))}
        <p role="status" aria-live="polite" class="copied">
          {copied}
        </p>
        <div class="dialog-actions">
          <button type="button" class="download" onClick={props.onDownload}>
            Download<span class="visually-hidden"> {file.symbol}</span>
          </button>
          <button type="button" onClick={props.onClose}>
            Close
          </button>
        </div>
      </div>
    </Modal>
  );
}

/** Seconds each request of the open view waits for an event. */
const whatsNewWaitSeconds = 25;
/** Seconds before asking again after the gateway could not answer. */
const whatsNewRetrySeconds = 5;

/** Resolves after `seconds`, or at once when `signal` aborts. */
function pause(seconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, seconds * 1000);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

/**
 * The caller's recent events, newest first: read from the oldest the feed keeps, then followed
 * with long polls for as long as the view is open (leaving it stops them).
 */
function WhatsNewView(props: { readonly api: GatewayApi; readonly announce: (text: string) => void }) {
  const { api, announce } = props;
  const [events, setEvents] = useState<FeedEvent[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    const stop = new AbortController();
    void (async () => {
      let cursor: string | undefined;
      let shown: FeedEvent[] = [];
      let caughtUp = false;
      while (!stop.signal.aborted) {
        try {
          const page = await api.changes(cursor, caughtUp ? whatsNewWaitSeconds : 0, stop.signal);
          if (stop.signal.aborted) return;
          shown = newestFirst(shown, page.events);
          setEvents(shown);
          setError(undefined);
          if (caughtUp && page.events.length > 0) announce(`${page.events.length} new event${page.events.length === 1 ? '' : 's'}.`);
          cursor = page.nextCursor;
          caughtUp ||= !page.hasMore;
        } catch (failure) {
          if (stop.signal.aborted) return;
          if (isCursorExpired(failure)) {
            // Older than the feed keeps (the page was open for weeks): read it again from the start.
            cursor = undefined;
            shown = [];
            caughtUp = false;
            continue;
          }
          setError(`Recent changes could not be loaded: ${failure instanceof Error ? failure.message : String(failure)} Trying again…`);
          await pause(whatsNewRetrySeconds, stop.signal);
        }
      }
    })();
    return () => stop.abort();
  }, [api]);
  return (
    <section aria-labelledby="view-title" class="whats-new">
      <p class="hint">Files released, updated and withdrawn in your catalog, newest first. This list updates while it is open.</p>
      {error !== undefined && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {events === undefined ? (
        <p role="status">Loading recent changes…</p>
      ) : events.length === 0 ? (
        <p role="status">Nothing has changed in your catalog recently.</p>
      ) : (
        <ol class="changes">
          {events.map((event) => (
            <li key={event.id} data-event={event.id} class={`change ${event.type.replace('file.', '')}`}>
              <span class="change-type">{changeLabel(event.type)}</span> <strong class="change-symbol">{event.file.symbol}</strong>{' '}
              <span class="mono change-path">{event.file.fileName}</span>
              <span class="change-meta">
                {formatTime(event.time)}
                {event.type !== 'file.withdrawn' && ` · ${formatSize(event.file.size)}`}
              </span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function AccountView(props: { readonly api: GatewayApi }) {
  const [account, setAccount] = useState<Record<string, unknown> | null | undefined>(undefined);
  useEffect(() => {
    props.api.account().then(
      (answer) => setAccount(answer ?? null),
      () => setAccount(null),
    );
  }, [props.api]);
  return (
    <section aria-labelledby="view-title" class="account">
      {account === undefined ? (
        <p role="status">Loading your account…</p>
      ) : account === null ? (
        <p role="status">The account service is not available on this gateway: your term and quota cannot be shown here.</p>
      ) : (
        <AccountDetails account={account} />
      )}
    </section>
  );
}

/** The shape of `GET /account` (openapi.yaml `Account`), read defensively: a field missing is shown as such. */
interface AccountAnswer {
  readonly clientId?: unknown;
  readonly term?: { readonly validFrom?: unknown; readonly validUntil?: unknown; readonly active?: unknown };
  readonly quota?: { readonly monthlyBytes?: unknown; readonly period?: unknown; readonly used?: unknown; readonly remaining?: unknown; readonly resetsAt?: unknown };
}

function AccountDetails(props: { readonly account: Record<string, unknown> }) {
  const account = props.account as AccountAnswer;
  const text = (value: unknown): string => (typeof value === 'string' ? value : '');
  const time = (value: unknown): string | undefined => (typeof value === 'string' ? formatTime(value) : undefined);
  const bytes = (value: unknown): string => (typeof value === 'number' ? formatSize(value) : '');
  const from = time(account.term?.validFrom);
  const until = time(account.term?.validUntil);
  const active = account.term?.active === true;
  const quota = account.quota;
  return (
    <>
      {quota !== undefined && <QuotaBar quota={quota} />}
      <dl>
        <dt>Client</dt>
        <dd>{text(account.clientId)}</dd>
        <dt>Subscription</dt>
        <dd>{active ? 'Active' : 'Not active'}</dd>
        <dt>Term</dt>
        <dd>{from === undefined && until === undefined ? 'No end date' : `${from ?? 'from the start'} – ${until ?? 'no end date'}`}</dd>
        <dt>Monthly quota</dt>
        <dd>{quota === undefined ? 'No monthly limit' : `${bytes(quota.monthlyBytes)} per month (${text(quota.period)})`}</dd>
        {quota !== undefined && (
          <>
            <dt>Used this month</dt>
            <dd>{bytes(quota.used)}</dd>
            <dt>Left this month</dt>
            <dd>{bytes(quota.remaining)}</dd>
            <dt>Resets</dt>
            <dd>{time(quota.resetsAt) ?? ''}</dd>
          </>
        )}
      </dl>
    </>
  );
}

/** From this share of the quota used on, the bar turns to the warning colour. */
const quotaWarningShare = 0.9;

/**
 * The month's quota as a bar: a `meter` (WAI-ARIA 1.2: a value within a known range, not a task's
 * progress) whose values are the bytes, and whose text is what a screen reader says instead.
 */
function QuotaBar(props: { readonly quota: NonNullable<AccountAnswer['quota']> }) {
  const { monthlyBytes, used, remaining, resetsAt } = props.quota;
  // A quota of 0 bytes has no bar to fill: the list below says it.
  if (typeof monthlyBytes !== 'number' || typeof used !== 'number' || monthlyBytes <= 0) return null;
  // A quota lowered mid-month can leave more used than it allows: the bar stops at full, the text says all.
  const shown = Math.min(used, monthlyBytes);
  const share = shown / monthlyBytes;
  const left = typeof remaining === 'number' ? `, ${formatSize(remaining)} left` : '';
  const resets = typeof resetsAt === 'string' ? `, resets ${formatTime(resetsAt)}` : '';
  const text = `${formatSize(used)} of ${formatSize(monthlyBytes)} used${left}${resets}`;
  return (
    <div class="quota">
      <p id="quota-label" class="quota-label">
        Monthly quota
      </p>
      <div
        class={share >= quotaWarningShare ? 'quota-bar high' : 'quota-bar'}
        role="meter"
        aria-labelledby="quota-label"
        aria-valuemin={0}
        aria-valuemax={monthlyBytes}
        aria-valuenow={shown}
        aria-valuetext={text}
      >
        <div class="quota-fill" style={{ width: `${(share * 100).toFixed(2)}%` }} />
      </div>
      <p id="quota-text" class="quota-text">
        {text}
      </p>
    </div>
  );
}

const root = document.getElementById('app');
if (root !== null) render(<App />, root);
