import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { CONFIG_TABLE, CONFIG_VARIABLES } from '../../src/app/config.js';
import { operatorsGuidePath, withConfigurationTable } from '../../scripts/generate-configuration-table.js';
import { sectionOf } from '../support/markdown.js';

const guide = (): string => readFileSync(operatorsGuidePath, 'utf8');

/** The variable names of the table rows in docs/operators.md's "## Configuration" section, in order. */
function documentedVariables(): string[] {
  return [...sectionOf(guide(), '## Configuration').matchAll(/^\| `([A-Z0-9_]+)` \| /gm)].map((match) => match[1] ?? '');
}

// `loadConfig` reads exactly CONFIG_VARIABLES (test/app/config.test.ts checks that), and the table is
// generated from CONFIG_TABLE: a variable, default or meaning changed in config.ts alone fails here.
describe('the configuration table of docs/operators.md', function () {
  it('is exactly the table generated from CONFIG_TABLE in src/app/config.ts', function () {
    const text = guide();
    expect(withConfigurationTable(text) === text, 'docs/operators.md\'s configuration table differs from CONFIG_TABLE: run `npm run docs:config`').to.equal(true);
  });

  it('stands in the "## Configuration" section, a row per variable in the order of CONFIG_VARIABLES', function () {
    expect(documentedVariables()).to.deep.equal([...CONFIG_VARIABLES]);
  });

  it('states for each whole number no range but the one it is read with', function () {
    const misstated = CONFIG_VARIABLES.flatMap((name) => {
      const { bounds, meaning } = CONFIG_TABLE[name];
      if (bounds === undefined) return [];
      const stated = [...meaning.matchAll(/(\d+)–(\d+)/g)].map((match) => `${match[1]}–${match[2]}`);
      return stated.filter((range) => range !== `${bounds.min}–${bounds.max}`).map((range) => `${name}: says ${range}, reads ${bounds.min}–${bounds.max}`);
    });
    expect(misstated).to.deep.equal([]);
  });
});
