/**
 * Makes `require("sandbox-iac/cdktn")`, `require("cdktn")`, `require("cdktf")`
 * and `require("constructs")` resolve from an example directory without
 * `npm install`: links `<dir>/node_modules/sandbox-iac` to the repository root
 * and the CDK packages to the repository's own copies (one copy of each
 * runtime, as the package's constructs expect). Used by tests and `npm run demo:cdk`.
 *
 * Usage: `node examples/cdktn-basic/link.js [exampleDir]` (default: this directory).
 */
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const REPO_ROOT = path.resolve(__dirname, "..", "..");

/** Creates (or replaces) the links in `exampleDir/node_modules`. */
function linkPackages(exampleDir, repoRoot = REPO_ROOT) {
  const modules = path.join(exampleDir, "node_modules");
  fs.mkdirSync(modules, { recursive: true });
  const links = [[path.join(modules, "sandbox-iac"), repoRoot]];
  for (const name of ["cdktn", "cdktf", "constructs"]) {
    links.push([path.join(modules, name), path.join(repoRoot, "node_modules", name)]);
  }
  for (const [link, target] of links) {
    fs.rmSync(link, { recursive: true, force: true });
    fs.symlinkSync(target, link, "dir");
  }
}

module.exports = { linkPackages, REPO_ROOT };

if (require.main === module) {
  const dir = path.resolve(process.argv[2] ?? __dirname);
  linkPackages(dir);
  console.log(
    `linked sandbox-iac, cdktn, cdktf and constructs into ${path.join(dir, "node_modules")}`,
  );
}
