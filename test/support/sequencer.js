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
  "test/e2e/control-client.fork.test.ts": 117,
  "test/terraform/scenarios.test.ts": 111,
  "test/terraform/volume-secret.test.ts": 77,
  "test/pulumi/template.test.ts": 74,
  "test/pulumi/provisioner.test.ts": 72,
  "test/terraform/dependents.test.ts": 65,
  "test/templates/cache.test.ts": 62,
  "test/pulumi/dependents.test.ts": 57,
  "test/terraform/template-sources.test.ts": 55,
  "test/conformance/contract.test.ts": 53,
  "test/terraform/run-forms.test.ts": 52,
  "test/terraform/stop.test.ts": 50,
  "test/crash/service-crash.test.ts": 45,
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
