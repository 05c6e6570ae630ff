/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/src", "<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: {
    "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.json", isolatedModules: true }],
  },
  // Tests start real sandboxes; the suite is I/O bound, not CPU bound.
  maxWorkers: 2,
  testTimeout: 60_000,
  verbose: false,
};
