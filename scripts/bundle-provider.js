#!/usr/bin/env node
/**
 * The Terraform provider's start (issue 19: at most 2x a bare `node -e ""`,
 * measured by `npm run bench:provider`). Run by `npm run build` after tsc:
 *
 * - writes dist/terraform/served-schema.json, what `GetMetadata` and
 *   `GetProviderSchema` answer, so a provider process serves the schema
 *   without loading the descriptors and zod (src/terraform/provider/served-schema.ts);
 * - bundles src/terraform/program.ts into dist/terraform/provider.js: one
 *   file, every dependency inlined except `@cdktf/hcl2json` (loaded only by
 *   validation, with its WebAssembly beside its own code), so a start reads
 *   one file instead of resolving and reading some 400 modules;
 * - starts the provider once, as Terraform does, so that it writes the V8
 *   code cache dist/terraform/main.js runs the bundle with.
 */
"use strict";
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const esbuild = require("esbuild");

const root = path.resolve(__dirname, "..");
const outDir = path.join(root, "dist", "terraform");
const bundle = path.join(outDir, "provider.js");

/** Starts the built provider and waits until it has written its code cache. */
async function writeCodeCache() {
  const { createPluginCertificate } = require(path.join(outDir, "plugin", "certificate.js"));
  const { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE } = require(
    path.join(outDir, "plugin", "handshake.js"),
  );
  const cache = `${bundle}.cache`;
  fs.rmSync(cache, { force: true });
  const child = spawn(process.execPath, [path.join(outDir, "main.js")], {
    env: {
      ...process.env,
      [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE,
      PLUGIN_CLIENT_CERT: (await createPluginCertificate()).certPem,
      PLUGIN_PROTOCOL_VERSIONS: "6",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    const deadline = Date.now() + 120_000;
    while (!fs.existsSync(cache)) {
      if (child.exitCode !== null) throw new Error(`the provider exited (${child.exitCode})`);
      if (Date.now() > deadline) throw new Error("the provider wrote no code cache in 120 s");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    child.kill("SIGKILL");
  }
}

async function main() {
  const { defaultCatalog } = require(path.join(outDir, "catalog.js"));
  const { writeServedSchema } = require(path.join(outDir, "provider", "served-schema.js"));
  writeServedSchema(outDir, defaultCatalog());
  await esbuild.build({
    entryPoints: [path.join(root, "src", "terraform", "program.ts")],
    outfile: bundle,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    // import() becomes require(): main.js compiles the bundle with node:vm,
    // whose scripts have no loader for a native import().
    supported: { "dynamic-import": false },
    external: ["@cdktf/hcl2json"],
    minify: true,
    sourcemap: "linked",
    legalComments: "none",
    logLevel: "warning",
  });
  await writeCodeCache();
}

main().catch((err) => {
  console.error(`bundle-provider: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
