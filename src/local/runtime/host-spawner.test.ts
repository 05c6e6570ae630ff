import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { SandboxIacError } from "../../errors";
import { eventually } from "../../../test/support/eventually";
import { childrenOf, running, statOf } from "../../../test/support/procs";
import { execHost } from "./exec";
import type { HostLaunch } from "./host-launch";
import { hostSpawnerPid, spawnHost, type HostChild } from "./host-spawner";

jest.setTimeout(60_000);

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "host-spawner-"));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("host commands through the host spawner", () => {
  it("feeds stdin, returns stdout and runs the command as a child of the spawner, not of the service", async () => {
    const { stdout } = await execHost("test.exec", "sh", ["-c", 'cat; echo " $PPID"'], {
      input: "piped",
    });
    const spawner = hostSpawnerPid("test.exec");
    expect(stdout).toBe(`piped ${spawner}\n`);
    expect(spawner).not.toBe(process.pid);
    expect(statOf(spawner)?.ppid).toBe(process.pid);
  });

  it("names a command that fails, with its stderr and the operation", async () => {
    const err = await execHost("test.fails", "sh", ["-c", "echo boom >&2; exit 3"]).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SandboxIacError);
    expect(err).toMatchObject({ code: "internal", operation: "test.fails" });
    expect((err as Error).message).toContain(
      "host command sh -c echo boom >&2; exit 3 failed: boom",
    );
  });

  it("says how a command without stderr ended, and shows the input when asked", async () => {
    const err = await execHost("test.fails", "sh", ["-c", "exit 4"], {
      input: "the rules",
      showInput: true,
    }).catch((e: unknown) => e);
    expect((err as Error).message).toContain("failed: exit code 4\ninput:\nthe rules");
  });

  it("reports a program that does not exist as one that could not start", async () => {
    const err = await execHost("test.missing", "no-such-program-sbx", ["x"]).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: "internal", operation: "test.missing" });
    expect((err as Error).message).toContain(
      "host command no-such-program-sbx x failed: it could not start (ENOENT)",
    );
  });

  it("gives a command a listening socket and a file as descriptors 3 and 4", async () => {
    const socket = path.join(dir, "s.sock");
    const file = path.join(dir, "greeting");
    fs.writeFileSync(file, "hello from fd 4");
    const program =
      "const fs = require('fs'); const text = fs.readFileSync(4, 'utf8');" +
      "require('net').createServer((s) => s.end(text)).listen({ fd: 3 })";
    const child = await spawnHost("test.fds", process.execPath, ["-e", program], {
      fds: [{ listen: socket }, { read: file }],
    });
    try {
      expect(fs.statSync(socket).mode & 0o777).toBe(0o600);
      const answer = await new Promise<string>((resolve, reject) => {
        let text = "";
        net
          .connect(socket)
          .on("data", (d) => (text += String(d)))
          .on("end", () => resolve(text))
          .on("error", reject);
      });
      expect(answer).toBe("hello from fd 4");
    } finally {
      child.kill();
    }
    expect(await child.exited).toEqual({ code: null, signal: "SIGKILL" });
  });

  it("when the spawner is killed, its commands die with it and the next command starts a new spawner", async () => {
    const child = await spawnHost("test.death", "sleep", ["1000"]);
    child.stdout.resume();
    child.stderr.resume();
    const first = hostSpawnerPid("test.death");
    expect(running(child.pid)).toBe(true);
    process.kill(first, "SIGKILL");
    // Reported as killed, and killed for real (the parent-death signal), not left under init.
    expect(await child.exited).toEqual({ code: null, signal: "SIGKILL" });
    await eventually(() => !running(child.pid), { intervalMs: 20 }).catch(() => undefined);
    expect(running(child.pid)).toBe(false);
    const { stdout } = await execHost("test.death", "echo", ["again"]);
    expect(stdout).toBe("again\n");
    expect(hostSpawnerPid("test.death")).not.toBe(first);
  });

  it("starts a command asked for just after the spawner died on a new spawner", async () => {
    const first = hostSpawnerPid("test.death");
    // WHEN the spawner dies and a command is asked for before the service saw it go
    process.kill(first, "SIGKILL");
    const { stdout } = await execHost("test.death", "sh", ["-c", "echo $PPID"]);
    // THEN the command ran, under a new spawner
    expect(stdout).not.toBe(`${first}\n`);
    expect(stdout).toBe(`${hostSpawnerPid("test.death")}\n`);
  });
});

