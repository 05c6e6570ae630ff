import * as fs from "node:fs/promises";
import * as path from "node:path";
import { createHmac } from "node:crypto";
import { SandboxIacError, redact } from "../../../errors";
import { createTestRuntime, type TestRuntime } from "../../../../test/support/runtime";
import { agentClient } from "../agent-client";
import {
  SANDBOXES_STATE_FILE,
  SandboxManager,
  type CreateSandboxInput,
  type SandboxManagerOptions,
} from "./manager";
import type { TemplateRegistry } from "../templates/lookup";
import { eventually } from "../../../../test/support/eventually";
import { sandboxCgroupOf } from "../../../../test/support/sandbox-cgroups";

jest.setTimeout(120_000);

const SECRET = "test-token-secret-0123456789abcdef";

/** Two templates on the base layer that differ in their memory limit (so in their pool key). */
function templates(baseLayer: string): TemplateRegistry {
  const template = (templateID: string, memoryMB: number) => ({
    templateID,
    buildID: `${templateID}-build`,
    names: [templateID],
    layers: [baseLayer],
    envs: { FROM_TEMPLATE: templateID },
    defaultUser: "user",
    cpuCount: 1,
    memoryMB,
    diskSizeMB: 1024,
    envdVersion: "0.5.0",
  });
  return {
    resolve: (id) =>
      id === "base" ? template("base", 256) : id === "big" ? template("big", 320) : undefined,
    markSpawned: () => undefined,
  };
}

/** Opens the manager over the test runtime with the two templates; `extra` overrides options. */
function openManager(extra: Partial<SandboxManagerOptions> = {}): Promise<SandboxManager> {
  return SandboxManager.open({
    dataDir: t.dataDir,
    runtime: t.runtime,
    templates: templates(t.runtime.baseLayerId),
    tokenSecret: SECRET,
    log: () => undefined,
    ...extra,
  });
}

function input(template: string, envVars: Record<string, string>): CreateSandboxInput {
  return {
    template,
    timeoutSec: 300,
    secure: true,
    allowInternetAccess: true,
    autoPause: false,
    autoResume: false,
    metadata: {},
    envVars,
  };
}

/** Host pids whose cgroup names `id` (the sandbox's processes). */
async function pidsOf(id: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await fs.readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const cg = await fs.readFile(`/proc/${name}/cgroup`, "utf8").catch(() => "");
    if (cg.includes(`-${id}\n`)) pids.push(Number(name));
  }
  return pids;
}

let t: TestRuntime;
let m: SandboxManager | undefined;
beforeAll(async () => {
  t = await createTestRuntime();
});
afterAll(async () => {
  await m?.close();
  await t?.dispose();
});

