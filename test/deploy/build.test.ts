import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { packageRoot } from '../../src/app/package-root.js';

/*
 * `npm start` builds first (`prestart`); the build is incremental (tsc's build mode over the
 * gateway and the client), so with nothing changed it compiles nothing and the gateway starts in
 * seconds. Checked by what tsc reports and by the outputs' modification times, never by a clock.
 */

const run = promisify(execFile);

async function build(...extra: string[]): Promise<string> {
  const { stdout, stderr } = await run('npm', ['run', 'build', '--silent', '--', ...extra], { cwd: packageRoot(), maxBuffer: 16 * 1024 * 1024 });
  return `${stdout}${stderr}`;
}

const outputs = ['dist/src/app/main.js', 'dist/src/adapters/http/http-app.js', 'client/dist/src/index.js'];

async function modificationTimes(): Promise<number[]> {
  return Promise.all(outputs.map(async (path) => (await stat(join(packageRoot(), path))).mtimeMs));
}

describe('npm run build (which npm start runs first)', function () {
  this.timeout(300_000);

  it('with nothing changed since the last build, finds both projects up to date and writes nothing', async function () {
    await build();
    const before = await modificationTimes();

    const report = await build('--verbose');

    expect(report).to.match(/Project 'tsconfig\.build\.json' is up to date/);
    expect(report).to.match(/Project 'client\/tsconfig\.json' is up to date/);
    expect(report).to.not.match(/Building project/);
    expect(await modificationTimes()).to.deep.equal(before);
  });

  it('is what npm start runs before starting', async function () {
    const { default: manifest } = (await import(join(packageRoot(), 'package.json'), { with: { type: 'json' } })) as {
      default: { scripts: Record<string, string> };
    };
    expect(manifest.scripts['prestart']).to.match(/^npm run build\b/);
  });
});
