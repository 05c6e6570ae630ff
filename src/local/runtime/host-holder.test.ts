import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { eventually } from "../../../test/support/eventually";
import { running } from "../../../test/support/procs";
import { execHost } from "./exec";
import { hostSpawnerPid, spawnHost, type HostChild } from "./host-spawner";

jest.setTimeout(60_000);

/** The host uid the holders here drop to (nobody): root inside once mapped, never host root. */
const ID_BASE = 65534;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "host-holder-"));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A holder of sandbox `sbx-holder` as host uid {@link ID_BASE}, started as holder.ts starts one. */
async function startHolder(): Promise<HostChild> {
  const holder = await spawnHost("test.holder", "sleep", ["1000"], {
    holder: { sandboxID: "sbx-holder", idBase: ID_BASE },
  });
  holder.stdout.resume();
  holder.stderr.resume();
  return holder;
}

/** The namespace `kind` of process `pid` (or "self"), e.g. `net:[4026531840]`. */
function ns(pid: number | "self", kind: string): string {
  return fs.readlinkSync(`/proc/${pid}/ns/${kind}`);
}

/** The fields of `/proc/<pid>/status` line `name` (Uid, Gid, Groups). */
function status(pid: number, name: string): string[] {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${name}:`));
  return (line ?? "")
    .slice(name.length + 1)
    .trim()
    .split(/\s+/)
    .filter(Boolean);
}

/** The mount points process `pid` sees. */
function mountPoints(pid: number): string[] {
  return fs
    .readFileSync(`/proc/${pid}/mountinfo`, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split(" ")[4] ?? "");
}

describe("a sandbox's namespace holder through the host spawner", () => {
  it("runs as the sandbox's host uid and gid without groups, in user, mount and network namespaces of its own", async () => {
    const holder = await startHolder();
    try {
      // Reported started after its exec: its namespaces exist already, no waiting for them.
      for (const kind of ["user", "mnt", "net"])
        expect(ns(holder.pid, kind)).not.toBe(ns("self", kind));
      expect(status(holder.pid, "Uid")).toEqual(Array(4).fill(String(ID_BASE)));
      expect(status(holder.pid, "Gid")).toEqual(Array(4).fill(String(ID_BASE)));
      expect(status(holder.pid, "Groups")).toEqual([]);
      expect(fs.readFileSync(`/proc/${holder.pid}/cmdline`, "utf8")).toBe("sleep\u00001000\u0000");
    } finally {
      holder.kill();
    }
  });

  it("sees the host's unmount of a mount it holds a copy of (its mounts are slaves of the host's)", async () => {
    // GIVEN a shared mount with a mount under it, as the service's volume mounts are
    const parent = path.join(dir, "shared");
    const vol = path.join(parent, "vol");
    fs.mkdirSync(parent);
    await execHost("test.holder", "mount", ["-t", "tmpfs", "holder-test", parent]);
    try {
      await execHost("test.holder", "mount", ["--make-shared", parent]);
      fs.mkdirSync(vol);
      await execHost("test.holder", "mount", ["-t", "tmpfs", "holder-test", vol]);
      const holder = await startHolder();
      try {
        expect(mountPoints(holder.pid)).toContain(vol);
        // WHEN the host unmounts it
        await execHost("test.holder", "umount", [vol]);
        // THEN the holder's copy goes too (a private copy would keep it, and a loop device with it)
        await eventually(() => !mountPoints(holder.pid).includes(vol), { intervalMs: 10 });
      } finally {
        holder.kill();
      }
    } finally {
      await execHost("test.holder", "umount", ["-R", parent]).catch(() => undefined);
    }
  });

  it("dies with the spawner after its uid change (the kernel clears the parent-death signal on it)", async () => {
    const holder = await startHolder();
    expect(running(holder.pid)).toBe(true);
    process.kill(hostSpawnerPid("test.holder"), "SIGKILL");
    await eventually(() => !running(holder.pid), { intervalMs: 20 }).catch(() => undefined);
    const survived = running(holder.pid);
    // A survivor under init would hold its pipes open and keep jest from exiting.
    if (survived) process.kill(holder.pid, "SIGKILL");
    expect(survived).toBe(false);
  });

  it("refuses host uid 0, naming the sandbox, and runs nothing", async () => {
    const marker = path.join(dir, "ran");
    const err = await spawnHost("test.holder", "touch", [marker], {
      holder: { sandboxID: "sbx-holder", idBase: 0 },
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: "internal",
      operation: "test.holder",
      resourceId: "sbx-holder",
      message:
        "test.holder (sbx-holder) failed: the sandbox's namespace holder failed at starting it: EINVAL",
    });
    expect(fs.existsSync(marker)).toBe(false);
  });
});
