import * as fs from "node:fs/promises";
import * as path from "node:path";
import { SandboxIacError } from "../../errors";
import { agentBundleDirOnHost } from "../agent-launch";
import { createTestRuntime, runInSandbox, type TestRuntime } from "../../../test/support/runtime";
import type { SandboxSpec } from "./types";

jest.setTimeout(120_000);

let t: TestRuntime;
beforeAll(async () => {
  t = await createTestRuntime();
});
afterAll(async () => {
  await t?.dispose();
});

function spec(sandboxID: string, layers = [t.runtime.baseLayerId]): SandboxSpec {
  return { sandboxID, layers, cpuCount: 1, memoryMB: 256, allowInternetAccess: true };
}

describe("createRuntime()", () => {
  it("assembles a base layer with the sandbox user, a sticky /tmp and no host password hashes", async () => {
    const root = path.join(t.dataDir, "layers", t.runtime.baseLayerId, "root");
    const passwd = await fs.readFile(path.join(root, "etc/passwd"), "utf8");
    expect(passwd).toContain("user:x:1000:1000::/home/user:/bin/bash");
    expect(passwd.split("\n").filter((l) => l.split(":")[2] === "1000")).toHaveLength(1);
    const shadow = await fs.readFile(path.join(root, "etc/shadow"), "utf8");
    expect(
      shadow
        .split("\n")
        .filter(Boolean)
        .every((l) => l.split(":")[1] === "*"),
    ).toBe(true);
    expect((await fs.stat(path.join(root, "tmp"))).mode & 0o7777).toBe(0o1777);
    const home = await fs.stat(path.join(root, "home/user"));
    expect([home.uid, home.gid]).toEqual([1000, 1000]);
    // The base layer's /usr holds only the sudo shim; the rest is the host's /usr.
    const usr = path.join(t.dataDir, "layers", t.runtime.baseLayerId, "usr");
    expect(await fs.readdir(usr)).toEqual(["local"]);
    expect((await fs.stat(path.join(usr, "local/bin/sudo"))).mode & 0o777).toBe(0o755);
  });
});

