/**
 * `npm run demo:terraform`: starts a fresh local service and a container
 * registry on loopback serving a busybox image (the example's `var.image`), installs the
 * provider into a temporary plugin directory, and runs examples/terraform-basic
 * with the real terraform binary: init, apply, a plan that must report no
 * changes (-detailed-exitcode 0), and destroy, printing terraform's output as
 * a user sees it with `TF_LOG_PROVIDER=INFO`: the provider's log lines (the
 * template's build log, setup command output) between terraform's own
 * "Creating..." and "Creation complete after Ns" lines. Expects `npm run build`
 * to have run (the npm script does).
 */
"use strict";
const { spawn, spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const ROOT = path.resolve(__dirname, "..");
const EXAMPLE = path.join(ROOT, "examples", "terraform-basic");
const { startDemoRegistry } = require("./local-registry");

/** Everything terraform printed, to check that the API key is in none of it. */
const printed = [];

/** Runs terraform without blocking: the service answers from this same process. */
async function terraform(args, cwd, env, expect = [0]) {
  console.log(`\n=== terraform ${args.join(" ")}`);
  const child = spawn("terraform", [...args, "-no-color"], { cwd, env });
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  child.stderr.on("data", (chunk) => (out += chunk));
  const res = await new Promise((resolve, reject) => {
    child.on("error", (err) => reject(new Error(`cannot run terraform: ${err.message}`)));
    child.on("close", (status) => resolve({ status }));
  });
  printed.push(out);
  console.log(out.trim().replace(/^/gm, "  "));
  if (!expect.includes(res.status)) {
    throw new Error(
      `terraform ${args[0]} exited with ${res.status} (expected ${expect.join(" or ")})`,
    );
  }
  return res;
}

async function main() {
  const which = spawnSync("terraform", ["version"], { encoding: "utf8" });
  if (which.error) {
    console.error("terraform is not on PATH: install Terraform >= 1.6 to run this demo");
    process.exit(1);
  }
  const { startLocalService } = require(path.join(ROOT, "dist", "local"));
  const { installProvider, packageVersion } = require(
    path.join(ROOT, "dist", "terraform", "install"),
  );
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "sandbox-iac-tf-demo-"));
  const service = await startLocalService({ port: 0, dataDir: path.join(work, "data") });
  console.log(`local service at ${service.apiUrl}`);
  // A registry on loopback serving a busybox image, for the example's template from an image.
  const registry = await startDemoRegistry();
  console.log(`local registry serving ${registry.image} (var.image)`);
  try {
    const plugins = path.join(work, "plugins");
    const installed = installProvider({ dir: plugins, version: packageVersion() });
    console.log(`provider installed: ${installed.launcher}`);
    // Work on a copy: terraform writes .terraform/ and state beside the HCL.
    const dir = path.join(work, "terraform-basic");
    fs.cpSync(EXAMPLE, dir, { recursive: true });
    const env = {
      ...process.env,
      E2B_API_URL: service.apiUrl,
      E2B_API_KEY: service.apiKey,
      TF_VAR_image: registry.image,
      CHECKPOINT_DISABLE: "1",
      TF_IN_AUTOMATION: "1",
      // An empty CLI configuration: nothing from the user's ~/.terraformrc.
      TF_CLI_CONFIG_FILE: "/dev/null",
      // Terraform prints a provider's log lines (build log, setup command
      // output, durations) only when asked: this is how a user asks.
      TF_LOG_PROVIDER: "INFO",
    };
    await terraform(["init", "-input=false", `-plugin-dir=${plugins}`], dir, env);
    await terraform(["apply", "-auto-approve", "-input=false"], dir, env);
    await terraform(["plan", "-detailed-exitcode", "-input=false"], dir, env);
    console.log("  (exit code 0: no changes)");
    await terraform(["destroy", "-auto-approve", "-input=false"], dir, env);
    const state = fs.readFileSync(path.join(dir, "terraform.tfstate"), "utf8");
    if (state.includes(service.apiKey)) throw new Error("the API key is in the state file");
    if (printed.some((out) => out.includes(service.apiKey))) {
      throw new Error("the API key is in terraform's output");
    }
    console.log("\nthe API key appears in neither the state file nor any output");
  } catch (err) {
    console.error(`\ndemo failed: ${err.message}`);
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
