import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { CONFIG_VARIABLES } from '../../src/app/config.js';
import { packageRoot } from '../../src/app/package-root.js';
import { sectionOf } from '../support/markdown.js';

/** The variable names of the table rows in docs/operators.md's "## Configuration" section, in order. */
function documentedVariables(): string[] {
  const guide = readFileSync(join(packageRoot(), 'docs', 'operators.md'), 'utf8');
  return [...sectionOf(guide, '## Configuration').matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((match) => match[1] ?? '');
}

// `loadConfig` reads exactly CONFIG_VARIABLES (test/app/config.test.ts checks that), so this table
// is compared with CONFIG_VARIABLES: a variable added to config.ts without a row fails here.
describe('the configuration table of docs/operators.md', function () {
  it('has a row for every variable loadConfig reads (CONFIG_VARIABLES)', function () {
    const documented = new Set(documentedVariables());
    const missing = CONFIG_VARIABLES.filter((name) => !documented.has(name));
    expect(missing, `variables loadConfig reads that docs/operators.md's configuration table does not list: ${missing.join(', ')}`).to.deep.equal([]);
  });

  it('has no row for a variable loadConfig does not read', function () {
    const read = new Set<string>(CONFIG_VARIABLES);
    const extra = documentedVariables().filter((name) => !read.has(name));
    expect(extra, `variables docs/operators.md documents that loadConfig does not read (not in CONFIG_VARIABLES): ${extra.join(', ')}`).to.deep.equal([]);
  });

  it('lists each variable once, in the order of CONFIG_VARIABLES', function () {
    expect(documentedVariables()).to.deep.equal([...CONFIG_VARIABLES]);
  });
});
