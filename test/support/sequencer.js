/**
 * Jest's test order: the files known to be slow first, longest first, then
 * the rest by size (jest's own order when it has no timings).
 *
 * CI runs on a clean clone, where jest has no timings of earlier runs and
 * orders files by size alone: a 50–77 s file could start last on one worker
 * while the other sat idle. Longest first keeps the two workers' ends close
 * (the classic longest-processing-time rule). The seconds are those of a
 * clean-clone CI run; a file not listed costs less than the last one here.
 */
const fs = require("node:fs");
const path = require("node:path");

/** Seconds each slow file took in a clean-clone CI run (2 workers, 2 cores). */
const SLOW_FILES = {
  "test/terraform/scenarios.test.ts": 136,
  "test/templates/cache.test.ts": 106,
  "test/terraform/template-sources.test.ts": 88,
  "test/e2e/control-client.fork.test.ts": 88,
  "test/conformance/contract.test.ts": 81,
  "test/terraform/dependents.test.ts": 78,
  "test/pulumi/dependents.test.ts": 75,
  "test/terraform/stop.test.ts": 73,
  "test/pulumi/provisioner.test.ts": 73,
  "test/pulumi/template.test.ts": 72,
  "test/terraform/run-forms.test.ts": 68,
  "test/terraform/volume-secret.test.ts": 62,
  "test/harness/harness.test.ts": 51,
  "test/isolation/network.test.ts": 50,
  "test/crash/service-crash.test.ts": 49,
  "test/pulumi/image-template.test.ts": 46,
  "test/conformance/lifecycle.test.ts": 45,
  "test/terraform/provisioner-checks.test.ts": 42,
};

const ROOT = path.resolve(__dirname, "..", "..");

function sizeOf(file) {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

class SlowestFirstSequencer {
  /** @param {Array<{ path: string }>} tests */
  sort(tests) {
    const key = (t) => {
      const known = SLOW_FILES[path.relative(ROOT, t.path).split(path.sep).join("/")];
      return known === undefined ? [0, sizeOf(t.path)] : [1, known];
    };
    return tests
      .map((t) => ({ t, k: key(t) }))
      .sort((a, b) => b.k[0] - a.k[0] || b.k[1] - a.k[1])
      .map(({ t }) => t);
  }

  /** Jest hands every run's results here; the order above needs none of them. */
  cacheResults() {}
}

module.exports = SlowestFirstSequencer;
