// npm run bench:provider: how long the Terraform provider takes from process
// start to its go-plugin handshake line, against a bare `node -e ""` start
// measured in the same run (issue 19: at most 2x). Terraform starts the
// provider 3 to 4 times per plan or apply, so this is paid on every command.
// Runs alternate between the two so that machine load hits both alike.
"use strict";
const { spawn } = require("node:child_process");
const path = require("node:path");
const { performance } = require("node:perf_hooks");
const { assertBuildCurrent } = require("./build-current");
const { createPluginCertificate } = require("../dist/terraform/plugin/certificate");
const { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE } = require("../dist/terraform/plugin/handshake");

const RUNS = Number(process.env.BENCH_RUNS || 10);
const ENTRY = path.join(__dirname, "..", "dist", "terraform", "main.js");

/** Milliseconds from spawn to the provider's handshake line; the provider is then killed. */
function providerStart(certPem) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [ENTRY], {
      env: {
        ...process.env,
        [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE,
        PLUGIN_CLIENT_CERT: certPem,
        PLUGIN_PROTOCOL_VERSIONS: "6",
      },
      stdio: ["ignore", "pipe", "ignore"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk.toString();
      if (out.includes("\n")) {
        const ms = performance.now() - started;
        child.kill("SIGKILL");
        resolve(ms);
      }
    });
    child.on("exit", (code) => {
      if (!out.includes("\n")) reject(new Error(`provider exited (${code}) before its handshake`));
    });
  });
}

/** Milliseconds from spawn to the exit of `node -e ""`. */
function bareNode() {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", () => resolve(performance.now() - started));
  });
}

function p50(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function main() {
  assertBuildCurrent(ENTRY);
  const { certPem } = await createPluginCertificate();
  const provider = [];
  const node = [];
  for (let i = 0; i < RUNS; i++) {
    node.push(await bareNode());
    provider.push(await providerStart(certPem));
  }
  const p = p50(provider);
  const n = p50(node);
  console.log(`provider start to handshake: p50 ${p.toFixed(0)} ms (${RUNS} runs)`);
  console.log(`bare node -e "":             p50 ${n.toFixed(0)} ms (${RUNS} runs)`);
  console.log(`ratio:                       ${(p / n).toFixed(2)}x (goal: at most 2x)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
