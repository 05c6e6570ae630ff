#!/usr/bin/env node
/**
 * The Terraform provider's start (issue 19: at most 2x a bare `node -e ""`,
 * measured by `npm run bench:provider`). Run by `npm run build` after tsc:
 *
 * - writes dist/terraform/served-schema.json, what `GetMetadata` and
 *   `GetProviderSchema` answer, so a provider process serves the schema
 *   without loading the descriptors and zod (src/terraform/provider/served-schema.ts);
 * - bundles src/terraform/main.ts over tsc's dist/terraform/main.js: one
 *   file, every dependency inlined except `@cdktf/hcl2json` (loaded only by
 *   validation, with its WebAssembly beside its own code), so a start reads
 *   one file instead of resolving and reading some 400 modules.
 */
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const esbuild = require("esbuild");

const root = path.resolve(__dirname, "..");
const outDir = path.join(root, "dist", "terraform");

async function main() {
  const { defaultCatalog } = require(path.join(outDir, "catalog.js"));
  const { servedSchema, SERVED_SCHEMA_FILE } = require(
    path.join(outDir, "provider", "served-schema.js"),
  );
  fs.writeFileSync(
    path.join(outDir, SERVED_SCHEMA_FILE),
    JSON.stringify(servedSchema(defaultCatalog())),
  );
  await esbuild.build({
    entryPoints: [path.join(root, "src", "terraform", "main.ts")],
    outfile: path.join(outDir, "main.js"),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["@cdktf/hcl2json"],
    minify: process.env.BUNDLE_MINIFY !== "0",
    sourcemap: "linked",
    legalComments: "none",
    logLevel: "warning",
  });
}

main().catch((err) => {
  console.error(`bundle-provider: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
