import { execFile } from "node:child_process";
import * as fs from "node:fs/promises";
import * as net from "node:net";
import { promisify } from "node:util";
import { eventually } from "../support/eventually";
import { runInSandbox, sandboxSpec, startSandboxPair, type TestRuntime } from "../support/runtime";
import { sandboxPaths } from "../../src/local/runtime/paths";
import type { RuntimeSandbox } from "../../src/local/runtime/types";

jest.setTimeout(120_000);

const execFileP = promisify(execFile);

let t: TestRuntime;
let a: RuntimeSandbox;
let b: RuntimeSandbox;

beforeAll(async () => {
  ({ t, a, b } = await startSandboxPair("atka", "atkb"));
});
afterAll(async () => {
  await t?.dispose();
});

const USERS = ["user", "root"] as const;
/** The Node binary every sandbox has. */
const NODE = "/.sandbox-iac/node";
/** Runs `code` in the sandbox's Node; `code` prints its own findings. */
const node = (code: string) => `${NODE} -e '${code}'`;
/** Calls a raw syscall through Python's ctypes and prints `ret errno`. */
const syscall = (nr: number, ...args: number[]) =>
  `python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); r = l.syscall(${[nr, ...args].join(", ")}); print(r, ctypes.get_errno())'`;

async function neighbourWorks(): Promise<void> {
  expect((await runInSandbox(b.agentSocket, "echo fine")).stdout).toBe("fine\n");
}

/**
 * Waits until a hog in the background says it holds what it took (its
 * marker file, seen by `probe`); a hog that ended before that fails the wait
 * at once with what it printed, instead of after the deadline with nothing.
 */
async function untilHeld(
  hogging: Promise<{ exitCode: number; stdout: string; stderr: string }>,
  probe: () => Promise<{ stdout: string }>,
): Promise<void> {
  let ended: string | undefined;
  hogging.then(
    (r) => (ended = `exited ${r.exitCode}: ${r.stdout}${r.stderr}`),
    (err: unknown) => (ended = `failed: ${String(err)}`),
  );
  await eventually(
    async () => {
      if (ended !== undefined) throw new Error(`the hog ended before holding: ${ended}`);
      return (await probe()).stdout === "held\n";
    },
    { timeoutMs: 30_000 },
  );
}

