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
    const failedSuites = results.numRuntimeErrorTestSuites + (results.testResults || []).filter((r) => r.testExecError).length;
    writeFileSync(
      join(dir, 'summary.json'),
      JSON.stringify({
        passed: results.numPassedTests,
        failed: results.numFailedTests + failedSuites,
        pending: results.numPendingTests,
        suites: results.numTotalTestSuites,
        success: results.success,
      }) + '\n',
    );
  }
}
module.exports = SummaryReporter;
