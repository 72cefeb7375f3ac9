import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { runClientsCli } from '../../src/app/clients-command.js';
import { packageRoot } from '../../src/app/package-root.js';
import { proseLines, sectionOf } from '../support/markdown.js';

const readme = (): string => readFileSync(join(packageRoot(), 'README.md'), 'utf8');

describe('README.md, the front page', function () {
  it('is at most 250 lines: the rest belongs in docs/', function () {
    expect(readme().trimEnd().split('\n').length).to.be.at.most(250);
  });

  it('starts, after the title and what it is, with the quick start', function () {
    const headings = proseLines(readme()).filter(({ text }) => /^#{1,6}\s/.test(text)).map(({ text }) => text);
    expect(headings.slice(0, 2)).to.deep.equal(['# Data File Gateway', '## Quick start']);
  });

  it('gives exactly two quick-start commands: run the gateway, run the whole suite', function () {
    const blocks = [...sectionOf(readme(), '## Quick start').matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
    expect(blocks).to.have.length(1);
    const commands = (blocks[0] ?? '').trim().split('\n').map((line) => line.replace(/\s+#.*$/, ''));
    expect(commands).to.deep.equal(['npm install && npm start', 'npm install && npm test']);
  });

  it("names exactly the clients CLI's commands, and those of s3-key and webhook", async function () {
    /** The commands `clients [...path] --help` lists, without `help`. */
    const commandsOf = async (...path: string[]): Promise<string[]> => {
      let help = '';
      await runClientsCli([...path, '--help'], { env: {}, stdout: { write: (text: string) => (help += text) }, stderr: { write: () => undefined }, readStdin: async () => '' });
      const listed = help.split(/^Commands:\n/m)[1] ?? '';
      return [...listed.matchAll(/^ {2}([a-z0-9-]+)/gm)].map((match) => match[1] as string).filter((name) => name !== 'help');
    };
    const line = readme().split('\n- ').find((item) => item.startsWith('**Clients** are managed with')) ?? '';
    const named = (pattern: RegExp): string[] => (pattern.exec(line)?.[1] ?? '').split('|');
    expect(named(/`npm run clients -- ([a-z0-9|-]+)`/)).to.have.members(await commandsOf());
    expect(named(/`s3-key ([a-z|]+)`/)).to.have.members(await commandsOf('s3-key'));
    expect(named(/`webhook ([a-z|]+)`/)).to.have.members(await commandsOf('webhook'));
  });
});
