/**
 * SandboxRuntime.setBackground on real sandboxes: the cgroup's `cpu.idle`,
 * for a running sandbox and for one whose start comes after the call, what it
 * means to the scheduler, and a start that waits for the foreground between
 * its host phases.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { createTestRuntime, runInSandbox, type TestRuntime } from "../../../test/support/runtime";
import { eventually } from "../../../test/support/eventually";
import {
  onCgroupV2,
  sandboxCgroupOf,
  sandboxGroupDir,
} from "../../../test/support/sandbox-cgroups";
import type { RuntimeSandbox, SandboxSpec } from "./types";

jest.setTimeout(120_000);

/** The cgroup directory of sandbox `id` for `controller`. */
function cgroupOf(id: string, controller: string): string {
  const dir = sandboxCgroupOf(id, controller);
  if (!dir)
    throw new Error(
      `no ${controller} cgroup of sandbox ${id} under ${sandboxGroupDir(controller)}`,
    );
  return dir;
}

/** The sandbox's cgroup `cpu.idle`: "1" in the background. */
function cpuIdle(id: string): string {
  return fs.readFileSync(path.join(cgroupOf(id, "cpu"), "cpu.idle"), "utf8").trim();
}

/** CPU time the sandbox's processes used so far, in ms. */
function cpuMs(id: string): number {
  if (onCgroupV2) {
    const stat = fs.readFileSync(path.join(cgroupOf(id, "cpu"), "cpu.stat"), "utf8");
    return Number(/usage_usec (\d+)/.exec(stat)?.[1]) / 1000;
  }
  return Number(fs.readFileSync(path.join(cgroupOf(id, "cpuacct"), "cpuacct.usage"), "utf8")) / 1e6;
}

/**
 * Runs `loops` busy loops in the sandbox until it stops (the command is not
 * awaited: its stream ends with the sandbox).
 */
function spin(sbx: RuntimeSandbox, loops: number): void {
  const script = `${"taskset -c 0 sh -c 'while :; do :; done' & ".repeat(loops)}wait`;
  runInSandbox(sbx.agentSocket, script, { timeoutMs: 0 }).catch(() => undefined);
}

let t: TestRuntime;
let supported = false;
/** The runtime's log lines. */
const lines: string[] = [];
beforeAll(async () => {
  t = await createTestRuntime({ log: (line) => lines.push(line) });
  const probe = await t.runtime.start(spec("bgprobe", 1));
  supported = fs.existsSync(path.join(cgroupOf("bgprobe", "cpu"), "cpu.idle"));
  await probe.stop();
  await t.runtime.destroy("bgprobe");
});
afterAll(async () => {
  await t?.dispose();
});

/** The phases of sandbox `id`'s start, from its "ms since start" log line. */
function startPhases(id: string): string {
  const line = lines.find((l) => l.startsWith(`sandbox ${id}: pid `));
  if (!line) throw new Error(`no start line for sandbox ${id} among ${lines.length} log lines`);
  return line.slice(line.indexOf("ms since start: "));
}

function spec(sandboxID: string, cpuCount: number): SandboxSpec {
  return {
    sandboxID,
    layers: [t.runtime.baseLayerId],
    cpuCount,
    memoryMB: 256,
    allowInternetAccess: true,
  };
}

describe("setBackground()", () => {
  it("starts a sandbox named before its start in the background, its host phases waiting for the foreground, and moves it back and forth", async () => {
    if (!supported) throw new Error("this kernel has no cgroup cpu.idle (Linux 5.15+)");
    t.runtime.setBackground(["bgearly"], true);
    const sbx = await t.runtime.start(spec("bgearly", 1));
    try {
      expect(cpuIdle("bgearly")).toBe("1");
      // Nothing brought it back: each host phase waited out the bound, then went on.
      expect(startPhases("bgearly")).toMatch(
        /\bforeground \d+.*\bnamespaces .*\bforeground \d+.*\bspawn /,
      );
      t.runtime.setBackground(["bgearly"], false);
      expect(cpuIdle("bgearly")).toBe("0");
      t.runtime.setBackground(["bgearly"], true);
      expect(cpuIdle("bgearly")).toBe("1");
      // An id not started yet, or gone, is no error.
      t.runtime.setBackground(["bgearly", "bgnever"], false);
      expect(cpuIdle("bgearly")).toBe("0");
    } finally {
      await sbx.stop();
      await t.runtime.destroy("bgearly");
    }
  });

  it("starts every other sandbox in the foreground, without waiting", async () => {
    if (!supported) throw new Error("this kernel has no cgroup cpu.idle (Linux 5.15+)");
    const sbx = await t.runtime.start(spec("bgplain", 1));
    try {
      expect(cpuIdle("bgplain")).toBe("0");
      expect(startPhases("bgplain")).not.toContain("foreground");
    } finally {
      await sbx.stop();
      await t.runtime.destroy("bgplain");
    }
  });

  it("gives a sandbox in the background the CPU only when the foreground leaves it", async () => {
    if (!supported) throw new Error("this kernel has no cgroup cpu.idle (Linux 5.15+)");
    t.runtime.setBackground(["bgback"], true);
    const back = await t.runtime.start(spec("bgback", 1));
    const front = await t.runtime.start(spec("bgfront", 1));
    try {
      // One loop each, both on the first core: \`cpu.idle\` ranks a cgroup against its
      // siblings on one core's run queue, so loops on different cores (one spread by the
      // kernel's balancing while other processes keep a core busy, as in CI) would each
      // run whatever their weights. Pinned, the test sees the weights alone.
      spin(back, 1);
      spin(front, 1);
      // Measured once both loops run: the background one may run alone until then.
      const started = cpuMs("bgfront");
      await eventually(() => cpuMs("bgfront") - started > 200 && cpuMs("bgback") > 0);
      const front0 = cpuMs("bgfront");
      const back0 = cpuMs("bgback");
      await eventually(() => cpuMs("bgfront") - front0 > 1_000);
      const frontUsed = cpuMs("bgfront") - front0;
      const backUsed = cpuMs("bgback") - back0;
      // With equal weights the two loops would share the core about evenly.
      expect(backUsed).toBeLessThan(frontUsed / 4);
    } finally {
      await front.stop();
      await back.stop();
      await t.runtime.destroy("bgfront");
      await t.runtime.destroy("bgback");
      t.runtime.setBackground(["bgback"], false);
    }
  });
});
