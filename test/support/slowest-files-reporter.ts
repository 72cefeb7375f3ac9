import Mocha from 'mocha';

/**
 * mocha's `spec` reporter, followed by the slowest test files of the run: for each file, the time
 * from the start of its first top-level suite to the end of its last (its tests and hooks,
 * gateways and containers started in `before` included), measured by mocha's runner events. It is
 * the reporter of `npm test` (.mocharc.json); `--reporter-option slowest=40` shows more files,
 * `slowest=0` none. Only printed, never asserted: times are for finding where the suite spends.
 */
class SlowestFilesReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options: Mocha.MochaOptions & { reporterOption?: Record<string, string>; reporterOptions?: Record<string, string> }) {
    super(runner, options);
    const reporterOptions = options.reporterOption ?? options.reporterOptions ?? {};
    const shown = Number(reporterOptions['slowest'] ?? 20);
    const files = new Map<string, { ms: number; tests: number }>();
    const started = new Map<Mocha.Suite, number>();
    const runStarted = performance.now();
    runner.on(Mocha.Runner.constants.EVENT_SUITE_BEGIN, (suite: Mocha.Suite) => {
      if (suite.parent?.root === true && suite.file !== undefined) started.set(suite, performance.now());
    });
    runner.on(Mocha.Runner.constants.EVENT_SUITE_END, (suite: Mocha.Suite) => {
      const start = started.get(suite);
      if (start === undefined || suite.file === undefined) return;
      const file = files.get(suite.file) ?? { ms: 0, tests: 0 };
      file.ms += performance.now() - start;
      file.tests += suite.total();
      files.set(suite.file, file);
    });
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      if (!(shown > 0)) return;
      const root = `${process.cwd()}/`;
      const slowest = [...files].sort(([, a], [, b]) => b.ms - a.ms).slice(0, shown);
      const totalMs = performance.now() - runStarted;
      const lines = [
        '',
        `  Slowest ${slowest.length} of ${files.size} test files (mocha's wall time of each file's suites, hooks included; run: ${(totalMs / 1000).toFixed(0)} s)`,
        '',
        '  | # | File | Tests | Seconds | Share of run |',
        '  |---|------|------:|--------:|-------------:|',
        ...slowest.map(([file, { ms, tests }], index) =>
          `  | ${index + 1} | ${file.startsWith(root) ? file.slice(root.length) : file} | ${tests} | ${(ms / 1000).toFixed(1)} | ${((100 * ms) / totalMs).toFixed(1)} % |`,
        ),
        '',
      ];
      // After the spec reporter's own epilogue (it listens to the same event, registered first).
      process.stdout.write(`${lines.join('\n')}\n`);
    });
  }
}

export default SlowestFilesReporter;
