// Starts `sandbox-iac serve` as its own process, the way users run it, so the
// benchmark client and the service do not share one event loop.
"use strict";
const { spawn } = require("node:child_process");
const path = require("node:path");

const CLI = path.join(__dirname, "..", "dist", "cli", "main.js");

/** Resolves with { apiUrl, sandboxUrl, apiKey, pid, close() } once the ready line is printed. */
function startServiceProcess(dataDir) {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--data-dir", dataDir], {
    // The service log goes to a file beside the data dir, out of the figures.
    stdio: ["ignore", "pipe", require("node:fs").openSync(`${dataDir}.log`, "a")],
  });
  return new Promise((resolve, reject) => {
    let buf = "";
    child.on("exit", (code, signal) =>
      reject(new Error(`sandbox-iac serve exited early (${signal ?? code})`)),
    );
    child.stdout.on("data", (chunk) => {
      buf += chunk;
      const m = /E2B_API_URL=(\S+) E2B_SANDBOX_URL=(\S+) E2B_API_KEY=(\S+)/.exec(buf);
      if (!m) return;
      child.stdout.resume();
      resolve({
        apiUrl: m[1],
        sandboxUrl: m[2],
        apiKey: m[3],
        pid: child.pid,
        close: () =>
          new Promise((done) => {
            child.removeAllListeners("exit");
            child.on("exit", () => done());
            child.kill("SIGTERM");
          }),
      });
    });
  });
}

module.exports = { startServiceProcess };
