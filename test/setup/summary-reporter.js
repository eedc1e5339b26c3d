const { mkdirSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

/**
 * Writes test-results/summary.json so .ci/run can print one line `N passed, N failed`, and
 * test-results/spec-durations.json, each spec file's run time in ms, in the form of test/setup/spec-durations.json
 * (which the sequencer reads on a machine without jest's cache): copy it there after a full run to keep it current.
 */
class SummaryReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }
  onRunComplete(_contexts, results) {
    const dir = join(this.rootDir, 'test-results');
    mkdirSync(dir, { recursive: true });
    const failedSuites =
      results.numRuntimeErrorTestSuites + (results.testResults || []).filter((r) => r.testExecError).length;
    const failed = results.numFailedTests + failedSuites;
    // jest sets results.success only after the reporters have run (it is still false here), so it is
    // worked out from the counts: nothing failed, nothing interrupted, at least one suite ran
    const success =
      failed === 0 &&
      results.numFailedTestSuites === 0 &&
      !results.wasInterrupted &&
      !results.runExecError &&
      !(results.snapshot && results.snapshot.failure) &&
      results.numTotalTestSuites > 0;
    writeFileSync(
      join(dir, 'summary.json'),
      JSON.stringify({
        passed: results.numPassedTests,
        failed,
        pending: results.numPendingTests,
        suites: results.numTotalTestSuites,
        success,
      }) + '\n',
    );
    const durations = Object.fromEntries(
      (results.testResults || [])
        .filter((r) => r.perfStats && r.perfStats.end > r.perfStats.start)
        .map((r) => [relative(this.rootDir, r.testFilePath), Math.round(r.perfStats.end - r.perfStats.start)])
        .sort(([a], [b]) => (a < b ? -1 : 1)),
    );
    writeFileSync(join(dir, 'spec-durations.json'), JSON.stringify(durations, null, 2) + '\n');
  }
}
module.exports = SummaryReporter;
