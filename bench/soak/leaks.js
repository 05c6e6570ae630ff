// What the soak counts to find leaks, each limited to what its own services
// made (other services may run on the same host): mounts and loop devices
// under its data dir, veths of slots its services claimed, nftables tables of
// its services' pids, sandbox cgroups of its data dir, and the fds and RSS of
// the running service.
"use strict";
const { execFileSync } = require("node:child_process");
const { createHash } = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

/** The runtime's names (src/local/runtime/constants.ts). */
const SLOTS_DIR = "/run/sandbox-iac-slots";
const VETH_PREFIX = "sbx";
const NFT_TABLE_PREFIX = "sandbox_iac_";
const CGROUP_GROUP = "sandbox-iac";
const CGROUP_ROOT = "/sys/fs/cgroup";
const V1_CONTROLLERS = ["cpu", "cpuacct", "memory", "pids", "freezer"];

/** The counters, in the order they are printed. */
const COUNTERS = [
  "mounts",
  "loops",
  "veths",
  "nftTables",
  "cgroups",
  "fds",
  "rssMiB",
  "orphanSandboxDirs",
  "spareLayers",
];
/** The counters of the data dir's content, read by {@link spareDirs}. */
const DATA_DIR_COUNTERS = ["orphanSandboxDirs", "spareLayers"];

function run(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", timeout: 10_000 });
  } catch {
    return "";
  }
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeMountPath(p) {
  return p.replace(/\\([0-7]{3})/g, (_, oct) => String.fromCharCode(parseInt(oct, 8)));
}

function mountsUnder(dataDir) {
  const prefix = `${dataDir}/`;
  return fs
    .readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4])
    .filter((p) => p !== undefined && unescapeMountPath(p).startsWith(prefix)).length;
}

function loopsUnder(dataDir) {
  return run("losetup", ["-a"])
    .split("\n")
    .filter((line) => line.includes(`(${dataDir}/`)).length;
}

/** Slot indexes claimed by one of `pids` (a claim's owner file is `<pid> <sandboxID>`). */
function slotsOf(pids) {
  const out = new Set();
  for (const name of fs
    .readdirSync(SLOTS_DIR, { withFileTypes: false })
    .filter((n) => /^\d+$/.test(n))) {
    let owner;
    try {
      owner = Number(fs.readFileSync(path.join(SLOTS_DIR, name, "owner"), "utf8").split(" ")[0]);
    } catch {
      continue;
    }
    if (pids.has(owner)) out.add(Number(name));
  }
  return out;
}

function vethsOf(pids) {
  let slots;
  try {
    slots = slotsOf(pids);
  } catch {
    slots = new Set();
  }
  const names = run("ip", ["-o", "link"])
    .split("\n")
    .map((line) => /^\d+:\s+([^:@\s]+)/.exec(line)?.[1])
    .filter((n) => n?.startsWith(VETH_PREFIX));
  return names.filter((n) => slots.has(Number(n.slice(VETH_PREFIX.length)))).length;
}

function nftTablesOf(pids) {
  const pattern = new RegExp(`^table inet ${NFT_TABLE_PREFIX}(\\d+)_[0-9a-f]+$`);
  return run("nft", ["list", "tables"])
    .split("\n")
    .map((line) => pattern.exec(line.trim()))
    .filter((m) => m && pids.has(Number(m[1]))).length;
}

/** Directories named `<prefix>*` at most two levels below `dir`. */
function cgroupNamesUnder(dir, prefix, depth = 2, out = new Set()) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    if (e.name.startsWith(prefix)) out.add(e.name);
    else if (depth > 1) cgroupNamesUnder(path.join(dir, e.name), prefix, depth - 1, out);
  }
  return out;
}

/**
 * The sandbox cgroups of the data dir: the runtime names them
 * `<sha256(dataDir)[:10]>-<sandboxID>` under a `sandbox-iac` group below the
 * service's own cgroup (per controller on cgroup v1).
 */
