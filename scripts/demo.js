/**
 * `npm run demo`: starts the local service and a container registry on
 * loopback serving a busybox image (the example's `image` config), then runs examples/pulumi-basic
 * through the Pulumi engine harness (no Pulumi CLI needed): `up`, a second
 * `up` that changes nothing, and `destroy`, each printed the way `pulumi up`
 * prints it: the provider's progress lines live as they happen, then the resource table with each step's duration, the provider's
 * diagnostics (build log lines, setup command output, how long each call took),
 * the outputs (secrets masked) and the change counts. Expects `npm run build` to
 * have run (the npm script does).
 */
"use strict";
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const ROOT = path.resolve(__dirname, "..");
const EXAMPLE = path.join(ROOT, "examples", "pulumi-basic");
const { startDemoRegistry } = require("./local-registry");

function loadHarness() {
  const esbuild = require("esbuild");
  const outfile = path.join(ROOT, "dist", "harness", "index.js");
  esbuild.buildSync({
    entryPoints: [path.join(ROOT, "test", "harness", "index.ts")],
    bundle: true,
    platform: "node",
    format: "cjs",
    outfile,
    external: ["@pulumi/*", "@grpc/*", "google-protobuf", "esbuild"],
    // The harness finds its runner source beside itself: keep pointing there.
    define: { __dirname: JSON.stringify(path.join(ROOT, "test", "harness")) },
    logLevel: "error",
  });
  return require(outfile);
}

function compileExample() {
  require(path.join(EXAMPLE, "link.js")).linkPackages(EXAMPLE);
  execFileSync(
    process.execPath,
    [require.resolve("typescript/bin/tsc"), "-p", path.join(EXAMPLE, "tsconfig.json")],
    {
      stdio: "inherit",
    },
  );
}

/** Prints complete lines of the output chunks as they arrive, indented. */
function liveLines() {
  let pending = "";
  return (text) => {
    pending += text;
    const lines = pending.split("\n");
    pending = lines.pop();
    for (const line of lines) if (line.trim()) console.log(`  ${line}`);
  };
}

/** Runs one command, its progress printed live under its title, then its summary. */
async function show(title, command, harness) {
  console.log(`\n=== ${title}\n`);
  const result = await command();
  console.log(`\n${harness.renderResult(result)}`);
}

async function main() {
  compileExample();
  const harness = loadHarness();
  const { startLocalService } = require(path.join(ROOT, "dist", "local"));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "sandbox-iac-demo-"));
  const service = await startLocalService({ port: 0, dataDir: path.join(work, "data") });
  console.log(`local service at ${service.apiUrl}`);
  // A registry on loopback serving a busybox image, for the example's template from an image.
  const registry = await startDemoRegistry();
  console.log(`local registry serving ${registry.image}`);
  const opts = {
    stateFile: path.join(work, "state.json"),
    config: {
      "sandbox-iac:apiUrl": service.apiUrl,
      "sandbox-iac:apiKey": service.apiKey,
      "pulumi-basic:image": registry.image,
    },
    secretConfig: ["sandbox-iac:apiKey"],
    timeoutMs: 600_000,
    // Progress as it happens (build log, setup commands), as `pulumi up` shows it live.
    onOutput: liveLines(),
  };
  try {
    await show("pulumi up", () => harness.up(EXAMPLE, opts), harness);
    await show("pulumi up (again: no changes expected)", () => harness.up(EXAMPLE, opts), harness);
    await show("pulumi destroy", () => harness.destroy(EXAMPLE, opts), harness);
  } catch (err) {
    // A failed run prints what `pulumi up` would: the table so far and the diagnostics.
    if (err.result) console.error(harness.renderResult(err.result));
    else console.error(err.message);
    process.exitCode = 1;
  } finally {
    await service.close();
    await registry.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
