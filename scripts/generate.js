#!/usr/bin/env node
/**
 * Regenerates everything under src/gen/ from the contract in schema/, and the
 * cdktf entry point's code beside its adapter:
 *   - buf generate (buf.gen.yaml, protoc-gen-es)  -> src/gen/envd/**
 *   - buf generate schema/terraform (tfplugin6 and go-plugin's services) -> src/gen/terraform/**
 *   - openapi-typescript control.openapi.yaml     -> src/gen/control.gen.ts
 *   - openapi-typescript envd.openapi.yaml        -> src/gen/envd-http.gen.ts
 *   - the CDK for Terraform binding generators     -> src/gen/cdktn/**, src/gen/cdktf/**
 *   - the cdktf entry point's code, from src/cdktn -> src/cdktf/generated/**
 *
 * `--check` generates into a temporary directory and exits 1, listing the
 * files, when anything differs from src/gen/ or src/cdktf/generated/ (CI
 * runs it). Output is
 * deterministic: same inputs, same bytes; nothing is formatted afterwards.
 */
"use strict";

const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const ROOT = path.resolve(__dirname, "..");
const BIN = path.join(ROOT, "node_modules", ".bin");
const GEN = path.join(ROOT, "src", "gen");
const { generateCdkEntryInto, CDKTF_ENTRY_DIR } = require("./generate-cdk-entry");

/** buf's template for the Terraform plugin protocol (the same plugin and options as buf.gen.yaml). */
const TERRAFORM_TEMPLATE = JSON.stringify({
  version: "v2",
  plugins: [
    {
      local: "protoc-gen-es",
      out: "src/gen/terraform",
      opt: ["target=ts", "import_extension=none"],
    },
  ],
});

/** OpenAPI documents and the file each generates, relative to src/gen. */
const OPENAPI = [
  { input: "schema/control.openapi.yaml", output: "control.gen.ts" },
  { input: "schema/envd.openapi.yaml", output: "envd-http.gen.ts" },
];

function run(bin, args) {
  execFileSync(path.join(BIN, bin), args, {
    cwd: ROOT,
    stdio: ["ignore", "inherit", "inherit"],
    // buf finds the local protoc-gen-es plugin on PATH.
    env: { ...process.env, PATH: `${BIN}${path.delimiter}${process.env.PATH ?? ""}` },
  });
}

/** Generates every file into `genDir` (a directory playing the role of src/gen). */
function generateInto(genDir) {
  // buf prepends --output to the `out` of buf.gen.yaml (src/gen/envd), so
  // generate under a scratch root and move the envd tree into place.
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "sandbox-iac-buf-"));
  try {
    run("buf", ["generate", "--output", scratch]);
    run("buf", [
      "generate",
      "schema/terraform",
      "--template",
      TERRAFORM_TEMPLATE,
      "--output",
      scratch,
    ]);
    fs.mkdirSync(genDir, { recursive: true });
    for (const tree of ["envd", "terraform"]) {
      const out = path.join(genDir, tree);
      fs.rmSync(out, { recursive: true, force: true });
      fs.cpSync(path.join(scratch, "src", "gen", tree), out, { recursive: true });
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  for (const { input, output } of OPENAPI) {
    run("openapi-typescript", [
      input,
      "--output",
      path.join(genDir, output),
      // Keep fields with a default optional in request bodies.
      "--default-non-nullable",
      "false",
      "--alphabetize",
    ]);
  }
  require("./generate-cdk").generateCdkInto(genDir);
}

/**
 * The generated trees: where each lives, and how to write it into a
 * directory playing its role.
 */
const TREES = [
  { dir: GEN, generate: generateInto },
  { dir: CDKTF_ENTRY_DIR, generate: generateCdkEntryInto },
];

/** Relative paths of every file under `dir`, sorted. */
function listFiles(dir) {
  if (!fs.existsSync(dir)) return [];
  const out = [];
  const walk = (d) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else out.push(path.relative(dir, full));
    }
  };
  walk(dir);
  return out.sort();
}

/** Lines naming the files of `dir` that differ from a fresh generation into `fresh`. */
function differences(dir, fresh) {
  const shown = (rel) => path.relative(ROOT, path.join(dir, rel)).split(path.sep).join("/");
  const expected = listFiles(fresh);
  const actual = new Set(listFiles(dir));
  const differing = [];
  for (const rel of expected) {
    const current = path.join(dir, rel);
    if (!actual.has(rel)) differing.push(`missing: ${shown(rel)}`);
    else if (!fs.readFileSync(current).equals(fs.readFileSync(path.join(fresh, rel)))) {
      differing.push(`changed: ${shown(rel)}`);
    }
    actual.delete(rel);
  }
  // Files that generation no longer produces are stale.
  for (const rel of actual) differing.push(`stale: ${shown(rel)}`);
  return differing;
}

function check() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sandbox-iac-gen-"));
  try {
    const differing = TREES.flatMap(({ dir, generate }, i) => {
      const fresh = path.join(tmp, String(i));
      generate(fresh);
      return differences(dir, fresh);
    });
    if (differing.length > 0) {
      console.error(
        "src/gen or src/cdktf/generated is out of date with schema/ (or src/cdktn/); run `npm run generate`:",
      );
      for (const line of differing) console.error(`  ${line}`);
      process.exitCode = 1;
      return;
    }
    console.log("src/gen and src/cdktf/generated are up to date");
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv.includes("--check")) check();
else for (const { dir, generate } of TREES) generate(dir);