describe.each(USERS)("as %s inside", (user) => {
  const run = (sbx: RuntimeSandbox, cmd: string) => runInSandbox(sbx.agentSocket, cmd, { user });

  it("cannot open a /proc/sys file for writing (core_pattern stays the host's)", async () => {
    const r = await run(
      a,
      node(
        'try { require("fs").openSync("/proc/sys/kernel/core_pattern", "r+"); console.log("opened") } catch (e) { console.log(e.code) }',
      ),
    );
    expect(["EACCES", "EROFS"]).toContain(r.stdout.trim());
    await neighbourWorks();
  });

  it("sees no host keyring and cannot call keyctl", async () => {
    expect((await run(a, "cat /proc/keys | wc -c")).stdout.trim()).toBe("0");
    // keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0): EPERM from seccomp.
    expect((await run(a, syscall(250, 0, -4, 0))).stdout.trim()).toBe("-1 1");
  });

  it("cannot create a user namespace", async () => {
    const r = await run(a, "unshare -U true; echo status $?");
    expect(r.stderr).toMatch(/Operation not permitted/);
    expect(r.stdout).toBe("status 1\n");
  });

  it("cannot use io_uring, bpf, perf_event_open or userfaultfd", async () => {
    // io_uring_setup(1, NULL), bpf(0, NULL, 0), perf_event_open(NULL, 0, -1, -1, 0), userfaultfd(0)
    for (const [nr, ...args] of [
      [425, 1, 0],
      [321, 0, 0, 0],
      [298, 0, 0, -1, -1, 0],
      [323, 0],
    ]) {
      expect((await run(a, syscall(nr, ...args))).stdout.trim()).toBe("-1 1");
    }
  });

  it("does not reach a host-only listener on 127.0.0.1 or the host's address on its link", async () => {
    const server = net.createServer((s) => s.end("host secret\n"));
    await new Promise<void>((r) => server.listen(0, "0.0.0.0", r));
    const port = (server.address() as net.AddressInfo).port;
    const hostSide = a.address.replace(/\.(\d+)$/, (_, n: string) => `.${Number(n) - 1}`);
    try {
      for (const host of ["127.0.0.1", hostSide]) {
        const r = await run(
          a,
          node(
            `const s = require("net").connect(${port}, "${host}"); s.setTimeout(1500, () => { console.log("timeout"); process.exit() }); s.on("data", (d) => { console.log("read " + d); process.exit() }); s.on("error", (e) => { console.log(e.code); process.exit() })`,
          ),
        );
        expect(["ECONNREFUSED", "timeout"]).toContain(r.stdout.trim());
      }
    } finally {
      server.close();
    }
  });

  it("sees only its own interfaces and sockets, not the host's", async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const r = await run(a, "cat /proc/net/dev /proc/net/tcp");
      const ifaces = [...r.stdout.matchAll(/^\s*(\S+):\s+\d/gm)].map((m) => m[1]).sort();
      expect(ifaces).toEqual(["eth0", "lo"]);
      expect(r.stdout.toUpperCase()).not.toContain(
        `:${port.toString(16).toUpperCase().padStart(4, "0")} `,
      );
    } finally {
      server.close();
    }
  });

  it("binds its ports in its own namespace: the host's 127.0.0.1 does not get them", async () => {
    await run(
      a,
      `nohup ${NODE} -e 'require("net").createServer((s) => s.end("in")).listen(18081)' >/dev/null 2>&1 &`,
    );
    const r = await new Promise<string>((resolve) => {
      const s = net.connect(18081, "127.0.0.1");
      s.on("connect", () => resolve("connected"));
      s.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
    });
    expect(r).toBe("ECONNREFUSED");
  });

  it("does not reach another sandbox's ports or abstract sockets", async () => {
    await runInSandbox(
      b.agentSocket,
      `nohup ${NODE} -e 'const n = require("net"); n.createServer((s) => s.end("b")).listen(18082); n.createServer((s) => s.end("b")).listen("\\0atk-secret")' >/dev/null 2>&1 &`,
    );
    // The neighbour's own loopback answers: the listeners are up.
    const own = await runInSandbox(
      b.agentSocket,
      `sleep 0.3; ${node('require("net").connect(18082, "127.0.0.1").on("data", (d) => console.log(String(d)))')}`,
    );
    expect(own.stdout.trim()).toBe("b");
    for (const target of [`18082, "${b.address}"`, '"\\0atk-secret"']) {
      const r = await run(
        a,
        node(
          `const s = require("net").connect(${target}); s.setTimeout(1500, () => { console.log("timeout"); process.exit() }); s.on("data", (d) => { console.log("read " + d); process.exit() }); s.on("error", (e) => { console.log(e.code); process.exit() })`,
        ),
      );
      expect(["ECONNREFUSED", "ENOENT", "timeout"]).toContain(r.stdout.trim());
    }
  });

  it("finds no agent socket to replace, holds no descriptor of it, and a planted symlink changes nothing", async () => {
    const r = await run(
      a,
      // Descriptors 0-2 are the command's own stdio (socket pairs); any other socket would be the agent's.
      "ls -A /run/sandbox-iac 2>&1; for f in /proc/self/fd/*; do case $f in */0|*/1|*/2) ;; *) readlink $f ;; esac; done | grep -c socket",
    );
    expect(r.stdout).not.toContain("agent.sock");
    expect(r.stdout.trim().split("\n").pop()).toBe("0");
    await run(a, "mkdir -p /run/sandbox-iac; ln -sf /proc/1/root /run/sandbox-iac/agent.sock");
    expect((await fs.lstat(a.agentSocket)).isSocket()).toBe(true);
    expect((await run(a, "echo still mine")).stdout).toBe("still mine\n");
  });

  it("hits its own RLIMIT_NOFILE (4096) and inotify limits, and the neighbour still opens files and watches", async () => {
    expect((await run(a, "ulimit -n; ulimit -Hn")).stdout).toBe("4096\n4096\n");
    const fds = await run(
      a,
      `python3 -c 'import os
fds = []
try:
    while True: fds.append(os.open("/dev/null", os.O_RDONLY))
except OSError as e: print(len(fds), e.errno)'`,
    );
    const [opened, fdErrno] = fds.stdout.trim().split(" ").map(Number);
    expect(opened).toBeGreaterThan(4000);
    expect(opened).toBeLessThan(4096);
    expect(fdErrno).toBe(24); // EMFILE
    expect((await run(b, "cat /etc/hostname >/dev/null && echo opened")).stdout).toBe("opened\n");
    // Exhaust this sandbox's inotify instances and hold them until released, then the neighbour makes one.
    const hogged = `/tmp/inotify-hogged-${user}`;
    const release = `/tmp/inotify-release-${user}`;
    await run(a, `rm -f ${hogged} ${release}`);
    const hog = `python3 -c 'import ctypes, os, time; l = ctypes.CDLL(None, use_errno=True); fds = []
while True:
    fd = l.inotify_init()
    if fd < 0: break
    fds.append(fd)
err = ctypes.get_errno()
open("${hogged}", "w").close()
deadline = time.time() + 60
while not os.path.exists("${release}") and time.time() < deadline: time.sleep(0.05)
print(len(fds), err, flush=True)'`;
    const hogging = run(a, hog);
    await untilHeld(hogging, () => run(a, `test -e ${hogged} && echo held`));
    const other = await runInSandbox(
      b.agentSocket,
      `python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); print(l.inotify_init() >= 0)'`,
      { user },
    );
    await run(a, `touch ${release}`);
    expect(other.stdout.trim()).toBe("True");
    const [count, errno] = (await hogging).stdout.trim().split(" ").map(Number);
    expect(count).toBeGreaterThan(0);
    expect(errno).toBe(24); // EMFILE: the sandbox's own limit
  });
  it("opens PTYs only up to its own devpts limit (ENOSPC) while the neighbour still opens one", async () => {
    const mountinfo = await run(a, "grep ' /dev/pts ' /proc/self/mountinfo");
    const max = Number(/[,\s]max=(\d+)/.exec(mountinfo.stdout)?.[1]);
    expect(max).toBeGreaterThanOrEqual(16);
    expect(max).toBeLessThanOrEqual(256);
    // Hold every PTY the sandbox gets until released, then the neighbour opens one.
    const hogged = `/tmp/pty-hogged-${user}`;
    const release = `/tmp/pty-release-${user}`;
    await run(a, `rm -f ${hogged} ${release}`);
    const hog = `python3 -c 'import os, time
fds = []
try:
    while True: fds.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
except OSError as e: err = e.errno
open("${hogged}", "w").close()
deadline = time.time() + 60
while not os.path.exists("${release}") and time.time() < deadline: time.sleep(0.05)
print(len(fds), err, flush=True)'`;
    const hogging = run(a, hog);
    await untilHeld(hogging, () => run(a, `test -e ${hogged} && echo held`));
    const other = await runInSandbox(
      b.agentSocket,
      `python3 -c 'import os; m, s = os.openpty(); print(os.ttyname(s).startswith("/dev/pts/"))'`,
      { user },
    );
    await run(a, `touch ${release}`);
    expect(other.stdout.trim()).toBe("True");
    const [count, errno] = (await hogging).stdout.trim().split(" ").map(Number);
    expect(count).toBe(max);
    expect(errno).toBe(28); // ENOSPC: the sandbox's own devpts is full
  });

  it("gets ENOSYS from the kernel AIO calls, so it cannot take the host's fs.aio-max-nr", async () => {
    // io_setup(1, NULL), io_destroy(0), io_getevents(0, 0, 0, NULL, NULL), io_submit(0, 0, NULL), io_cancel(0, NULL, NULL)
    for (const [nr, ...args] of [
      [206, 1, 0],
      [207, 0],
      [208, 0, 0, 0, 0, 0],
      [209, 0, 0, 0],
      [210, 0, 0, 0],
    ]) {
      expect((await run(a, syscall(nr, ...args))).stdout.trim()).toBe("-1 38");
    }
    // The host (and so every neighbour's share of fs.aio-max-nr) still gets a context.
    const host = await execFileP("/usr/bin/python3", [
      "-c",
      "import ctypes; l = ctypes.CDLL(None, use_errno=True); c = ctypes.c_ulong(0); r = l.syscall(206, 1, ctypes.byref(c)); print(r, l.syscall(207, c))",
    ]);
    expect(host.stdout.trim()).toBe("0 0");
    await neighbourWorks();
  });

  it("is refused what Docker's profile refuses or restricts: personality flags, migrate_pages, process_madvise, open_tree_attr, file_getattr, lsm_*", async () => {
    // personality(ADDR_NO_RANDOMIZE), personality(READ_IMPLIES_EXEC), migrate_pages(0, 0, NULL, NULL),
    // process_madvise(-1, NULL, 0, 0, 0), open_tree_attr(AT_FDCWD, NULL, 0, NULL, 0),
    // file_getattr(AT_FDCWD, NULL, NULL, 0, 0), lsm_get_self_attr / lsm_set_self_attr / lsm_list_modules
    for (const [nr, ...args] of [
      [135, 0x40000],
      [135, 0x400000],
      [256, 0, 0, 0, 0],
      [440, -1, 0, 0, 0, 0],
      [467, -100, 0, 0, 0, 0],
      [468, -100, 0, 0, 0, 0],
      [459, 0, 0, 0, 0],
      [460, 0, 0, 0, 0],
      [461, 0, 0, 0],
    ]) {
      expect([nr, (await run(a, syscall(nr, ...args))).stdout.trim()]).toEqual([nr, "-1 1"]);
    }
    // The personality values Docker allows still work: query (0xffffffff) and PER_LINUX.
    const query = await run(
      a,
      `python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); print(l.personality(ctypes.c_ulong(0xffffffff)), l.personality(ctypes.c_ulong(0)))'`,
    );
    expect(query.stdout.trim()).toBe("0 0");
    await neighbourWorks();
  });
});

