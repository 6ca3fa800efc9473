/**
 * Ends the run with one plain line, `tests: N passed, N failed, N skipped`, that CI tools
 * read without knowing jest's own summary format.
 */
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    process.stdout.write(`tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests} skipped\n`);
  }
}