describe("start()", () => {
  it("runs a sandbox through start, stats, freeze, thaw, stop and a restart that keeps files", async () => {
    const sbx = await t.runtime.start(spec("life"));
    expect(
      await runInSandbox(sbx.agentSocket, "hostname; id -un; echo hi > ~/keep.txt", {
        user: "user",
      }),
    ).toEqual({
      exitCode: 0,
      stdout: "life\nuser\n",
      stderr: "",
    });

    await runInSandbox(
      sbx.agentSocket,
      "rm /etc/hostname; head -c 3000000 /dev/urandom > /tmp/blob",
      { user: "root" },
    );
    await sbx.stats();
    const stats = await sbx.stats();
    expect(stats.cpuCount).toBe(1);
    expect(stats.memTotal).toBe(256 * 1024 * 1024);
    expect(stats.memUsed).toBeGreaterThan(0);
    expect(stats.cpuUsedPct).toBeGreaterThanOrEqual(0);
    expect(stats.cpuUsedPct).toBeLessThanOrEqual(100);
    expect(stats.diskUsed).toBeGreaterThanOrEqual(3_000_000);
    expect(stats.diskTotal).toBeGreaterThan(stats.diskUsed);

    await sbx.freeze();
    // While frozen the agent cannot answer; thawing lets the same command through.
    const pending = runInSandbox(sbx.agentSocket, "echo thawed");
    await sbx.thaw();
    expect((await pending).stdout).toBe("thawed\n");

    await sbx.stop();
    await sbx.exited;
    await expect(sbx.stats()).rejects.toMatchObject({ code: "conflict" });

    const again = await t.runtime.start(spec("life"));
    const r = await runInSandbox(
      again.agentSocket,
      "cat ~/keep.txt; test -e /etc/hostname || echo gone",
      {
        user: "user",
      },
    );
    expect(r.stdout).toBe("hi\ngone\n");
    await again.stop();
  });

  it("gives login shells root's PATH only as root, without the profile forking id", async () => {
    const profile = await fs.readFile(
      path.join(t.dataDir, "layers", t.runtime.baseLayerId, "root", "etc", "profile"),
      "utf8",
    );
    expect(profile).not.toContain('"$(id -u)"');
    const sbx = await t.runtime.start(spec("profile"));
    try {
      const pathOf = async (user: string) =>
        (await runInSandbox(sbx.agentSocket, `bash -l -c 'echo "$PATH"'`, { user })).stdout;
      expect(await pathOf("root")).toMatch(/(^|:)\/usr\/local\/sbin(:|$)/);
      expect(await pathOf("user")).not.toMatch(/sbin/);
    } finally {
      await sbx.stop();
      await t.runtime.destroy("profile");
    }
  });

  it("resolves exited when the agent dies", async () => {
    const sbx = await t.runtime.start(spec("crash"));
    // pid 1 is bubblewrap's reaper; the agent is pid 2 and the sandbox ends with it.
    await runInSandbox(sbx.agentSocket, "kill -9 2", { user: "root" }).catch(() => undefined);
    await sbx.exited;
    // The runtime forgot it: the id can be started again.
    const again = await t.runtime.start(spec("crash"));
    await again.stop();
  });

  it("fails when the sandbox is already running", async () => {
    const sbx = await t.runtime.start(spec("twice"));
    try {
      await expect(t.runtime.start(spec("twice"))).rejects.toMatchObject({ code: "conflict" });
    } finally {
      await sbx.stop();
    }
  });

  it("fails when a layer does not exist", async () => {
    await expect(
      t.runtime.start(spec("nolayer", [t.runtime.baseLayerId, "missing"])),
    ).rejects.toMatchObject({
      code: "not_found",
      field: "layers",
    });
  });

  it("fails when the sandbox id is not lowercase letters and digits", async () => {
    const err: unknown = await t.runtime.start(spec("Bad-Id")).catch((e: unknown) => e);
    expect(SandboxIacError.hasCode(err, "invalid_argument")).toBe(true);
    expect(err).toMatchObject({ message: expect.stringContaining('"Bad-Id"') });
  });

  it("fails with the sandbox's output when the agent cannot start", async () => {
    const dataDir = await fs.mkdtemp(path.join(t.dataDir, "noagent"));
    const { createRuntime } = await import("./runtime");
    const rt = await createRuntime({ dataDir, agentBundleDir: dataDir, startTimeoutMs: 10_000 });
    try {
      const err: unknown = await rt.start(spec("noagent")).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "unavailable" });
      expect(err).toMatchObject({ message: expect.stringContaining("agent.js") });
    } finally {
      await rt.close();
    }
  });
});

describe("start() waiting for the agent", () => {
  // A runtime whose agent bundle the test rewrites: a copy of the built one.
  const STALL_MS = 1_000;
  let bundleDir: string;
  let rt: Awaited<ReturnType<typeof import("./runtime").createRuntime>>;
  beforeAll(async () => {
    bundleDir = await fs.mkdtemp(path.join(t.dataDir, "bundle"));
    await fs.cp(agentBundleDirOnHost(), bundleDir, { recursive: true });
    await fs.chmod(bundleDir, 0o755);
    const { createRuntime } = await import("./runtime");
    rt = await createRuntime({
      dataDir: await fs.mkdtemp(path.join(t.dataDir, "slowagent")),
      agentBundleDir: bundleDir,
      startTimeoutMs: STALL_MS,
    });
  });
  afterAll(async () => {
    await rt?.close();
  });
  const agentJs = () => path.join(bundleDir, "agent.js");

  it("waits past the stall limit for an agent that boots slowly but keeps using CPU", async () => {
    const real = await fs.readFile(agentJs(), "utf8");
    // More CPU time than the stall limit (so more wall time too) before the
    // agent proper starts: a fixed limit of STALL_MS would have given up.
    const spin = `{ const until = ${(STALL_MS + 200) * 1000}; while (process.cpuUsage().user < until); }\n`;
    await fs.writeFile(agentJs(), spin + real);
    try {
      const sbx = await rt.start(spec("slowboot"));
      expect(await runInSandbox(sbx.agentSocket, "echo up")).toMatchObject({ stdout: "up\n" });
      await sbx.stop();
    } finally {
      await fs.writeFile(agentJs(), real);
    }
  });

  it("gives up on an agent that is alive but makes no progress, saying so", async () => {
    await fs.writeFile(agentJs(), "setInterval(() => undefined, 1 << 30);\n");
    const err: unknown = await rt.start(spec("idleagent")).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "unavailable" });
    expect(err).toMatchObject({
      message: expect.stringContaining(`its sandbox used no CPU for ${STALL_MS} ms`),
    });
  });
});

