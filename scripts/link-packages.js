/**
 * Makes packages resolve from a directory without `npm install`: links
 * `<dir>/node_modules/sandbox-iac` to the repository root and each named
 * package to the repository's own copy in `node_modules` (one copy of each,
 * as the harness and the CDK constructs expect). The examples' `link.js`
 * scripts call it with the packages their programs load.
 */
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const REPO_ROOT = path.resolve(__dirname, "..");

/**
 * Creates (or replaces) the links in `dir/node_modules`: `sandbox-iac` and
 * each of `packages` (names as they appear under `node_modules`, e.g. `@pulumi`).
 */
function linkPackages(dir, packages, repoRoot = REPO_ROOT) {
  const modules = path.join(dir, "node_modules");
  fs.mkdirSync(modules, { recursive: true });
  const links = [[path.join(modules, "sandbox-iac"), repoRoot]];
  for (const name of packages) {
    links.push([path.join(modules, name), path.join(repoRoot, "node_modules", name)]);
  }
  for (const [link, target] of links) {
    fs.rmSync(link, { recursive: true, force: true });
    fs.symlinkSync(target, link, "dir");
  }
}

module.exports = { linkPackages, REPO_ROOT };
