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
const fs = require("node:fs");
const path = require("node:path");

const REPO_ROOT = path.resolve(__dirname, "..", "..");

/** Creates (or replaces) the two links in `programDir/node_modules`. */
function linkPackages(programDir, repoRoot = REPO_ROOT) {
  const modules = path.join(programDir, "node_modules");
  fs.mkdirSync(modules, { recursive: true });
  const links = [
    [path.join(modules, "sandbox-iac"), repoRoot],
    [path.join(modules, "@pulumi"), path.join(repoRoot, "node_modules", "@pulumi")],
  ];
  for (const [link, target] of links) {
    fs.rmSync(link, { recursive: true, force: true });
    fs.symlinkSync(target, link, "dir");
  }
}

module.exports = { linkPackages, REPO_ROOT };

if (require.main === module) {
  const dir = path.resolve(process.argv[2] ?? __dirname);
  linkPackages(dir);
  console.log(`linked sandbox-iac and @pulumi into ${path.join(dir, "node_modules")}`);
}
