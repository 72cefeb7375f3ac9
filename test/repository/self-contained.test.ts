import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));

// Folders a fresh clone has and whose code runs in tests, scripts, builds or CI.
const SCANNED = ['src', 'test', 'bench', 'scripts', 'client/src', 'client/test', 'deploy', '.ci', '.github', 'package.json', 'client/package.json'];
const SKIPPED = new Set(['node_modules', 'dist', 'generated', 'fixtures']);

async function* filesUnder(path: string): AsyncGenerator<string> {
  const entries = await readdir(path, { withFileTypes: true }).catch(() => null);
  if (entries === null) {
    yield path;
    return;
  }
  for (const entry of entries) {
    if (SKIPPED.has(entry.name)) continue;
    const child = join(path, entry.name);
    if (entry.isDirectory()) yield* filesUnder(child);
    else yield child;
  }
}

describe('the repository', function () {
  describe('when cloned with nothing beside it', function () {
    it('has no test, script or build step that reads the team folder beside it (../shared)', async function () {
      const offenders: string[] = [];
      for (const top of SCANNED) {
        for await (const file of filesUnder(join(root, top))) {
          const text = await readFile(file, 'utf8').catch(() => '');
          if (/(?:\.\.\/)+shared\//.test(text) && !file.endsWith('self-contained.test.ts')) {
            offenders.push(relative(root, file));
          }
        }
      }
      expect(offenders).to.deep.equal([]);
    });

    it('keeps the vendor index sample byte for byte (UTF-8 BOM and CRLF line endings intact)', async function () {
      const bytes = await readFile(join(root, 'test/fixtures/index-sample.csv'));
      expect([...bytes.subarray(0, 3)]).to.deep.equal([0xef, 0xbb, 0xbf]);
      expect(bytes.includes('\r\n')).to.equal(true);
      expect(bytes.toString('utf8').replace(/\r\n/g, '').includes('\n')).to.equal(false);
    });
  });
});
