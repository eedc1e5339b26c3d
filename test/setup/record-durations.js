// Writes spec-durations.json (each spec file's run time in ms, for sequencer.js) from the results of a full run:
//   npx jest --json --outputFile=/tmp/jest.json && node test/setup/record-durations.js /tmp/jest.json
const { readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..', '..');
const results = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const durations = Object.fromEntries(
  results.testResults
    .map((r) => [relative(root, r.name), Math.round(r.endTime - r.startTime)])
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
writeFileSync(join(__dirname, 'spec-durations.json'), JSON.stringify(durations, null, 2) + '\n');
console.log(`${Object.keys(durations).length} spec files recorded`);
