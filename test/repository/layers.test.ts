import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { expect } from 'chai';
import ts from 'typescript';
import { packageRoot } from '../../src/app/package-root.js';

/**
 * The hexagon's rules, read off the import graph of `src/` (docs/architecture.md, "The layers"):
 *
 * - `src/domain` imports nothing but `src/domain`: no package, no Node module.
 * - `src/application` imports nothing but `src/domain` and `src/application`.
 * - An adapter (`src/adapters/<name>/`) imports no other adapter. The two libraries of formats,
 *   `src/http-wire/` (what the two HTTP doors speak) and `src/text/` (what operators write), import
 *   no adapter and no wiring.
 * - Nothing outside `src/app` imports `src/app` (the wiring depends on everything, nothing on it).
 */

const root = packageRoot();
const LIBRARIES = new Set(['http-wire', 'text']);

interface Import {
  /** The importing file, from the repository's root, `/`-separated. */
  readonly from: string;
  /** The specifier as written. */
  readonly specifier: string;
  /** The imported file from the repository's root for a relative specifier; `undefined` for a package or Node module. */
  readonly to: string | undefined;
}

function importsUnder(folder: string): Import[] {
  const files = readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
  return files.flatMap((file) =>
    ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map(({ fileName }) => ({
      from: relative(root, file).split(sep).join('/'),
      specifier: fileName,
      to: fileName.startsWith('.') ? relative(root, resolve(dirname(file), fileName)).split(sep).join('/').replace(/\.js$/, '.ts') : undefined,
    })),
  );
}

/** The layer of a file of `src/`: `domain`, `application`, `app`, `http-wire`, `text`, or `adapters/<name>`. */
function layerOf(path: string): string {
  const [, top, adapter] = path.split('/');
  return top === 'adapters' ? `adapters/${adapter}` : (top ?? '');
}

/** Every import that breaks one of the rules above, as `from -> specifier: why`. */
function layerViolations(imports: readonly Import[]): string[] {
  const violations: string[] = [];
  for (const { from, specifier, to } of imports) {
    const layer = layerOf(from);
    const target = to === undefined ? undefined : layerOf(to);
    const says = (why: string): void => void violations.push(`${from} -> ${specifier}: ${why}`);
    if (target === 'app' && layer !== 'app') says('only src/app may import the wiring');
    if (layer === 'domain' && target !== 'domain') says('the domain imports only the domain');
    if (layer === 'application' && target !== 'domain' && target !== 'application') says('the application imports only the domain and itself');
    if (layer.startsWith('adapters/') && target?.startsWith('adapters/') === true && target !== layer) says('an adapter imports no other adapter');
    if (LIBRARIES.has(layer) && target?.startsWith('adapters/') === true) says('a library of formats imports no adapter');
  }
  return violations;
}

describe('the layers of src/ (the import graph)', function () {
  const imports = importsUnder('src');

  it('finds the imports of every layer (the walk reads the files)', function () {
    const layers = new Set(imports.flatMap((entry) => [layerOf(entry.from), ...(entry.to === undefined ? [] : [layerOf(entry.to)])]));
    for (const layer of ['domain', 'application', 'app', 'adapters/http', 'adapters/s3', 'http-wire', 'text']) expect(layers).to.include(layer);
  });

  it('keeps the domain and the application free of frameworks, SDKs and I/O, no adapter importing another, and nothing importing the wiring', function () {
    const violations = layerViolations(imports);
    expect(violations, `imports across the layers:\n${violations.join('\n')}`).to.deep.equal([]);
  });

  describe('over a made-up graph that breaks each rule once', function () {
    const made = (from: string, specifier: string): Import => ({
      from,
      specifier,
      to: specifier.startsWith('.') ? resolve('/', dirname(from), specifier).slice(1).replace(/\.js$/, '.ts') : undefined,
    });

    it('reports a Node module or a package in the domain and in the application', function () {
      expect(layerViolations([made('src/domain/a.ts', 'node:fs'), made('src/application/b.ts', 'express')])).to.have.length(2);
    });

    it('reports the application importing an adapter, and an adapter importing another adapter', function () {
      const violations = layerViolations([
        made('src/application/a.ts', '../adapters/http/x.js'),
        made('src/adapters/s3/b.ts', '../http/download-handler.js'),
      ]);
      expect(violations).to.have.length(2);
      expect(violations[1]).to.include('an adapter imports no other adapter');
    });

    it('lets adapters use the libraries of formats, but not a library an adapter', function () {
      expect(layerViolations([made('src/adapters/s3/a.ts', '../../http-wire/grammar/x.js'), made('src/adapters/index/b.ts', '../../text/iso.js')])).to.deep.equal([]);
      expect(layerViolations([made('src/http-wire/a.ts', '../adapters/http/x.js')])).to.have.length(1);
    });

    it('reports an adapter importing the wiring', function () {
      expect(layerViolations([made('src/adapters/http/a.ts', '../../app/config.js')])).to.have.length(1);
    });
  });
});
