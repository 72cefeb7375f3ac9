import { execFile } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { packageRoot } from '../../src/app/package-root.js';

/*
 * openapi.yaml lints clean under the two linters consumers' tool chains use: Redocly's
 * `recommended` rules (redocly.yaml) and Spectral's `spectral:oas` ruleset (.spectral.yaml), with
 * no error and no warning. Both run as their command lines, on this Node (the CI runs the suite on
 * Node 20 and 24).
 */

const run = promisify(execFile);

/** Runs a package's command line with this process's Node, from the repository root. */
async function runBin(bin: string, args: readonly string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  const script = await realpath(join(packageRoot(), 'node_modules', '.bin', bin));
  try {
    const { stdout, stderr } = await run(process.execPath, [script, ...args], { cwd: packageRoot(), maxBuffer: 16 * 1024 * 1024 });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string; code?: number };
    return { stdout: failure.stdout ?? '', stderr: failure.stderr ?? '', code: failure.code ?? 1 };
  }
}

describe('openapi.yaml under the linters', function () {
  this.timeout(60_000);

  it('has no problem under Redocly recommended rules (redocly.yaml)', async function () {
    const config = await readFile(join(packageRoot(), 'redocly.yaml'), 'utf8');
    expect(config).to.match(/extends:\s*\n\s*-\s*recommended\b/);

    const { stdout, stderr, code } = await runBin('redocly', ['lint', '--format', 'json', 'openapi.yaml']);

    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; message: string }> };
    const problems = report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`);
    expect(problems, stderr).to.deep.equal([]);
    expect(report.totals).to.include({ errors: 0, warnings: 0 });
    expect(code).to.equal(0);
  });

  it("has no problem under Spectral's spectral:oas ruleset (.spectral.yaml)", async function () {
    const config = await readFile(join(packageRoot(), '.spectral.yaml'), 'utf8');
    expect(config).to.match(/extends:\s*\n\s*-\s*spectral:oas\b/);
    const scratch = await mkdtemp(join(tmpdir(), 'spectral-'));
    try {
      const output = join(scratch, 'report.json');

      // Every severity fails the run (hints included), and the JSON report goes to a file: the
      // command line also prints a summary on stdout.
      const { stderr, code } = await runBin('spectral', ['lint', '--ruleset', '.spectral.yaml', '--format', 'json', '--output', output, '--fail-severity', 'hint', 'openapi.yaml']);

      const problems = (JSON.parse(await readFile(output, 'utf8')) as Array<{ code: string; message: string; path: string[] }>).map(
        (problem) => `${problem.code}: ${problem.message} at ${problem.path.join('.')}`,
      );
      expect(problems, stderr).to.deep.equal([]);
      expect(code).to.equal(0);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
});
