const { mkdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

/** Writes test-results/summary.json so .ci/run can print one line `N passed, N failed`. */
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
  }
}
module.exports = SummaryReporter;
