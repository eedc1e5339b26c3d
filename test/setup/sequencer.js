// Runs the longest spec files first, so that none of them starts last while the other workers sit idle.
// Jest does this by itself from the timings it keeps in its cache, but a clean machine (CI) has none and jest then
// orders by file size, which says little here (a short file that starts services takes a minute): this falls back
// to the durations recorded in spec-durations.json (refresh it from test-results/spec-durations.json, which every
// full run writes).
const { relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const recorded = require('./spec-durations.json');

class RecordedDurationSequencer extends Sequencer {
  time(test) {
    return super.time(test) ?? recorded[relative(test.context.config.rootDir, test.path)];
  }
}

module.exports = RecordedDurationSequencer;