describe("captureLayer()", () => {
  it("captures files and deletions so a sandbox started from the layers sees both", async () => {
    const src = await t.runtime.start(spec("src"));
    await runInSandbox(
      src.agentSocket,
      "echo made > /opt/made.txt && rm -r /etc/apt && mkdir -p /usr/local/lib/x && echo u > /usr/local/lib/x/f",
      {
        user: "root",
      },
    );
    await src.freeze();
    const layerId = await t.runtime.captureLayer("src");
    await src.thaw();
    await src.stop();
    expect(layerId).toMatch(/^[0-9a-f]+$/);

    const child = await t.runtime.start(spec("child", [t.runtime.baseLayerId, layerId]));
    const r = await runInSandbox(
      child.agentSocket,
      "cat /opt/made.txt /usr/local/lib/x/f; test -e /etc/apt || echo deleted",
    );
    expect(r.stdout).toBe("made\nu\ndeleted\n");
    await child.stop();

    await t.runtime.destroy("src");
    await t.runtime.destroy("child");
    await t.runtime.deleteLayer(layerId);
    await expect(fs.stat(path.join(t.dataDir, "layers", layerId))).rejects.toMatchObject({
      code: "ENOENT",
    });
    await expect(fs.stat(path.join(t.dataDir, "sandboxes", "src"))).rejects.toMatchObject({
      code: "ENOENT",
    });
  });

  it("captures a stopped sandbox's disk, with owners and an opaque directory, as a layer", async () => {
    const src = await t.runtime.start(spec("stoppedsrc"));
    await runInSandbox(
      src.agentSocket,
      "rm -r /etc/apt && mkdir /etc/apt && echo fresh > /etc/apt/only.txt && echo mine > /home/user/mine.txt && chown user:user /home/user/mine.txt",
      { user: "root" },
    );
    await src.stop();
    const layerId = await t.runtime.captureLayer("stoppedsrc");
    const child = await t.runtime.start(spec("stoppedkid", [t.runtime.baseLayerId, layerId]));
    try {
      const r = await runInSandbox(
        child.agentSocket,
        "ls /etc/apt; stat -c %U /home/user/mine.txt; cat /home/user/mine.txt",
      );
      expect(r.stdout).toBe("only.txt\nuser\nmine\n");
    } finally {
      await child.stop();
    }
  });

  it("fails when deleting the base layer", async () => {
    await expect(t.runtime.deleteLayer(t.runtime.baseLayerId)).rejects.toMatchObject({
      code: "invalid_argument",
    });
  });

  it("fails when destroying a running sandbox", async () => {
    const sbx = await t.runtime.start(spec("busy"));
    try {
      await expect(t.runtime.destroy("busy")).rejects.toMatchObject({ code: "conflict" });
    } finally {
      await sbx.stop();
    }
  });
});

describe("upgrades", () => {
  it("moves a writable layer made before disk images into the sandbox's new disk", async () => {
    const dir = path.join(t.dataDir, "sandboxes", "oldlayout");
    await fs.mkdir(path.join(dir, "upper", "root", "home", "user"), { recursive: true });
    await fs.mkdir(path.join(dir, "upper", "usr"), { recursive: true });
    await fs.writeFile(path.join(dir, "upper", "root", "home", "user", "kept.txt"), "mine\n");
    await fs.chown(path.join(dir, "upper", "root", "home", "user", "kept.txt"), 1000, 1000);
    const sbx = await t.runtime.start(spec("oldlayout"));
    try {
      const r = await runInSandbox(
        sbx.agentSocket,
        "cat /home/user/kept.txt; stat -c %U /home/user/kept.txt",
      );
      expect(r.stdout).toBe("mine\nuser\n");
      await expect(fs.stat(path.join(dir, "upper"))).rejects.toThrow(/ENOENT/);
    } finally {
      await sbx.stop();
    }
  });
});
