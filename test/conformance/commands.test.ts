/**
 * Conformance: processes and PTYs through the official SDK (e2b@2.51.0).
 */
import { CommandExitError, Sandbox } from "e2b";
import { eventually } from "../support/eventually";
import { connectionOpts } from "../support/service";
import { sdkSandbox } from "./support";

describe("commands with e2b@2.51.0", () => {
  const env = sdkSandbox((service) =>
    Sandbox.create({ ...connectionOpts(service), timeoutMs: 300_000 }),
  );

  it("runs a command as user in the home directory and returns its output", async () => {
    const result = await env.sbx.commands.run("whoami; pwd; echo err >&2");
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe("user\n/home/user\n");
    expect(result.stderr).toBe("err\n");
  });

  it("starts many commands of the default user at once, each with its own output", async () => {
    // A command's pipes are opened while the next one's user switch is under way.
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) => env.sbx.commands.run(`echo ${i}; whoami`)),
    );
    expect(results.map((r) => r.stdout)).toEqual(
      Array.from({ length: 24 }, (_, i) => `${i}\nuser\n`),
    );
  });

  it("runs as root on request, in a given cwd with given envs", async () => {
    const result = await env.sbx.commands.run("whoami; pwd; echo $FOO", {
      user: "root",
      cwd: "/tmp",
      envs: { FOO: "bar" },
    });
    expect(result.stdout).toBe("root\n/tmp\nbar\n");
  });

  it("fails with CommandExitError carrying the exit code and stderr", async () => {
    const failure = env.sbx.commands.run("echo boom >&2; exit 3");
    await expect(failure).rejects.toBeInstanceOf(CommandExitError);
    await failure.catch((err: unknown) => {
      const e = err as InstanceType<typeof CommandExitError>;
      expect(e.exitCode).toBe(3);
      expect(e.stderr).toBe("boom\n");
    });
  });

  it("starts a background command, lists it, connects to it and kills it", async () => {
    const handle = await env.sbx.commands.run("while true; do echo tick; sleep 0.2; done", {
      background: true,
    });
    const listed = await env.sbx.commands.list();
    expect(listed.map((p) => p.pid)).toContain(handle.pid);
    const seen: string[] = [];
    const attached = await env.sbx.commands.connect(handle.pid, {
      onStdout: (d) => void seen.push(d),
    });
    await eventually(() => seen.join("").includes("tick"), { timeoutMs: 5_000 });
    expect(await env.sbx.commands.kill(handle.pid)).toBe(true);
    const end = await attached.wait().catch((e: unknown) => e);
    expect(String((end as { error?: string }).error ?? end)).toMatch(/signal: killed/);
    expect((await env.sbx.commands.list()).map((p) => p.pid)).not.toContain(handle.pid);
    expect(await env.sbx.commands.kill(handle.pid)).toBe(false);
  });

  it("feeds stdin and closes it", async () => {
    const handle = await env.sbx.commands.run("cat", { background: true, stdin: true });
    await env.sbx.commands.sendStdin(handle.pid, "piped input\n");
    await env.sbx.commands.closeStdin(handle.pid);
    const result = await handle.wait();
    expect(result.stdout).toBe("piped input\n");
  });

  it("gives commands pipes for stdio, so /dev/stdout, /dev/stderr and /dev/stdin open as on E2B", async () => {
    const result = await env.sbx.commands.run(
      "echo hi > /dev/stderr; echo out > /dev/stdout; exec 3>/dev/stdout; echo three >&3; echo tee | tee /dev/stderr",
    );
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe("out\nthree\ntee\n");
    expect(result.stderr).toBe("hi\ntee\n");
    const handle = await env.sbx.commands.run("cat /dev/stdin", { background: true, stdin: true });
    await env.sbx.commands.sendStdin(handle.pid, "in\n");
    await env.sbx.commands.closeStdin(handle.pid);
    expect((await handle.wait()).stdout).toBe("in\n");
  });

  it("kills a command that outlives its timeout", async () => {
    await expect(env.sbx.commands.run("sleep 30", { timeoutMs: 1_000 })).rejects.toThrow();
    // The agent kills the process when it sees the stream end, which may be
    // just after the SDK has already given up: wait for it, well short of 30 s.
    const survivors = async () =>
      (await env.sbx.commands.list()).filter(
        (p) => p.cmd === "/bin/bash" && p.args.join(" ").includes("sleep 30"),
      );
    await eventually(async () => (await survivors()).length === 0, { timeoutMs: 5_000 }).catch(
      () => undefined,
    );
    expect(await survivors()).toHaveLength(0);
  });

  it("opens a PTY, sends input, resizes it and kills it", async () => {
    let output = "";
    const decoder = new TextDecoder();
    const pty = await env.sbx.pty.create({
      cols: 80,
      rows: 24,
      onData: (d) => void (output += decoder.decode(d)),
    });
    await env.sbx.pty.sendInput(pty.pid, new TextEncoder().encode("stty size\n"));
    await eventually(() => output.includes("24 80"), { timeoutMs: 10_000 });
    await env.sbx.pty.resize(pty.pid, { cols: 100, rows: 40 });
    await env.sbx.pty.sendInput(pty.pid, new TextEncoder().encode("stty size\n"));
    await eventually(() => output.includes("40 100"), { timeoutMs: 10_000 });
    expect(await env.sbx.pty.kill(pty.pid)).toBe(true);
  });
});
