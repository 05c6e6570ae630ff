// Starts `sandbox-iac serve` as its own process, the way users run it, so the
// benchmark client and the service do not share one event loop.
"use strict";
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const CLI = path.join(__dirname, "..", "dist", "cli", "main.js");
/** How long a start may take before it counts as hung (a first start builds the base layer). */
const READY_TIMEOUT_MS = 180_000;

/**
 * Resolves with { apiUrl, sandboxUrl, apiKey, pid, close(), kill9() } once the
 * ready line is printed. `close()` is the normal shutdown (SIGTERM: the
 * sandboxes stop and their mounts go); `kill9()` is a crash (SIGKILL). Both
 * resolve once the process is gone.
 */
function startServiceProcess(dataDir) {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--data-dir", dataDir], {
    // The service log goes to a file beside the data dir, out of the figures.
    stdio: ["ignore", "pipe", fs.openSync(`${dataDir}.log`, "a")],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const stop = async (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return new Promise((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`sandbox-iac serve printed no ready line in ${READY_TIMEOUT_MS} ms`));
    }, READY_TIMEOUT_MS);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`sandbox-iac serve exited early (${signal ?? code}), see ${dataDir}.log`));
    });
    child.stdout.on("data", (chunk) => {
      buf += chunk;
      // One setting at a time: the ready line has more (E2B_VOLUME_API_URL) between them.
      const setting = (name) => new RegExp(`${name}=(\\S+)`).exec(buf)?.[1];
      const apiKey = buf.includes("\n") ? setting("E2B_API_KEY") : undefined;
      if (!apiKey) return;
      clearTimeout(timer);
      child.stdout.resume();
      resolve({
        apiUrl: setting("E2B_API_URL"),
        sandboxUrl: setting("E2B_SANDBOX_URL"),
        apiKey,
        pid: child.pid,
        close: () => stop("SIGTERM"),
        kill9: () => stop("SIGKILL"),
      });
    });
  });
}

module.exports = { startServiceProcess };
