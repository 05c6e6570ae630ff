#!/usr/bin/env node
/**
 * Runs ONE official CDK for Terraform binding generator, offline:
 *
 *   node scripts/generate-cdk-worker.js <cdktn|cdktf> <schema.json> <outDir>
 *
 * writes what `cdktn get` / `cdktf get` would write for the provider whose
 * `terraform providers schema -json` document is in <schema.json>, under
 * <outDir>/providers/sandboxiac/. Each generator runs in its own process:
 * loading both toolchains in one process crashes (their hcl2json WebAssembly
 * builds clash), so scripts/generate-cdk.js starts this once per runtime.
 */
"use strict";

const fs = require("node:fs");

/** The provider's address as users write it in `required_providers`. */
const PROVIDER = { name: "sandboxiac", source: "sandbox-iac/sandboxiac", version: "~> 0.1" };

/** Each runtime's generator and commons, required by name so that the dependency check sees them. */
const GENERATORS = {
  cdktn: () => ({
    generator: require("@cdktn/provider-generator"),
    commons: require("@cdktn/commons"),
  }),
  cdktf: () => ({
    generator: require("@cdktf/provider-generator"),
    commons: require("@cdktf/commons"),
  }),
};

async function main() {
  const [runtime, schemaPath, outDir] = process.argv.slice(2);
  if (!["cdktn", "cdktf"].includes(runtime) || !schemaPath || !outDir) {
    throw new Error("usage: generate-cdk-worker.js <cdktn|cdktf> <schema.json> <outDir>");
  }
  const { generator, commons } = GENERATORS[runtime]();
  const schema = JSON.parse(fs.readFileSync(schemaPath, "utf8"));
  const code = new generator.CodeMaker();
  new generator.TerraformProviderGenerator(code, schema).generate(
    new commons.ConstructsMakerProviderTarget(
      new commons.TerraformProviderConstraint(PROVIDER),
      commons.Language.TYPESCRIPT,
    ),
  );
  await code.save(outDir);
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
