// Unit specs live next to the code (src and console/src, *.spec.ts); e2e specs over HTTP in test/ (*.e2e-spec.ts).
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];

// ES-module-only dependencies that jest (on Node 20) must compile to CommonJS (openapi-typescript's own are nested
// under it, so it is listed to let the pattern reach them).
const esmOnly = [
  'content-disposition',
  'openapi-typescript',
  'parse-json',
  'index-to-position',
  'change-case',
  'supports-color',
];

module.exports = {
  testEnvironment: 'node',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/console/src/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  transform: { '^.+\\.ts$': swc, '^.+\\.js$': swc },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'json'],
  // generated data (embedded databases, copies of the project made by specs) is never test code
  modulePathIgnorePatterns: ['<rootDir>/.data/', '<rootDir>/test-results/'],
  // jest's runtime with V8's code cache kept across a worker's spec files (see there)
  runtime: '<rootDir>/test/setup/code-cache-runtime.js',
  // the longest spec files first, from jest's cache or, on a clean machine, from the recorded durations (see there)
  testSequencer: '<rootDir>/test/setup/sequencer.js',
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testTimeout: 60000,
  // one more than the CI machines' two cores: many specs wait on timers, stops and peers a good part of their time
  // (with two workers the cores were idle for 17 % of the run; three took 627 s of jest time on a clean clone, two 710)
  maxWorkers: 3,
  // Time a worker gets to exit once the run is over. Jest's 500 ms is too short for a worker that has just
  // closed apps, sockets and child processes on a machine whose two cores are shared by several runs; a real
  // leak (a timer or server left behind, like the 15 s wait the soak once left) still outlasts this and shows.
  workerGracefulExitTimeout: 5000,
  reporters: ['default', '<rootDir>/test/setup/summary-reporter.js'],
};
