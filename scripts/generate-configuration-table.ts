import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CONFIG_TABLE, CONFIG_VARIABLES } from '../src/app/config.js';
import { packageRoot } from '../src/app/package-root.js';

/** The guide whose "## Configuration" section holds the table. */
export const operatorsGuidePath = join(packageRoot(), 'docs', 'operators.md');

// Invisible on GitHub; they tell whoever edits the guide where the table really comes from.
const BEGIN = '<!-- generated from CONFIG_TABLE in src/app/config.ts by `npm run docs:config`: edit it there -->';
const END = '<!-- end of the generated configuration table -->';

/** The markdown table of every variable: name, default and meaning, in the order of `CONFIG_TABLE`. */
export function configurationTable(): string {
  // A `|` in a cell would end it early.
  const cell = (text: string): string => text.replaceAll('|', '\\|');
  const rows = CONFIG_VARIABLES.map((name) => {
    const { documentedDefault, meaning } = CONFIG_TABLE[name];
    return `| \`${name}\` | ${cell(documentedDefault)} | ${cell(meaning)} |`;
  });
  return ['| Variable | Default | Meaning |', '| --- | --- | --- |', ...rows].join('\n');
}

/** `guide` with the text between its two markers replaced by `configurationTable()`. */
export function withConfigurationTable(guide: string): string {
  const begin = guide.indexOf(BEGIN);
  const end = guide.indexOf(END);
  if (begin === -1 || end < begin) throw new Error(`docs/operators.md has lost the markers of its configuration table:\n${BEGIN}\n${END}`);
  return `${guide.slice(0, begin + BEGIN.length)}\n\n${configurationTable()}\n\n${guide.slice(end)}`;
}

/** Rewrites the table in docs/operators.md; returns whether it changed. */
export async function writeConfigurationTable(): Promise<boolean> {
  const guide = await readFile(operatorsGuidePath, 'utf8');
  const updated = withConfigurationTable(guide);
  if (updated !== guide) await writeFile(operatorsGuidePath, updated, 'utf8');
  return updated !== guide;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const changed = await writeConfigurationTable();
  process.stdout.write(`${changed ? 'rewrote' : 'unchanged:'} the configuration table of ${operatorsGuidePath}\n`);
}
