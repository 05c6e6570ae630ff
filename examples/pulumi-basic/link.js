/**
 * Makes `require("sandbox-iac/...")` and `require("@pulumi/pulumi")` resolve
 * from a program directory without `npm install`: links
 * `<dir>/node_modules/sandbox-iac` to the repository root and
 * `<dir>/node_modules/@pulumi` to the repository's `node_modules/@pulumi`
 * (the harness needs exactly one SDK copy). Used by tests and `npm run demo`.
 *
 * Usage: `node examples/pulumi-basic/link.js [programDir]` (default: this directory).
 */
"use strict";
const path = require("node:path");
const shared = require("../../scripts/link-packages");

const REPO_ROOT = shared.REPO_ROOT;
const PACKAGES = ["@pulumi"];

/** Creates (or replaces) the links in `programDir/node_modules`. */
function linkPackages(programDir, repoRoot = REPO_ROOT) {
  shared.linkPackages(programDir, PACKAGES, repoRoot);
}

module.exports = { linkPackages, REPO_ROOT };

if (require.main === module) {
  const dir = path.resolve(process.argv[2] ?? __dirname);
  linkPackages(dir);
  console.log(`linked sandbox-iac and @pulumi into ${path.join(dir, "node_modules")}`);
}
