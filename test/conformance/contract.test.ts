/**
 * Conformance: the rest of E2B's contract through both pinned SDKs: fork,
 * metadata echoed by uploads, a multipart part without a filename, and the
 * inclusive `startedAfter` filter.
 */
import type { Sandbox as SandboxType } from "e2b";
import { SDK_TARGETS } from "./sdk-targets";
import { eventually } from "../support/eventually";
import { connectionOpts } from "../support/service";
import { sdkSandbox } from "./support";

describe.each(SDK_TARGETS)("E2B contract with $label", ({ sdk }) => {
  const { Sandbox } = sdk;
  const env = sdkSandbox((service) =>
    Sandbox.create({ ...connectionOpts(service), timeoutMs: 300_000 }),
  );

  it("forks a sandbox: one sandbox per fork, each with the parent's files but not its processes", async () => {
    await env.sbx.files.write("/home/user/parent.txt", "from the parent");
    const bg = await env.sbx.commands.run("sleep 300", { background: true });
    const forks = await env.sbx.fork({ count: 2, timeoutMs: 120_000 });
    try {
      expect(forks).toHaveLength(2);
      const ids = new Set<string>();
      for (const fork of forks) {
        expect(fork).toBeInstanceOf(Sandbox);
        const f = fork as SandboxType;
        ids.add(f.sandboxId);
        expect(await f.files.read("/home/user/parent.txt")).toBe("from the parent");
        // Processes do not come along: the runtime copies files, not memory.
        expect((await f.commands.list()).map((p) => p.pid)).not.toContain(bg.pid);
        await f.files.write("/home/user/parent.txt", `changed in ${f.sandboxId}`);
      }
      expect(ids.size).toBe(2);
      expect(ids.has(env.sbx.sandboxId)).toBe(false);
      // The parent goes on untouched, its process still running.
      expect(await env.sbx.files.read("/home/user/parent.txt")).toBe("from the parent");
      expect((await env.sbx.commands.list()).map((p) => p.pid)).toContain(bg.pid);
      expect(await env.sbx.isRunning()).toBe(true);
    } finally {
      for (const f of forks) if (f instanceof Sandbox) await f.kill();
      await bg.kill();
    }
  });

  it("answers fork of an unknown sandbox with the SDK's not-found error", async () => {
    await expect(
      Sandbox.fork("inotasandbox000000000", connectionOpts(env.service)),
    ).rejects.toThrow(/doesn't exist|not found/);
  });

  it("echoes the metadata of a written file", async () => {
    const info = await env.sbx.files.write("/home/user/meta.txt", "m", {
      metadata: { color: "blue" },
    });
    expect(info.metadata).toEqual({ color: "blue" });
  });

  it("writes a multipart part without a filename to the upload URL's path", async () => {
    const form = new FormData();
    form.append("file", "text without a filename");
    const url = await env.sbx.uploadUrl("/home/user/nameless.txt");
    const res = await fetch(url, { method: "POST", body: form });
    expect(res.status).toBe(200);
    expect(await env.sbx.files.read("/home/user/nameless.txt")).toBe("text without a filename");
  });

  it("boots fresh after a filesystem-only pause: a new boot id, no old processes, the files kept", async () => {
    const bootId = async (s: SandboxType) =>
      (await s.commands.run("cat /proc/sys/kernel/random/boot_id")).stdout.trim();
    const own = await Sandbox.create({ ...connectionOpts(env.service), timeoutMs: 300_000 });
    try {
      const first = await bootId(own);
      expect(first).toMatch(/^[0-9a-f-]{36}$/);
      await own.files.write("/home/user/kept.txt", "kept");
      const bg = await own.commands.run("sleep 300", { background: true });
      // A pause that keeps memory resumes the same boot: same id, same process.
      expect(await own.pause({ keepMemory: true })).toBe(true);
      await own.connect({ timeoutMs: 300_000 });
      expect(await bootId(own)).toBe(first);
      expect((await own.commands.list()).map((p) => p.pid)).toContain(bg.pid);

      expect(await own.pause({ keepMemory: false })).toBe(true);
      await own.connect({ timeoutMs: 300_000 });
      const second = await bootId(own);
      expect(second).toMatch(/^[0-9a-f-]{36}$/);
      expect(second).not.toBe(first);
      expect((await own.commands.list()).map((p) => p.pid)).not.toContain(bg.pid);
      expect(await own.files.read("/home/user/kept.txt")).toBe("kept");
    } finally {
      await own.kill();
    }
  });

  it("boots fresh after a filesystem-only auto-pause, as after an explicit one", async () => {
    const bootId = async (s: SandboxType) =>
      (await s.commands.run("cat /proc/sys/kernel/random/boot_id")).stdout.trim();
    const own = await Sandbox.create({
      ...connectionOpts(env.service),
      timeoutMs: 300_000,
      lifecycle: { onTimeout: { action: "pause", keepMemory: false } },
    });
    try {
      const first = await bootId(own);
      await own.files.write("/home/user/kept.txt", "kept");
      const bg = await own.commands.run("sleep 300", { background: true });
      // WHEN its timeout is reached THEN it pauses on its own
      await own.setTimeout(1_000);
      await eventually(async () => (await own.getInfo()).state === "paused", {
        timeoutMs: 60_000,
        intervalMs: 250,
      });
      // THEN connecting boots it again: a new boot id, no old process, the files kept
      await own.connect({ timeoutMs: 300_000 });
      const second = await bootId(own);
      expect(second).toMatch(/^[0-9a-f-]{36}$/);
      expect(second).not.toBe(first);
      expect((await own.commands.list()).map((p) => p.pid)).not.toContain(bg.pid);
      expect(await own.files.read("/home/user/kept.txt")).toBe("kept");
    } finally {
      await own.kill();
    }
  });

  it("kills a process and returns only once its pid is gone", async () => {
    for (let i = 0; i < 5; i++) {
      const handle = await env.sbx.commands.run("sleep 60", { background: true });
      expect(await env.sbx.commands.kill(handle.pid)).toBe(true);
      const probe = await env.sbx.commands
        .run(`kill -0 ${handle.pid}`)
        .then(() => 0)
        .catch((err: { exitCode?: number }) => err.exitCode);
      expect(probe).toBe(1);
    }
  });

  /** Runs `cmd` and returns what the user sees, whether it exits 0 or not. */
  const outcome = (cmd: string, opts?: { user?: "root" | "user" }) =>
    env.sbx.commands.run(cmd, opts).then(
      (r) => ({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr }),
      (err: { exitCode?: number; stdout?: string; stderr?: string }) => ({
        exitCode: err.exitCode,
        stdout: err.stdout ?? "",
        stderr: err.stderr ?? "",
      }),
    );

  it("gives user passwordless sudo: the command runs as root, with stdin, output and exit code relayed", async () => {
    expect((await outcome("sudo whoami")).stdout).toBe("root\n");
    expect((await outcome("sudo -u root id -u")).stdout).toBe("0\n");
    expect((await outcome("sudo -n -- id -u")).stdout).toBe("0\n");
    expect((await outcome("echo hi | sudo cat")).stdout).toBe("hi\n");
    expect(await outcome("sudo sh -c 'echo out; echo err >&2; exit 3'")).toEqual({
      exitCode: 3,
      stdout: "out\n",
      stderr: "err\n",
    });
    // Megabytes each way, through both directions' flow control.
    expect((await outcome("head -c 3000000 /dev/zero | sudo wc -c")).stdout).toBe("3000000\n");
    expect((await outcome("sudo head -c 5000000 /dev/zero | wc -c")).stdout).toBe("5000000\n");
    expect((await outcome("sudo no-such-command-here")).exitCode).toBe(127);
    expect((await outcome("echo written | sudo tee /etc/x >/dev/null")).exitCode).toBe(0);
    expect((await outcome("stat -c '%U:%G %a' /etc/x")).stdout).toBe("root:root 644\n");
    expect(await env.sbx.files.read("/etc/x")).toBe("written\n");
    expect((await outcome("sudo sh -c 'echo $SUDO_USER:$HOME:$PWD'", {})).stdout).toBe(
      "user:/root:/home/user\n",
    );
    expect((await outcome("FOO=kept sudo -E sh -c 'echo [$FOO]'")).stdout).toBe("[kept]\n");
    expect((await outcome("FOO=kept sudo sh -c 'echo [$FOO]'")).stdout).toBe("[]\n");
    expect((await outcome("sudo -i pwd")).stdout).toBe("/root\n");
    expect((await outcome("sudo -u nobody id -u")).stdout).toBe("65534\n");
    expect((await outcome("sudo -u nosuchuser id")).stderr).toMatch(/unknown user nosuchuser/);
    expect((await outcome("sudo")).stderr).toMatch(/usage: sudo/);
  });

  it("keeps sudo a no-op for root, and hands root's sudo -u user to the agent", async () => {
    expect((await outcome("sudo -E id -u", { user: "root" })).stdout).toBe("0\n");
    expect((await outcome("sudo -u user id -u", { user: "root" })).stdout).toBe("1000\n");
  });

  it("lets no uid but user and root reach the sudo socket", async () => {
    expect(
      (await outcome("stat -c '%U %a' /run/sandbox-iac/sudo /run/sandbox-iac/sudo/sudo.sock"))
        .stdout,
    ).toBe("root 755\nuser 600\n");
    const asNobody = await outcome(
      "setpriv --reuid=65534 --regid=65534 --clear-groups sudo id -u",
      { user: "root" },
    );
    expect(asNobody.exitCode).toBe(1);
    expect(asNobody.stdout).toBe("");
    expect(asNobody.stderr).toMatch(/only the user `user` \(and root\) may use sudo/);
    // user cannot swap the socket for one of its own.
    expect((await outcome("rm -f /run/sandbox-iac/sudo/sudo.sock")).exitCode).not.toBe(0);
  });

  it("reports a rename inside a watched directory as RENAME of the old name and CREATE of the new", async () => {
    await env.sbx.files.makeDir("/home/user/renames");
    await env.sbx.files.write("/home/user/renames/old.txt", "r");
    const events: Array<{ name: string; type: string }> = [];
    const handle = await env.sbx.files.watchDir("/home/user/renames", (e) => {
      events.push({ name: e.name, type: String(e.type) });
    });
    try {
      await env.sbx.files.rename("/home/user/renames/old.txt", "/home/user/renames/new.txt");
      await eventually(async () => events.length >= 2);
      expect(events).toContainEqual({ name: "old.txt", type: "rename" });
      expect(events).toContainEqual({ name: "new.txt", type: "create" });
      expect(events).not.toContainEqual({ name: "old.txt", type: "remove" });
    } finally {
      await handle.stop();
    }
  });

  it("lists a sandbox whose start time equals startedAfter", async () => {
    const info = await env.sbx.getInfo();
    const listed = await Sandbox.list({
      ...connectionOpts(env.service),
      query: { startedAfter: info.startedAt },
    }).nextItems();
    expect(listed.map((s) => s.sandboxId)).toContain(env.sbx.sandboxId);
  });
});