describe("host headroom", () => {
  it("puts every sandbox under one cgroup whose pids and memory limits leave the host headroom", async () => {
    const pidMax = Number(await fs.readFile("/proc/sys/kernel/pid_max", "utf8"));
    const memTotal =
      Number(/^MemTotal:\s+(\d+)/m.exec(await fs.readFile("/proc/meminfo", "utf8"))?.[1]) * 1024;
    const group = await sandboxGroup();
    const pidsMax = Number(await fs.readFile(`${group.pids}/pids.max`, "utf8"));
    const memoryMax = Number(await fs.readFile(group.memoryLimitFile, "utf8"));
    expect(pidsMax).toBeLessThanOrEqual(pidMax - 4096);
    expect(memoryMax).toBeLessThanOrEqual(memTotal - 2 ** 30);
    // Both sandboxes of this file are inside it.
    const children = await fs.readdir(group.pids);
    for (const id of ["atka", "atkb"])
      expect(children.some((c) => c.endsWith(`-${id}`))).toBe(true);
  });
});

/** The cgroup grouping every sandbox of this host's services (v1: per controller; v2: one). */
async function sandboxGroup(): Promise<{ pids: string; memoryLimitFile: string }> {
  const v2 = await fs.access("/sys/fs/cgroup/cgroup.controllers").then(
    () => true,
    () => false,
  );
  if (v2)
    return {
      pids: "/sys/fs/cgroup/sandbox-iac",
      memoryLimitFile: "/sys/fs/cgroup/sandbox-iac/memory.max",
    };
  const own = new Map<string, string>();
  for (const line of (await fs.readFile("/proc/self/cgroup", "utf8")).split("\n")) {
    const [, ctrls, p] = line.split(":");
    for (const c of (ctrls ?? "").split(",")) if (p !== undefined) own.set(c, p === "/" ? "" : p);
  }
  const dir = (ctrl: string) => `/sys/fs/cgroup/${ctrl}${own.get(ctrl) ?? ""}/sandbox-iac`;
  return { pids: dir("pids"), memoryLimitFile: `${dir("memory")}/memory.limit_in_bytes` };
}

