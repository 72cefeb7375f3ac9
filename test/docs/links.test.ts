import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { packageRoot } from '../../src/app/package-root.js';
import { brokenLinks, guideFiles, headingAnchors } from '../support/markdown.js';

describe('the guides (README.md, docs/*.md, SECURITY.md, BENCHMARKS.md)', function () {
  it('are README, SECURITY, BENCHMARKS and the five guides of docs/', function () {
    const names = guideFiles().map((file) => file.slice(packageRoot().length + 1)).sort();
    expect(names).to.include.members(['README.md', 'SECURITY.md', 'BENCHMARKS.md', 'docs/api.md', 'docs/architecture.md', 'docs/azure.md', 'docs/operators.md', 'docs/subscribers.md']);
  });

  it('have no relative link to a missing file or to a heading that does not exist', function () {
    const broken = guideFiles().flatMap((file) => brokenLinks(file, readFileSync(file, 'utf8')));
    expect(broken, `broken links:\n${broken.join('\n')}`).to.deep.equal([]);
  });

  describe('the link check itself', function () {
    const readme = join(packageRoot(), 'README.md');
    it('reports a link to a file that does not exist', function () {
      expect(brokenLinks(readme, 'See [the guide](docs/no-such-guide.md).\n')).to.deep.equal(['README.md:1: docs/no-such-guide.md (no such file)']);
    });
    it('reports an anchor that no heading of the target has, and accepts one that does', function () {
      const text = '[a](docs/operators.md#no-such-section) [b](docs/operators.md#configuration) [c](#quick-start)\n\n## Quick start\n';
      expect(brokenLinks(readme, text)).to.deep.equal(['README.md:1: docs/operators.md#no-such-section (no heading with that anchor)']);
    });
    it('ignores links inside code blocks and code spans, and links with a scheme', function () {
      const text = '```sh\n[x](missing.md)\n```\n`[y](missing.md)` [z](https://example.com/missing.md)\n';
      expect(brokenLinks(readme, text)).to.deep.equal([]);
    });
  });

  describe('headingAnchors', function () {
    it('makes GitHub\'s anchors: punctuation dropped, spaces to hyphens, repeats numbered', function () {
      const anchors = headingAnchors('# Discovery: /docs and /.well-known\n## `dfg` and the library\n## Notes\n## Notes\n```\n# not a heading\n```\n');
      expect([...anchors]).to.deep.equal(['discovery-docs-and-well-known', 'dfg-and-the-library', 'notes', 'notes-1']);
    });
  });
});
