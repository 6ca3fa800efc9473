/** @type {import('jest').Config} */
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    target: 'es2022',
    keepClassNames: true,
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};

export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['@swc/jest', swc] },
  globalSetup: '<rootDir>/tests/setup/globalSetup.mjs',
  globalTeardown: '<rootDir>/tests/setup/globalTeardown.mjs',
  reporters: ['default', '<rootDir>/tests/setup/summaryReporter.mjs'],
  // Generous: e2e files start processes, and CI machines are small and shared.
  testTimeout: 120_000,
  // Each e2e file runs three subgraph processes; two files at a time suit a 2-core machine.
  maxWorkers: 2,
};
