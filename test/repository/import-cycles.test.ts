import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect } from 'chai';
import ts from 'typescript';
import { packageRoot } from '../../src/app/package-root.js';

const root = packageRoot();

/** The source trees that must each form an import graph without circles. */
const TREES = ['src', 'client/src'];

function typeScriptFilesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * The .ts files `file` imports through relative specifiers (`./x.js` is `./x.ts` under NodeNext),
 * `import type` and `export ... from` included: a circle of types is still a circle of modules.
 */
function relativeImportsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map(({ fileName }) => fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => resolve(dirname(file), specifier.replace(/\.js$/, '.ts')))
    .filter((target) => target.endsWith('.ts') && existsSync(target));
}

/** The circles a depth-first walk of `imports` (module → modules it imports) finds, each from its first module back to it. */
function importCycles(imports: ReadonlyMap<string, readonly string[]>): string[][] {
  const done = new Set<string>();
  const onPath: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    const position = onPath.indexOf(file);
    if (position !== -1) {
      cycles.push([...onPath.slice(position), file]);
      return;
    }
    if (done.has(file)) return;
    onPath.push(file);
    for (const target of imports.get(file) ?? []) visit(target);
    onPath.pop();
    done.add(file);
  };
  for (const file of imports.keys()) visit(file);
  return cycles;
}

describe('the import graph', function () {
  for (const tree of TREES) {
    describe(`of ${tree}/`, function () {
      it('has relative imports to walk (the walk finds the modules)', function () {
        const files = typeScriptFilesUnder(join(root, tree));
        expect(files.some((file) => relativeImportsOf(file).length > 0)).to.equal(true);
      });

      it('has no circle: no module imports, through others, a module that imports it', function () {
        const files = typeScriptFilesUnder(join(root, tree));
        const cycles = importCycles(new Map(files.map((file) => [file, relativeImportsOf(file)]))).map((cycle) => cycle.map((file) => relative(root, file)).join(' → '));
        expect(cycles, `import circles:\n${cycles.join('\n')}`).to.deep.equal([]);
      });
    });
  }

  describe('walked over a graph with circles', function () {
    it('reports a circle of two modules and one through three, each once', function () {
      const graph = new Map([
        ['a', ['b']],
        ['b', ['a', 'c']],
        ['c', ['d']],
        ['d', ['e']],
        ['e', ['c']],
      ]);
      expect(importCycles(graph)).to.deep.equal([
        ['a', 'b', 'a'],
        ['c', 'd', 'e', 'c'],
      ]);
    });

    it('reports nothing for a diamond (two paths to one module are no circle)', function () {
      expect(importCycles(new Map([['a', ['b', 'c']], ['b', ['d']], ['c', ['d']], ['d', []]]))).to.deep.equal([]);
    });
  });
});
