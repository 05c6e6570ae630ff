/**
 * `npm run demo:cdk`: the CDK for Terraform pipeline, for real, against a
 * fresh local service and a container registry on loopback serving a busybox
 * image (the apps' context "image", for their template from an image), once per runtime (examples/cdktn-basic with cdktn,
 * examples/cdktf-basic with cdktf):
 *   1. synthesize the app by running it with Node (`node bin/main.js`; the
 *      cdktn CLI needs Node 22),
 *   2. `sandbox-iac terraform install --dir <plugins>`,
 *   3. in cdktf.out/stacks/sandboxes: `terraform init -plugin-dir <plugins>`,
 *      `apply`, `plan -detailed-exitcode` (no changes expected), `destroy`,
 * printing what happened, with `TF_LOG_PROVIDER=INFO` so that the provider's
 * log lines (build log, setup command output) show among terraform's own. The examples are copied to a temporary directory,
 * so the checkout stays clean. Expects `npm run build` to have run (the npm
 * script does). `--runtime cdktn` or `--runtime cdktf` runs only one.
 */
"use strict";
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const ROOT = path.resolve(__dirname, "..");
const { startDemoRegistry } = require("./local-registry");

/** test/cdk/support/example.ts, compiled on the fly (the tests use the same steps). */
function loadExampleSteps() {
  const esbuild = require("esbuild");
  const outfile = path.join(ROOT, "dist", "demo-cdk", "example.js");
  esbuild.buildSync({
    entryPoints: [path.join(ROOT, "test", "cdk", "support", "example.ts")],
    bundle: true,
    platform: "node",
    format: "cjs",
    outfile,
    // The module finds the repository from its own location: keep pointing there.
    define: { __dirname: JSON.stringify(path.join(ROOT, "test", "cdk", "support")) },
    logLevel: "error",
  });
  return require(outfile);
}

/**
 * Runs terraform with its stdout and stderr in one stream, in the order they
 * came: the provider's log lines (stderr) then sit between terraform's own
 * "Creating..." and "Creation complete" lines (stdout), as in a terminal.
 */
function terraformRun(terraform, args, cwd, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(terraform, args, { cwd, env });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", (err) => reject(new Error(`cannot run terraform: ${err.message}`)));
    child.on("close", (code) => resolve({ code, output }));
  });
}

function indent(text) {
  return text
    .trim()
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
}

async function demo(steps, runtime, service, terraform) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), `sandbox-iac-demo-${runtime}-`));
  // TF_LOG_PROVIDER=INFO: how a user asks terraform to show the provider's log
  // (build log lines, setup command output) among its own output.
  const env = { ...steps.terraformEnv(service, work), TF_LOG_PROVIDER: "INFO" };
  let stackDir;
  // `only` keeps the lines worth reading of a long output (e.g. destroy's summary).
  const tf = async (title, args, okCodes = [0], only) => {
    console.log(`\n--- terraform ${args.join(" ")}   (${title})`);
    const ran = await terraformRun(terraform, [...args, "-no-color"], stackDir, env);
    const lines = ran.output.split("\n");
    console.log(indent((only ? lines.filter((l) => only.test(l)) : lines).join("\n")));
    if (!okCodes.includes(ran.code)) throw new Error(`terraform ${args[0]} exited ${ran.code}`);
    return ran;
  };
  try {
    console.log(`\n===== ${runtime}: examples/${runtime}-basic`);
    stackDir = await steps.synthExample(runtime, work);
    console.log(`synthesized by running the app: ${path.relative(work, stackDir)}/cdk.tf.json`);
    const pluginDir = path.join(work, "plugins");
    const installed = await steps.installProvider(pluginDir);
    console.log(`\n--- sandbox-iac terraform install --dir ${pluginDir}`);
    console.log(indent(installed.stdout));
    await tf("offline, from the plugin directory", [
      "init",
      "-input=false",
      "-plugin-dir",
      pluginDir,
    ]);
    await tf("creates the template, provisions and keeps a sandbox", [
      "apply",
      "-auto-approve",
      "-input=false",
    ]);
    const plan = await tf(
      "no changes expected",
      ["plan", "-detailed-exitcode", "-input=false"],
      [0, 2],
    );
    if (plan.code !== 0) throw new Error("the second plan wants changes");
    await tf(
      "removes everything",
      ["destroy", "-auto-approve", "-input=false"],
      [0],
      /Destroying|Destruction complete|Destroy complete/,
    );
  } catch (err) {
    if (stackDir && fs.existsSync(path.join(stackDir, ".terraform"))) {
      await steps.run(terraform, ["destroy", "-auto-approve", "-input=false"], stackDir, env);
    }
    throw err;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

async function main() {
  const steps = loadExampleSteps();
  const terraform = steps.findTerraform();
  if (!terraform) {
    console.error("terraform is not on PATH: install terraform >= 1.11 to run the CDK demo");
    process.exitCode = 1;
    return;
  }
  const only = process.argv.includes("--runtime")
    ? process.argv[process.argv.indexOf("--runtime") + 1]
    : undefined;
  const runtimes = ["cdktn", "cdktf"].filter((r) => !only || r === only);
  const { startLocalService } = require(path.join(ROOT, "dist", "local"));
  const data = fs.mkdtempSync(path.join(os.tmpdir(), "sandbox-iac-demo-cdk-data-"));
  const service = await startLocalService({ port: 0, dataDir: data });
  console.log(
    `local service at ${service.apiUrl} (terraform gets it from E2B_API_URL / E2B_API_KEY)`,
  );
  // A registry on loopback serving a busybox image; the apps read it from their context at synth.
  const registry = await startDemoRegistry();
  process.env.CDKTF_CONTEXT_JSON = JSON.stringify({ image: registry.image });
  console.log(`local registry serving ${registry.image} (context "image")`);
  try {
    for (const runtime of runtimes) await demo(steps, runtime, service, terraform);
    console.log("\nCDK demo finished: applied, no changes on the second plan, destroyed.");
  } catch (err) {
    console.error(`\n${err.message}`);
    process.exitCode = 1;
  } finally {
    await service.close();
    await registry.close();
    fs.rmSync(data, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