function cgroupsOf(dataDir) {
  const prefix = `${createHash("sha256").update(dataDir).digest("hex").slice(0, 10)}-`;
  const names = new Set();
  if (fs.existsSync(`${CGROUP_ROOT}/cgroup.controllers`)) {
    cgroupNamesUnder(`${CGROUP_ROOT}/${CGROUP_GROUP}`, prefix, 2, names);
    return names.size;
  }
  // The service is the soak's child: it has the soak's cgroups.
  const own = new Map();
  for (const line of fs.readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
    const [, ctrls, p] = line.split(":");
    if (ctrls && p !== undefined) for (const c of ctrls.split(",")) own.set(c, p);
  }
  for (const c of V1_CONTROLLERS) {
    const p = own.get(c);
    if (p === undefined) continue;
    cgroupNamesUnder(`${CGROUP_ROOT}/${c}${p === "/" ? "" : p}/${CGROUP_GROUP}`, prefix, 2, names);
  }
  return names.size;
}

function fdsOf(pid) {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

function rssMiBOf(pid) {
  try {
    const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

/**
 * One reading of every counter. `servicePids` are the pids of every service
 * the soak started (tables and slot claims of dead ones count until the next
 * start clears them); `pid` is the running one (0 when none).
 */
function readCounters({ dataDir, servicePids, pid }) {
  return {
    mounts: mountsUnder(dataDir),
    loops: loopsUnder(dataDir),
    veths: vethsOf(servicePids),
    nftTables: nftTablesOf(servicePids),
    cgroups: cgroupsOf(dataDir),
    fds: pid ? fdsOf(pid) : 0,
    rssMiB: pid ? rssMiBOf(pid) : 0,
  };
}

function entries(dir) {
  try {
    return fs.readdirSync(dir).filter((n) => !n.startsWith("."));
  } catch {
    return [];
  }
}

/** Sandboxes of the data dir whose disk image is attached to a loop device (running ones). */
function attachedSandboxes(dataDir) {
  const prefix = `(${dataDir}/sandboxes/`;
  return new Set(
    run("losetup", ["-a"])
      .split("\n")
      .filter((line) => line.includes(prefix))
      .map((line) => line.slice(line.indexOf(prefix) + prefix.length).split("/")[0]),
  );
}

/**
 * What the data dir holds beyond what the soak knows: writable layers of
 * sandboxes neither known to the soak nor running (warm-pool members run), and
 * layers of no template or snapshot it knows (the base layer among them).
 * Read with no traffic, after the checks removed what cut-off calls left, until
 * two readings a second apart agree (pool members start and stop meanwhile).
 */
async function spareDirs(dataDir, { sandboxIDs, templates, snapshots }) {
  const read = () => {
    const running = attachedSandboxes(dataDir);
    return {
      orphanSandboxDirs: entries(path.join(dataDir, "sandboxes")).filter(
        (id) => !sandboxIDs.has(id) && !running.has(id),
      ).length,
      spareLayers: entries(path.join(dataDir, "layers")).length - templates - snapshots,
    };
  };
  let last = read();
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const next = read();
    if (JSON.stringify(next) === JSON.stringify(last)) return next;
    last = next;
  }
  return last;
}

/**
 * Reads the counters until the sandbox-bound ones (loops, veths, cgroups) stay
 * the same for three readings a second apart (the warm pool fills after a
 * start), at most `timeoutMs`; returns the last reading.
 */
async function settledCounters(where, timeoutMs = 45_000) {
  const deadline = Date.now() + timeoutMs;
  const key = (c) => `${c.mounts}/${c.loops}/${c.veths}/${c.cgroups}`;
  let last = readCounters(where);
  let same = 0;
  while (same < 2 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    const next = readCounters(where);
    same = key(next) === key(last) ? same + 1 : 0;
    last = next;
  }
  return last;
}

module.exports = { COUNTERS, DATA_DIR_COUNTERS, readCounters, settledCounters, spareDirs };
