import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { packageRoot } from '../../src/app/package-root.js';
import { openApi } from '../support/contract.js';
import { sectionOf } from '../support/markdown.js';

const guide = (): string => readFileSync(join(packageRoot(), 'docs', 'api.md'), 'utf8');

/** Paths the endpoint table names in words of its own. */
const spelledOtherwise: Readonly<Record<string, string>> = {
  '/download/signed/{name}': '/download/signed/<file name>',
  '/{path}': '/<storage path>',
};

describe('docs/api.md, the API guide, against openapi.yaml', function () {
  it("names every code of the contract's Error body in its error table", async function () {
    const schemas = ((await openApi()).definition.components?.schemas ?? {}) as Record<string, { properties?: Record<string, { enum?: string[] }> }>;
    const codes = schemas['Error']?.properties?.['code']?.enum ?? [];
    expect(codes).to.include('webhook_not_found');
    const table = sectionOf(guide(), '## Errors');
    expect(codes.filter((code) => !table.includes(`| \`${code}\``) && !table.includes(`\`${code}\` |`) && !table.includes(`, \`${code}\``))).to.deep.equal([]);
  });

  it('names every path of the contract in its endpoint table', async function () {
    const paths = Object.keys((await openApi()).definition.paths ?? {});
    expect(paths).to.include('/webhooks/{id}');
    const table = sectionOf(guide(), '## Endpoints');
    const named = (path: string): boolean => [path, path.replace(/\{(\w+)\}/g, '<$1>'), spelledOtherwise[path]].some((spelling) => spelling !== undefined && (table.includes(` ${spelling}\``) || table.includes(` ${spelling}?`)));
    expect(paths.filter((path) => !named(path))).to.deep.equal([]);
  });
});
