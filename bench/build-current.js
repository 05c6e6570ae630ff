// The one check that a bench measures the sources beside it, not an older build.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

/**
 * The src/ files the build consumes: TypeScript (tsc, and the agent and
 * provider bundles esbuild makes), C sources and headers (the two spawners cc
 * compiles), and the JavaScript and JSON they may import. Tests are not built.
 */
const BUILT_FROM = /\.(ts|c|h|js|json)$/;
const TEST = /\.test\.ts$/;

/**
 * Refuses a build older than its sources: `npm run bench*` builds first, but
 * `node bench/<file>.js` run directly (as an A/B between worktrees is) starts
 * whatever dist/ holds, and a run measured a build four commits old that way
 * (create -> first command 20-25 ms against 15-19 ms for the sources').
 * `built` is a file of the build the bench runs (its mtime is the build's);
 * `root` the checkout it was built from, whose src/ it must be newer than.
 * Only what `npm run build` reads counts ({@link BUILT_FROM}): a README.md
 * edited under src/ changes no byte of dist/, and tests do not reach it either,
 * so neither makes a bench refuse. A build with no src/ beside it (a copy) is
 * taken as it is. BENCH_STALE_OK=1 runs anyway.
 *
 * @param {string} built
 * @param {string} [root] default: this checkout
 */
function assertBuildCurrent(built, root = path.join(__dirname, "..")) {
  if (process.env.BENCH_STALE_OK === "1") return;
  const src = path.join(root, "src");
  if (!fs.existsSync(src)) return;
  const builtAt = fs.statSync(built).mtimeMs;
  const newer = fs
    .readdirSync(src, { recursive: true })
    .filter((f) => BUILT_FROM.test(f) && !TEST.test(f))
    .find((f) => {
      const st = fs.statSync(path.join(src, f));
      return st.isFile() && st.mtimeMs > builtAt;
    });
  if (newer !== undefined) {
    throw new Error(
      `${path.relative(process.cwd(), built) || built} is older than ${path.join(src, newer)}: the bench would measure the last build, not these sources; run npm run build in ${root} first (or set BENCH_STALE_OK=1)`,
    );
  }
}

module.exports = { assertBuildCurrent };
