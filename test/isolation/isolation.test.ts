import * as fs from "node:fs/promises";
import { runInSandbox, sandboxSpec, startSandboxPair, type TestRuntime } from "../support/runtime";
import type { RuntimeSandbox } from "../../src/local/runtime/types";

jest.setTimeout(120_000);

let t: TestRuntime;
let a: RuntimeSandbox;
let b: RuntimeSandbox;

beforeAll(async () => {
  ({ t, a, b } = await startSandboxPair("isoa", "isob"));
});
afterAll(async () => {
  await t?.dispose();
});

const asRoot = { user: "root" };
/** The Node binary every sandbox has (bound read-only by the runtime). */
const NODE = "/.sandbox-iac/node";
/** Allocates 1 MiB buffers (outside the V8 heap) until something stops it. */
const MEMORY_BOMB = "const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1));";
/** Spawns up to 1500 sleeps; prints how many started and why the next one failed, then kills them. */
const FORK_BOMB = [
  'const { spawn } = require("child_process");',
  "const kids = []; let over = false;",
  "const done = (code) => { if (over) return; over = true;",
  '  console.log(kids.filter((k) => k.pid).length + " " + code); for (const k of kids) k.kill("SIGKILL"); process.exit(0); };',
  'const next = () => { if (kids.length >= 1500) return done("none");',
  '  try { const c = spawn("sleep", ["600"], { stdio: "ignore" }); c.on("error", (e) => done(e.code));',
  "    kids.push(c); setImmediate(next); } catch (e) { done(e.code); } };",
  "next();",
].join(" ");

describe("filesystem isolation", () => {
  it("hides the host's /work, home dirs, data dir and project checkout even from root", async () => {
    const paths = [
      "/work",
      "/work/main",
      t.dataDir,
      process.cwd(),
      "/home/cloudsdk",
      "/old_root",
      "/farm",
    ];
    const r = await runInSandbox(
      a.agentSocket,
      paths.map((p) => `test -e '${p}' && echo "visible ${p}"`).join("; ") + "; ls /home",
      asRoot,
    );
    expect(r.stdout).toBe("user\n");
  });

  it("gives root an empty /root of its own, not the host's", async () => {
    const host = await fs.readdir("/root");
    const r = await runInSandbox(a.agentSocket, "ls -A /root", asRoot);
    const inside = r.stdout.split("\n").filter(Boolean);
    expect(inside.filter((name) => host.includes(name) && !name.startsWith(".npm"))).toEqual([]);
  });

  it("keeps one sandbox's files out of another", async () => {
    await runInSandbox(a.agentSocket, "echo secret > /tmp/only-in-a");
    const r = await runInSandbox(b.agentSocket, "test -e /tmp/only-in-a && echo leaked; echo done");
    expect(r.stdout).toBe("done\n");
  });

  it("hides the host's /sys", async () => {
    const r = await runInSandbox(a.agentSocket, "ls -A /sys | wc -l", asRoot);
    expect(r.stdout.trim()).toBe("0");
  });
});

describe("process isolation", () => {
  it("shows a sandbox neither the host's processes nor another sandbox's", async () => {
    await runInSandbox(a.agentSocket, "nohup sleep 3131 >/dev/null 2>&1 &");
    const r = await runInSandbox(b.agentSocket, "cat /proc/[0-9]*/cmdline | tr '\\0' ' '", asRoot);
    expect(r.stdout).not.toContain("3131");
    expect(r.stdout).not.toContain("jest");
    const own = await runInSandbox(
      a.agentSocket,
      "cat /proc/[0-9]*/cmdline | tr '\\0' ' '",
      asRoot,
    );
    expect(own.stdout).toContain("sleep 3131");
  });
});

describe("privileges", () => {
  it("fails when root inside tries to mount", async () => {
    const r = await runInSandbox(
      a.agentSocket,
      "mkdir -p /tmp/m && mount -t tmpfs none /tmp/m",
      asRoot,
    );
    expect(r.exitCode).not.toBe(0);
  });

  it("lacks CAP_SYS_ADMIN and CAP_SYS_PTRACE", async () => {
    const r = await runInSandbox(a.agentSocket, "grep CapEff /proc/self/status", asRoot);
    const eff = BigInt(`0x${r.stdout.split(/\s+/)[1]}`);
    const CAP_SYS_ADMIN = 21n;
    const CAP_SYS_PTRACE = 19n;
    expect((eff >> CAP_SYS_ADMIN) & 1n).toBe(0n);
    expect((eff >> CAP_SYS_PTRACE) & 1n).toBe(0n);
  });

  it("fails when root inside reads the host disk through a device node it made", async () => {
    const { rdev } = await fs.stat("/dev/vda").catch(() => ({ rdev: 0 }));
    const major = Math.floor(rdev / 256) || 8;
    const minor = rdev % 256;
    const r = await runInSandbox(
      a.agentSocket,
      `mknod /tmp/disk b ${major} ${minor} && head -c 16 /tmp/disk | wc -c`,
      asRoot,
    );
    expect(r.stdout.trim()).not.toBe("16");
    expect(r.stderr).toMatch(/denied|not permitted/i);
  });
});

describe("resource limits", () => {
  it("OOM-kills a memory bomb inside the sandbox and keeps the sandbox and its neighbour working", async () => {
    const small = await t.runtime.start(sandboxSpec(t, "membomb", { memoryMB: 128 }));
    try {
      const bomb = await runInSandbox(
        small.agentSocket,
        `${NODE} -e '${MEMORY_BOMB}'; echo status $?`,
      );
      expect(bomb.stdout).toBe("status 137\n");
      expect((await runInSandbox(small.agentSocket, "echo alive")).stdout).toBe("alive\n");
      expect((await runInSandbox(b.agentSocket, "echo neighbour")).stdout).toBe("neighbour\n");
    } finally {
      await small.stop();
    }
  });

  it("stops a fork bomb at the pids limit and keeps the neighbour working", async () => {
    const bombed = await t.runtime.start(sandboxSpec(t, "forkbomb"));
    try {
      // Generous: spawning 1024 processes one by one takes a minute on a loaded 2-core machine.
      const r = await runInSandbox(bombed.agentSocket, `${NODE} -e '${FORK_BOMB}'`, {
        timeoutMs: 150_000,
      });
      const [spawned, code] = r.stdout.trim().split(" ");
      expect(code).toBe("EAGAIN");
      expect(Number(spawned)).toBeLessThan(1024);
      expect((await runInSandbox(b.agentSocket, "echo neighbour")).stdout).toBe("neighbour\n");
    } finally {
      await bombed.stop();
    }
  }, 240_000);
});
