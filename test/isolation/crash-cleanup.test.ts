import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { SLOTS_DIR } from "../../src/local/runtime/constants";
import { pidAlive } from "../../src/local/runtime/pid-alive";
import { claimSlot, releaseSlot } from "../../src/local/runtime/slots";
import { call, createSandbox, runThroughProxy } from "../local/support";
import { eventually } from "../support/eventually";
import { onCgroupV2, sandboxGroupDir } from "../support/sandbox-cgroups";
import {
  startService,
  startServiceProcess,
  type ServiceProcess,
  type TestService,
} from "../support/service";

jest.setTimeout(180_000);

let svc: TestService | undefined;
let served: ServiceProcess | undefined;

afterAll(async () => {
  await svc?.close();
  await served?.close();
});

const onCgroupV1 = !onCgroupV2;

/** The controllers a sandbox cgroup is made in on cgroup v1, in create()'s order. */
const V1_CONTROLLERS = ["cpu", "cpuacct", "memory", "pids", "freezer"];

/** The directories of the sandbox cgroup `name` in every v1 controller. */
function v1DirsOf(name: string): string[] {
  return V1_CONTROLLERS.map((c) => path.join(sandboxGroupDir(c), name));
}

/** The sandbox cgroups of `dataDir`'s services, in every v1 controller. */
function v1DirsOfDataDir(dataDir: string): string[] {
  const prefix = `${createHash("sha256").update(path.resolve(dataDir)).digest("hex").slice(0, 10)}-`;
  return V1_CONTROLLERS.flatMap((c) =>
    fs
      .readdirSync(sandboxGroupDir(c), { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name.startsWith(prefix))
      .map((e) => path.join(sandboxGroupDir(c), e.name)),
  );
}

/** Whether the cgroup `dir` holds no process (one removed meanwhile, by another service's start, holds none). */
function emptyCgroup(dir: string): boolean {
  try {
    return fs.readFileSync(path.join(dir, "cgroup.procs"), "utf8").trim() === "";
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw err;
  }
}

/** The owner line of slot claim `n`, or undefined when it has none (not written yet, or released meanwhile). */
function claimOwner(n: string): string | undefined {
  try {
    return fs.readFileSync(path.join(SLOTS_DIR, n, "owner"), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

function nftTables(): string {
  return execFileSync("nft", ["list", "tables"], { encoding: "utf8" });
}

/** Slot claims (index -> owner pid) on this host. */
function claimsOf(pid: number): string[] {
  // Other suites' services claim and release slots meanwhile: a claim without an owner is not this pid's.
  return fs.readdirSync(SLOTS_DIR).filter((n) => {
    if (!/^\d+$/.test(n)) return false;
    const owner = claimOwner(n);
    return owner !== undefined && Number(owner.split(" ")[0]) === pid;
  });
}

describe("after kill -9 of the service", () => {
  it("prints the isolation line at start, leaves no sandbox process, loop device or veth behind, and the next start removes its nft table and claims", async () => {
    const remote = await startServiceProcess();
    served = remote;
    const { dataDir } = remote;
    const isolationLines = remote
      .stderr()
      .split("\n")
      .filter((l) => / isolation: /.test(l));
    expect(isolationLines).toHaveLength(1);
    expect(isolationLines[0]).toMatch(
      /user namespace per sandbox.*seccomp.*own network namespace.*disk quota/,
    );
    const { sandboxID } = await createSandbox(remote);
    await runThroughProxy(remote, sandboxID, "echo kept > /home/user/k.txt");
    const pid = remote.pid;
    expect(nftTables()).toContain(`sandbox_iac_${pid}_`);
    const ifindex = (v: string) => {
      try {
        return fs.readFileSync(`/sys/class/net/${v}/ifindex`, "utf8").trim();
      } catch {
        // A veth the kernel is deleting reads EINVAL: gone too.
        return undefined;
      }
    };
    expect(claimsOf(pid).length).toBeGreaterThan(0);
    const diskImage = path.join(dataDir, "sandboxes", sandboxID, "disk.img");
    // The service's host spawner starts them: its children, not the service's.
    const table = execFileSync("ps", ["-e", "-o", "pid=,ppid=,args="], { encoding: "utf8" })
      .split("\n")
      .map((l) => l.trim().split(/\s+/))
      .map(([p, pp, ...args]) => ({ pid: Number(p), ppid: Number(pp), args: args.join(" ") }));
    const spawners = table.filter((p) => p.ppid === pid).map((p) => p.pid);
    const holders = table
      .filter((p) => spawners.includes(p.ppid) && p.args.includes("sleep infinity"))
      .map((p) => p.pid);
    expect(holders.length).toBeGreaterThan(0);
    // The sandboxes' veths, by the host end's ifindex as each holder's namespace sees its eth0
    // (`eth0@if<N>`). Not by a claimed slot's name: a veth another service left under that name (its
    // claim dead, its namespace not yet) can still be there while this service starts a sandbox
    // into the slot, and this service's kill does not end that namespace.
    const hostEnds = holders.flatMap((h) => {
      try {
        const link = execFileSync(
          "nsenter",
          [`--net=/proc/${h}/ns/net`, "ip", "-o", "link", "show", "dev", "eth0"],
          { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
        );
        return [/eth0@if(\d+)/.exec(link)?.[1]].filter((i) => i !== undefined);
      } catch {
        // A warm-pool sandbox still starting: no eth0 yet.
        return [];
      }
    });
    // At least the created sandbox's.
    expect(hostEnds.length).toBeGreaterThan(0);
    const hostIndexes = () => new Set(fs.readdirSync("/sys/class/net").map(ifindex));

    await remote.kill9();

    // The holders die with the service (parent-death signal), and with them mounts, loop devices and veths.
    const alive = () => holders.filter((h) => fs.existsSync(`/proc/${h}`));
    // Deadlines are generous: on a busy 2-core machine the kernel's clean-up work queues lag.
    await eventually(() => alive().length === 0, { timeoutMs: 30_000, intervalMs: 50 }).catch(
      () => undefined,
    );
    expect(alive()).toEqual([]);
    const loops = () => execFileSync("losetup", ["-a"], { encoding: "utf8" });
    await eventually(() => !loops().includes(diskImage), {
      timeoutMs: 30_000,
      intervalMs: 50,
    }).catch(() => undefined);
    expect(loops()).not.toContain(diskImage);
    // The kernel deletes a dead namespace's veths from a work queue, a moment later.
    const vethsLeft = () => {
      const present = hostIndexes();
      return hostEnds.filter((i) => present.has(i));
    };
    await eventually(() => vethsLeft().length === 0, { timeoutMs: 30_000, intervalMs: 50 }).catch(
      () => undefined,
    );
    expect(vethsLeft()).toEqual([]);

    svc = await startService({ dataDir });
    expect(nftTables()).not.toContain(`sandbox_iac_${pid}_`);
    expect(claimsOf(pid)).toEqual([]);
    expect((await call(svc, "GET", `/sandboxes/${sandboxID}`)).body).toMatchObject({
      state: "paused",
    });
    expect(
      (await call(svc, "POST", `/sandboxes/${sandboxID}/resume`, { timeout: 60 })).status,
    ).toBe(201);
    expect((await runThroughProxy(svc, sandboxID, "cat /home/user/k.txt")).stdout).toBe("kept\n");
  });

  (onCgroupV1 ? it : it.skip)(
    "a start on another data dir removes the empty cgroups of a killed service, and keeps an empty one a live process has claimed and one with a process",
    async () => {
      // GIVEN the cgroups a service killed with a sandbox running leaves, once its processes died
      const killed = await startServiceProcess();
      let started: TestService | undefined;
      const sleeper = spawn("sleep", ["600"], { stdio: "ignore" });
      const claimedName = "eeeeeeeeee-ihouseclaimed000000000";
      const busyName = "ffffffffff-ihousebusy00000000000";
      const claim = await claimSlot("ihouseclaimed000000000");
      try {
        await createSandbox(killed);
        expect(v1DirsOfDataDir(killed.dataDir).length).toBeGreaterThan(0);
        await killed.kill9();
        await eventually(() => v1DirsOfDataDir(killed.dataDir).every(emptyCgroup), {
          timeoutMs: 30_000,
        });
        // AND an empty cgroup of a sandbox a live process holds a slot for (made, its sandbox
        // not in yet), and one nobody claims that still holds a process
        for (const dir of v1DirsOf(claimedName)) fs.mkdirSync(dir);
        for (const dir of v1DirsOf(busyName)) {
          fs.mkdirSync(dir);
          fs.writeFileSync(path.join(dir, "cgroup.procs"), String(sleeper.pid));
        }
        // WHEN a service starts on another data dir
        started = await startService();
        // THEN the killed service's cgroups are gone from every controller
        expect(v1DirsOfDataDir(killed.dataDir)).toEqual([]);
        // AND the claimed one and the busy one stay, the busy one's process alive
        expect(v1DirsOf(claimedName).filter((dir) => !fs.existsSync(dir))).toEqual([]);
        expect(v1DirsOf(busyName).filter((dir) => !fs.existsSync(dir))).toEqual([]);
        expect(pidAlive(sleeper.pid ?? 0)).toBe(true);
      } finally {
        await started?.close();
        await killed.close();
        sleeper.kill("SIGKILL");
        await eventually(() =>
          v1DirsOf(busyName).every((d) => !fs.existsSync(d) || emptyCgroup(d)),
        );
        for (const dir of [...v1DirsOf(claimedName), ...v1DirsOf(busyName)]) {
          if (fs.existsSync(dir)) fs.rmdirSync(dir);
        }
        await releaseSlot(claim);
      }
    },
  );

  (onCgroupV1 ? it : it.skip)(
    "the next start removes the cgroup of a sandbox whose creation the kill cut off (made in some controllers only)",
    async () => {
      // GIVEN a data dir whose killed service had made a sandbox cgroup in cpu, cpuacct and
      // memory only: create() makes cpu, cpuacct, memory, pids and freezer in this order.
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "sandbox-iac-cg-"));
      const prefix = createHash("sha256").update(path.resolve(dataDir)).digest("hex").slice(0, 10);
      const halfMade = ["cpu", "cpuacct", "memory"].map((c) =>
        path.join(sandboxGroupDir(c), `${prefix}-ihalfmade00000000000`),
      );
      for (const dir of halfMade) fs.mkdirSync(dir, { recursive: true });
      let started: TestService | undefined;
      try {
        // WHEN a service starts on it
        started = await startService({ dataDir });
        // THEN that cgroup is gone from every controller
        expect(halfMade.filter((dir) => fs.existsSync(dir))).toEqual([]);
      } finally {
        await started?.close();
        for (const dir of halfMade) if (fs.existsSync(dir)) fs.rmdirSync(dir);
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );
});
