/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/src", "<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: {
    "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.json" }],
    // The official e2b SDK depends on chalk 5, which ships only as ES modules.
    "^.+\\.m?js$": [
      "ts-jest",
      { tsconfig: { allowJs: true, module: "commonjs", isolatedModules: true } },
    ],
  },
  transformIgnorePatterns: ["/node_modules/(?!(chalk)/)"],
  // Tests start real sandboxes; the suite is I/O bound, not CPU bound.
  maxWorkers: 2,
  // Sweeps the nftables tables of services that tests killed (test/support/global-teardown.ts).
  globalTeardown: "<rootDir>/test/support/global-teardown.ts",
  testTimeout: 120_000,
  // Slowest files first, so no long file starts last on a clean clone (test/support/sequencer.js).
  testSequencer: "<rootDir>/test/support/sequencer.js",
};
