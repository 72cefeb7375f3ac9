import { escapeControls } from './terminal-text.js';

/** Rows as left-aligned text columns under a header, for people (control characters escaped); scripts use `--json`. */
export function formatTable(columns: readonly string[], rows: readonly (readonly (string | number | undefined)[])[]): string {
  const cells = [columns, ...rows.map((row) => row.map((cell) => (cell === undefined ? '' : escapeControls(String(cell)))))];
  const widths = columns.map((_, index) => Math.max(...cells.map((row) => (row[index] ?? '').length)));
  return cells.map((row) => row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0))).join('  ').trimEnd()).join('\n') + '\n';
}

/** 1536 -> "1.5 KiB". */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}
