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
const path = require("node:path");
const shared = require("../../scripts/link-packages");

const REPO_ROOT = shared.REPO_ROOT;
const PACKAGES = ["cdktn", "cdktf", "constructs"];

/** Creates (or replaces) the links in `exampleDir/node_modules`. */
function linkPackages(exampleDir, repoRoot = REPO_ROOT) {
  shared.linkPackages(exampleDir, PACKAGES, repoRoot);
}

module.exports = { linkPackages, REPO_ROOT };

if (require.main === module) {
  const dir = path.resolve(process.argv[2] ?? __dirname);
  linkPackages(dir);
  console.log(
    `linked sandbox-iac, cdktn, cdktf and constructs into ${path.join(dir, "node_modules")}`,
  );
}