describe("the warm pool", () => {
  let warm: string[] = [];

  it("keeps started pool sandboxes out of the list, the metrics and the state file", async () => {
    m = await openManager();
    await eventually(() => m!.warmIds().length === 2, { timeoutMs: 30_000, intervalMs: 50 });
    warm = m.warmIds();
    expect(m.all()).toEqual([]);
    for (const id of warm) {
      expect(m.exists(id)).toBe(false);
      expect(m.reachable(id)).toBeUndefined();
      expect(m.metrics.latest(id)).toBeUndefined();
      expect((await pidsOf(id)).length).toBeGreaterThan(0);
    }
    const state = JSON.parse(
      await fs.readFile(path.join(t.dataDir, SANDBOXES_STATE_FILE), "utf8"),
    ) as { sandboxes: unknown[] };
    expect(state.sandboxes).toEqual([]);
  });

  it("gives a claimed sandbox its own id, hostname, environment and access token", async () => {
    const a = await m!.create(input("base", { MINE: "a" }));
    const b = await m!.create(input("base", { MINE: "b" }));
    expect(warm).toContain(a.sandboxID);
    expect(warm).toContain(b.sandboxID);
    expect(a.sandboxID).not.toBe(b.sandboxID);
    for (const [rec, mine] of [
      [a, "a"],
      [b, "b"],
    ] as const) {
      const processes = m!.reachable(rec.sandboxID)!.processes;
      const token = m!.tokenOf(rec)!;
      const res = await (
        await agentClient(processes, { accessToken: token }).start(
          'echo "$(hostname) $HOSTNAME $E2B_SANDBOX_ID $MINE $FROM_TEMPLATE"',
        )
      ).wait();
      expect(res).toMatchObject({
        exitCode: 0,
        stdout: `${rec.sandboxID} ${rec.sandboxID} ${rec.sandboxID} ${mine} base\n`,
        stderr: "",
      });
      // The creation sample is taken after the answer; readers wait for it, as the metrics routes do.
      await m!.metrics.settled([rec.sandboxID]);
      expect(m!.metrics.latest(rec.sandboxID)).toBeDefined();
    }
    const other = m!.tokenOf(a)!;
    await expect(
      agentClient(m!.reachable(b.sandboxID)!.processes, { accessToken: other }).start("true"),
    ).rejects.toThrow(SandboxIacError);
    expect(
      m!
        .all()
        .map((r) => r.sandboxID)
        .sort(),
    ).toEqual([a.sandboxID, b.sandboxID].sort());
  });

  it("claims only a sandbox started with the template's memory limit", async () => {
    await eventually(() => m!.warmIds().length === 2, { timeoutMs: 30_000, intervalMs: 50 });
    const baseWarm = m!.warmIds();
    const big = await m!.create(input("big", {}));
    expect(baseWarm).not.toContain(big.sandboxID);
    await eventually(() => m!.warmIds().length >= 3, { timeoutMs: 30_000, intervalMs: 50 });
    const bigWarm = m!.warmIds().filter((id) => !baseWarm.includes(id));
    const big2 = await m!.create(input("big", {}));
    expect(bigWarm).toContain(big2.sandboxID);
    const cg = sandboxCgroupOf(big2.sandboxID, "memory");
    // The machine kind runs cgroup v1 (hybrid); the limit is the memory controller's file.
    expect(cg).toBeDefined();
    expect((await fs.readFile(path.join(cg!, "memory.limit_in_bytes"), "utf8")).trim()).toBe(
      String(320 * 1024 * 1024),
    );
  });

  it("leaves no pool sandbox process, cgroup, directory or token held for redaction after close()", async () => {
    const tokenOf = (id: string) => createHmac("sha256", SECRET).update(id).digest("hex");
    await eventually(() => m!.warmIds().length >= 3, { timeoutMs: 30_000, intervalMs: 50 });
    // Members warmed up after a secure create without variables of its own (big2's) got its
    // /init, with their own token (pre-init.ts); members started before it did not.
    await eventually(() => m!.warmIds().some((id) => redact(tokenOf(id)) === "[redacted]"), {
      timeoutMs: 30_000,
      intervalMs: 50,
    });
    const pool = m!.warmIds();
    const users = m!.all().map((r) => r.sandboxID);
    const tokens = pool.map(tokenOf);
    expect(tokens.some((token) => redact(token) === "[redacted]")).toBe(true);
    await m!.close();
    m = undefined;
    // Discarded without a claim, they open nothing: a service kept two strings for each one until now.
    for (const token of tokens) expect(redact(token)).toBe(token);
    const dirs = await fs.readdir(path.join(t.dataDir, "sandboxes"));
    for (const id of pool) {
      expect(dirs).not.toContain(id);
      expect(await pidsOf(id)).toEqual([]);
      expect(sandboxCgroupOf(id, "memory")).toBeUndefined();
    }
    // The user sandboxes stay, paused on their kept layers.
    expect(dirs.sort()).toEqual([...users].sort());
  });

  it("removes sandbox directories the state file does not know on open (a kill -9 left them)", async () => {
    const orphan = "i0123456789abcdefghij";
    await fs.mkdir(path.join(t.dataDir, "sandboxes", orphan, "upper"), { recursive: true });
    m = await openManager({ warmPoolSize: 0 });
    const dirs = await fs.readdir(path.join(t.dataDir, "sandboxes"));
    expect(dirs).not.toContain(orphan);
    expect(m.all().every((r) => r.state === "paused" && dirs.includes(r.sandboxID))).toBe(true);
    expect(m.warmIds()).toEqual([]);
  });
});
