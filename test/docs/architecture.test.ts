import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { packageRoot } from '../../src/app/package-root.js';
import { sectionOf } from '../support/markdown.js';

/** The paths, from the repository's root, in the "the one file" column of the rule table. */
function filesOfRuleTable(): string[] {
  const guide = readFileSync(join(packageRoot(), 'docs', 'architecture.md'), 'utf8');
  const rows = sectionOf(guide, '## One file per rule').split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| rule') && !line.startsWith('| ---'));
  return rows.flatMap((row) => [...(row.split('|').at(-2) ?? '').matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? ''));
}

describe('the rule table of docs/architecture.md', function () {
  it('names at least one file for each of its rules', function () {
    expect(filesOfRuleTable()).to.have.length.of.at.least(8);
  });

  it('names only files that exist', function () {
    const missing = filesOfRuleTable().filter((path) => !existsSync(join(packageRoot(), path)));
    expect(missing, `files the rule table names that do not exist: ${missing.join(', ')}`).to.deep.equal([]);
  });
});

describe('the layout of docs/architecture.md', function () {
  it('names every folder of src/', function () {
    const layout = sectionOf(readFileSync(join(packageRoot(), 'docs', 'architecture.md'), 'utf8'), '## The layout');
    const folders = readdirSync(join(packageRoot(), 'src'), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${entry.name}/`);
    const missing = folders.filter((folder) => !new RegExp(`(^|\\s|/)${folder.replace('.', '\\.')}(\\s|$)`, 'm').test(layout));
    expect(missing, `folders of src/ the layout does not name: ${missing.join(', ')}`).to.deep.equal([]);
  });
});
