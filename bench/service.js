// Starts `sandbox-iac serve` as its own process, the way users run it, so the
// benchmark client and the service do not share one event loop.
"use strict";
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { assertBuildCurrent } = require("./build-current");

const CLI = path.join(__dirname, "..", "dist", "cli", "main.js");
/**
 * How long a start may take before it counts as hung (a first start builds
 * the base layer; on a machine at load 30 that took over 180 s).
 */
const READY_TIMEOUT_MS = Number(process.env.BENCH_READY_TIMEOUT_MS ?? 600_000);
/**
 * Room for the live-sandboxes rows (BENCH_LIVE, see scale.js) plus the warm
 * pool: the default `--max-sandboxes` follows the host's memory (41 on 24 GiB)
 * and answered the 42nd live sandbox with a 429.
 */
const MAX_SANDBOXES = Number(process.env.BENCH_LIVE ?? 200) + 32;

/**
 * Resolves with { apiUrl, sandboxUrl, apiKey, pid, close(), kill9() } once the
 * ready line is printed. `close()` is the normal shutdown (SIGTERM: the
 * sandboxes stop and their mounts go); `kill9()` is a crash (SIGKILL). Both
 * resolve once the process is gone. With `onWaiting`, it is called every
 * 15 s of the wait with the last line of the service's log, so a slow start
 * shows what it is doing.
 */
function startServiceProcess(dataDir, { onWaiting } = {}) {
  assertBuildCurrent(CLI);
  const child = spawn(
    process.execPath,
    [CLI, "serve", "--port", "0", "--data-dir", dataDir, "--max-sandboxes", String(MAX_SANDBOXES)],
    {
      // The service log goes to a file beside the data dir, out of the figures.
      stdio: ["ignore", "pipe", fs.openSync(`${dataDir}.log`, "a")],
    },
  );
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const stop = async (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  const waiting = onWaiting
    ? setInterval(() => onWaiting(lastLogLine(`${dataDir}.log`)), 15_000)
    : undefined;
  const done = () => {
    clearTimeout(timer);
    clearInterval(waiting);
  };
  let timer;
  return new Promise((resolve, reject) => {
    let buf = "";
    timer = setTimeout(() => {
      clearInterval(waiting);
      child.kill("SIGKILL");
      reject(new Error(`sandbox-iac serve printed no ready line in ${READY_TIMEOUT_MS} ms`));
    }, READY_TIMEOUT_MS);
    child.once("exit", (code, signal) => {
      done();
      reject(new Error(`sandbox-iac serve exited early (${signal ?? code}), see ${dataDir}.log`));
    });
    child.stdout.on("data", (chunk) => {
      buf += chunk;
      // One setting at a time: the ready line has more (E2B_VOLUME_API_URL) between them.
      const setting = (name) => new RegExp(`${name}=(\\S+)`).exec(buf)?.[1];
      const apiKey = buf.includes("\n") ? setting("E2B_API_KEY") : undefined;
      if (!apiKey) return;
      done();
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

/** The last non-empty line of the file `file` (its last 4 KiB), or "" when unreadable. */
function lastLogLine(file) {
  try {
    const fd = fs.openSync(file, "r");
    try {
      const size = fs.fstatSync(fd).size;
      const buf = Buffer.alloc(Math.min(size, 4096));
      fs.readSync(fd, buf, 0, buf.length, size - buf.length);
      return buf.toString("utf8").trim().split("\n").pop() ?? "";
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return "";
  }
}

module.exports = { startServiceProcess };