describe("disk quota", () => {
  it("fills a sandbox's disk to ENOSPC inside, leaves the host and the neighbour unaffected", async () => {
    const small = await t.runtime.start(sandboxSpec(t, "atkdisk", { diskSizeMB: 64 }));
    try {
      // The image's own allocation, not the host filesystem's free space: other
      // processes on a shared host write there too.
      const image = sandboxPaths(t.dataDir, "atkdisk").disk;
      const allocatedMiB = async () => ((await fs.stat(image)).blocks * 512) / 2 ** 20;
      const before = await allocatedMiB();
      const r = await runInSandbox(
        small.agentSocket,
        "dd if=/dev/zero of=/home/user/fill bs=1M count=200 2>&1; echo status $?",
      );
      expect(r.stdout).toMatch(/No space left on device/);
      expect(r.stdout).toMatch(/status 1/);
      const grewMiB = (await allocatedMiB()) - before;
      expect(grewMiB).toBeLessThan(80);
      const stats = await small.stats();
      expect(stats.diskTotal).toBeLessThanOrEqual(64 * 2 ** 20);
      await neighbourWorks();
      expect(
        (await runInSandbox(small.agentSocket, "rm /home/user/fill && echo freed")).stdout,
      ).toBe("freed\n");
    } finally {
      await small.stop();
    }
  });
});

describe("ownership inside", () => {
  it("shows template files with their owners and maps root inside to an unprivileged host uid", async () => {
    const r = await runInSandbox(
      a.agentSocket,
      "stat -c '%u:%g' /etc/passwd /home/user; cat /proc/self/uid_map",
      { user: "root" },
    );
    const [passwd, home, map] = r.stdout.trim().split("\n");
    expect(passwd).toBe("0:0");
    expect(home).toBe("1000:1000");
    const [inside, outside] = map.trim().split(/\s+/).map(Number);
    expect(inside).toBe(0);
    expect(outside).toBeGreaterThanOrEqual(65536);
  });
});
