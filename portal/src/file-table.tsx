import { elementScroll, observeElementOffset, observeElementRect, Virtualizer } from '@tanstack/virtual-core';
import { useLayoutEffect, useReducer, useRef, useState } from 'preact/hooks';
import type { RefObject } from 'preact';
import { formatSize, formatTime, formatWindow, type PortalFile, type SortKey, type SortOrder, type TableRow } from './catalog.js';

/** Every row is this tall (styles.css says the same), so the list needs no measuring. */
const rowHeight = 44;

/**
 * Which widths show a column (styles.css): `always`; `wide`, not at phone widths; `widest`, not
 * below 1180 px either, so that a window of 720 to 1180 px keeps room for the description. The
 * details dialog shows every field.
 */
type Shown = 'always' | 'wide' | 'widest';

const shownClass: Readonly<Record<Shown, string>> = { always: '', wide: ' wide-only', widest: ' wide-only widest-only' };

const columns: readonly { readonly key: SortKey; readonly label: string; readonly shown: Shown }[] = [
  { key: 'name', label: 'Symbol', shown: 'always' },
  { key: 'description', label: 'Description', shown: 'wide' },
  { key: 'path', label: 'Storage path', shown: 'widest' },
  { key: 'size', label: 'Size', shown: 'always' },
  { key: 'uploaded', label: 'Uploaded', shown: 'widest' },
  { key: 'window', label: 'Release window', shown: 'wide' },
];

/**
 * Windowing by @tanstack/virtual-core: only the rows in view (and a few either side) are in the DOM,
 * so 100,000 files cost as little to show as 100.
 */
function useRowVirtualizer(count: number, scrollElement: RefObject<HTMLDivElement>): Virtualizer<HTMLDivElement, HTMLTableRowElement> {
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const options = {
    count,
    getScrollElement: () => scrollElement.current,
    estimateSize: () => rowHeight,
    overscan: 8,
    scrollToFn: elementScroll,
    observeElementRect,
    observeElementOffset,
    onChange: () => rerender(undefined),
  };
  const [virtualizer] = useState(() => new Virtualizer<HTMLDivElement, HTMLTableRowElement>(options));
  virtualizer.setOptions(options);
  useLayoutEffect(() => virtualizer._didMount(), []);
  useLayoutEffect(() => virtualizer._willUpdate());
  return virtualizer;
}

export interface FileTableProps {
  readonly rows: readonly TableRow[];
  readonly sort: SortOrder;
  readonly onSort: (key: SortKey) => void;
  readonly onOpenFolder: (prefix: string) => void;
  readonly onDetails: (file: PortalFile) => void;
  readonly onDownload: (file: PortalFile) => void;
  /** Changes whenever the rows do for another reason than sorting (folder, search): scroll back to the top. */
  readonly resetKey: string;
}

export function FileTable(props: FileTableProps) {
  const scrollElement = useRef<HTMLDivElement>(null);
  const virtualizer = useRowVirtualizer(props.rows.length, scrollElement);
  useLayoutEffect(() => {
    scrollElement.current?.scrollTo({ top: 0 });
  }, [props.resetKey]);
  const items = virtualizer.getVirtualItems();
  const before = items[0]?.start ?? 0;
  const after = virtualizer.getTotalSize() - (items[items.length - 1]?.end ?? 0);
  return (
    <div class="table-scroll" ref={scrollElement} tabIndex={0} role="region" aria-label="Your files (scrollable)">
      <table class="files" aria-rowcount={props.rows.length + 1}>
        <thead>
          <tr aria-rowindex={1}>
            {columns.map((column) => {
              const sorted = props.sort.key === column.key;
              return (
                <th scope="col" class={`col-${column.key}${shownClass[column.shown]}`} aria-sort={sorted ? (props.sort.descending ? 'descending' : 'ascending') : 'none'}>
                  <button type="button" class="sort" onClick={() => props.onSort(column.key)}>
                    {column.label}
                    <span aria-hidden="true" class="sort-mark">{sorted ? (props.sort.descending ? ' ▼' : ' ▲') : ''}</span>
                  </button>
                </th>
              );
            })}
            <th scope="col" class="col-actions">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {before > 0 && (
            <tr class="spacer" aria-hidden="true">
              <td colSpan={columns.length + 1} style={{ height: `${before}px` }} />
            </tr>
          )}
          {items.map((item) => {
            const row = props.rows[item.index];
            return row === undefined ? null : <Row key={item.key} index={item.index} row={row} {...props} />;
          })}
          {after > 0 && (
            <tr class="spacer" aria-hidden="true">
              <td colSpan={columns.length + 1} style={{ height: `${after}px` }} />
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}

function Row(props: FileTableProps & { readonly row: TableRow; readonly index: number }) {
  const { row } = props;
  if (row.kind === 'folder') {
    return (
      <tr class="row folder" aria-rowindex={props.index + 2}>
        <td class="col-name">
          <button type="button" class="link" onClick={() => props.onOpenFolder(row.prefix)}>
            <svg class="folder-icon" aria-hidden="true" viewBox="0 0 16 16" width="16" height="16">
              <path d="M1 3.5A1.5 1.5 0 0 1 2.5 2h3.6l1.5 1.5h5.9A1.5 1.5 0 0 1 15 5v7.5a1.5 1.5 0 0 1-1.5 1.5h-11A1.5 1.5 0 0 1 1 12.5z" />
            </svg>
            <span class="name">{`${row.name}/`}</span>
            <span class="visually-hidden"> (folder)</span>
          </button>
        </td>
        <td class="wide-only">{`${row.files.toLocaleString('en')} file${row.files === 1 ? '' : 's'}`}</td>
        <td class="wide-only widest-only mono">{row.prefix}</td>
        <td class="num">{formatSize(row.size)}</td>
        <td class="wide-only widest-only" />
        <td class="wide-only" />
        <td />
      </tr>
    );
  }
  const { file } = row;
  const windowText = formatWindow(file.window);
  return (
    <tr class="row" aria-rowindex={props.index + 2} data-symbol={file.symbol}>
      <td class="col-name">
        <button type="button" class="link" onClick={() => props.onDetails(file)}>
          <span class="name">{file.symbol}</span>
          <span class="visually-hidden"> (details)</span>
        </button>
      </td>
      <td class="wide-only" title={file.description}>
        {file.description}
      </td>
      <td class="wide-only widest-only mono" title={file.path}>
        {file.path}
      </td>
      <td class="num">{formatSize(file.size)}</td>
      <td class="wide-only widest-only time">{formatTime(file.uploaded)}</td>
      <td class="wide-only time col-window" title={windowText === '' ? undefined : windowText}>
        {windowText}
      </td>
      <td class="col-actions">
        <button type="button" class="download" onClick={() => props.onDownload(file)}>
          Download<span class="visually-hidden"> {file.symbol}</span>
        </button>
      </td>
    </tr>
  );
}