describe("a sandbox's launch through the host spawner", () => {
  /** A launch of sandbox `sbx-launch` into `holderPid`'s namespaces, as host uid 65534. */
  function launchOf(holderPid: number, cgroupProcsFiles: string[]): HostLaunch {
    return {
      sandboxID: "sbx-launch",
      holderPid,
      cgroupProcsFiles,
      oomScoreAdj: 0,
      nofile: 1234,
      usernsFd: 5,
      idBase: 65534,
    };
  }

  /** Its whole stdout once it exited. */
  async function outputOf(child: HostChild): Promise<string> {
    let text = "";
    child.stdout.on("data", (d: Buffer) => (text += String(d)));
    child.stderr.resume();
    await child.exited;
    await eventually(() => child.stdout.readableEnded || child.stdout.destroyed, { intervalMs: 5 });
    return text;
  }

  it("joins the cgroup, the holder's mount and network namespaces, its limits and host uid before the exec, with the holder's user namespace as descriptor 5", async () => {
    // GIVEN a holder with namespaces of its own, as holder.ts makes it (but as root)
    const holder = await spawnHost("test.launch", "unshare", [
      "--user",
      "--mount",
      "--net",
      "--",
      "sleep",
      "1000",
    ]);
    holder.stdout.resume();
    holder.stderr.resume();
    const ns = (pid: number | "self", name: string) => fs.readlinkSync(`/proc/${pid}/ns/${name}`);
    // unshare(2) runs after its exec: until then the holder shares the service's namespaces.
    await eventually(() => ns(holder.pid, "net") !== ns("self", "net"), { intervalMs: 5 });
    const cgroup = path.join(dir, "cgroup.procs");
    fs.writeFileSync(cgroup, "");
    try {
      // WHEN a command is launched into it
      const script =
        "id -u; id -g; id -G; ulimit -n; ulimit -Hn; readlink /proc/self/fd/5 /proc/self/ns/mnt /proc/self/ns/net; echo $$ $PPID";
      const child = await spawnHost("test.launch", "sh", ["-c", script], {
        launch: launchOf(holder.pid, [cgroup]),
      });
      // THEN it ran as the sandbox's host uid and gid, without supplementary groups, in the holder's namespaces
      expect((await outputOf(child)).split("\n")).toEqual([
        "65534",
        "65534",
        "65534",
        "1234",
        "1234",
        ns(holder.pid, "user"),
        ns(holder.pid, "mnt"),
        ns(holder.pid, "net"),
        // as the first process of a pid namespace of its own (its parent, the spawner, is outside it)
        "1 0",
        "",
      ]);
      // AND it joined the cgroup first, as the process that exec'd (its pid in its own namespace,
      // the one cgroup.procs reads a pid in)
      expect(fs.readFileSync(cgroup, "utf8")).toBe("1\n");
    } finally {
      holder.kill();
    }
  });

  it("dies with the spawner after its uid change (the kernel clears the parent-death signal on it)", async () => {
    const holder = await spawnHost("test.launch", "sleep", ["1000"]);
    holder.stdout.resume();
    holder.stderr.resume();
    const child = await spawnHost("test.launch", "sleep", ["1000"], {
      launch: launchOf(holder.pid, []),
    });
    child.stdout.resume();
    child.stderr.resume();
    expect(running(child.pid)).toBe(true);
    process.kill(hostSpawnerPid("test.launch"), "SIGKILL");
    await eventually(() => !running(child.pid), { intervalMs: 20 }).catch(() => undefined);
    const survived = running(child.pid);
    // A survivor under init would hold its pipes open and keep jest from exiting.
    if (survived) process.kill(child.pid, "SIGKILL");
    expect(survived).toBe(false);
  });

  it("kills the launch's children with the spawner too, even one without a parent-death signal (bwrap's sandbox-side child during its setup)", async () => {
    const holder = await spawnHost("test.launch", "sleep", ["1000"]);
    holder.stdout.resume();
    holder.stderr.resume();
    // GIVEN a launch whose child takes no parent-death signal, as bwrap's does until its setup ends
    const child = await spawnHost("test.launch", "sh", ["-c", "sleep 1000 & wait"], {
      launch: launchOf(holder.pid, []),
    });
    child.stdout.resume();
    child.stderr.resume();
    const [grandchild] = await eventually(() => {
      const kids = childrenOf(child.pid);
      return kids.length > 0 ? kids : false;
    });
    // WHEN the spawner dies (with the service)
    process.kill(hostSpawnerPid("test.launch"), "SIGKILL");
    // THEN the child's child dies too: it would otherwise run on under init
    await eventually(() => !running(grandchild), { intervalMs: 20 }).catch(() => undefined);
    const survived = running(grandchild);
    if (survived) process.kill(grandchild, "SIGKILL");
    expect(survived).toBe(false);
    holder.kill();
  });

  it("serves other commands while a launch's child is still before its exec", async () => {
    const holder = await spawnHost("test.launch", "sleep", ["1000"]);
    holder.stdout.resume();
    holder.stderr.resume();
    // GIVEN a launch whose cgroup join blocks: a FIFO nobody reads yet
    const fifo = path.join(dir, "blocking.procs");
    await execHost("test.launch", "mkfifo", [fifo]);
    try {
      const launched = spawnHost("test.launch", "true", [], {
        launch: launchOf(holder.pid, [fifo]),
      });
      // WHEN another command is started meanwhile THEN it runs
      expect((await execHost("test.launch", "echo", ["meanwhile"])).stdout).toBe("meanwhile\n");
      // AND the launch goes on once its join can
      const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      try {
        const child = await launched;
        expect(fs.readFileSync(reader, "utf8")).toBe("1\n");
        expect(await outputOf(child)).toBe("");
      } finally {
        fs.closeSync(reader);
      }
    } finally {
      holder.kill();
    }
  });

  it("fails naming the sandbox and the step when its holder is gone, and runs nothing", async () => {
    const gone = await spawnHost("test.launch", "true", []);
    gone.stdout.resume();
    gone.stderr.resume();
    await gone.exited;
    const marker = path.join(dir, "ran");
    for (const holderPid of [gone.pid, process.pid]) {
      const err = await spawnHost("test.launch", "touch", [marker], {
        launch: launchOf(holderPid, []),
      }).catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: "internal",
        operation: "test.launch",
        resourceId: "sbx-launch",
        message: `test.launch (sbx-launch) failed: the sandbox's launch failed at finding its namespace holder (pid ${holderPid}) among the host spawner's running children (it exited): ESRCH`,
      });
    }
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("fails naming the cgroup it could not join, from the child, and runs nothing", async () => {
    const holder = await spawnHost("test.launch", "sleep", ["1000"]);
    holder.stdout.resume();
    holder.stderr.resume();
    const marker = path.join(dir, "ran");
    const missing = path.join(dir, "no-such-cgroup", "cgroup.procs");
    try {
      const err = await spawnHost("test.launch", "touch", [marker], {
        launch: launchOf(holder.pid, [path.join(dir, "cgroup.procs"), missing]),
      }).catch((e: unknown) => e);
      expect((err as Error).message).toBe(
        `test.launch (sbx-launch) failed: the sandbox's launch failed at joining its cgroup (writing its pid to ${missing}): ENOENT`,
      );
      expect(fs.existsSync(marker)).toBe(false);
    } finally {
      holder.kill();
    }
  });
});
