/**
 * The typed sandbox client against the REAL local service: the Process RPCs
 * (run, stream, stdin, list, connect, signals, timeouts) and terminals.
 */
import { createHash, randomBytes } from "node:crypto";
import type { ProcessEvent, SandboxClient } from "../../src/client/sandbox";
import { commandResultOf } from "../../src/client/sandbox/errors";
import { collect, failureOf, useSandboxClientFixture } from "./sandbox-client.support";
import { eventually } from "../support/eventually";

jest.setTimeout(120_000);

let client: SandboxClient;
let sandboxID: string;

useSandboxClientFixture((fx) => ({ client, sandboxID } = fx));

describe("processes", () => {
  it("runs a shell line and collects stdout, stderr and the exit code", async () => {
    const res = await client.run("echo out; echo err >&2; echo $HOME");
    expect(res).toMatchObject({ exitCode: 0, exited: true, stderr: "err\n" });
    expect(res.stdout).toBe("out\n/home/user\n");
  });

  it("runs cmd with args exactly, without a shell", async () => {
    const res = await client.run("/bin/echo", { args: ["a  b", "$HOME"] });
    expect(res.stdout).toBe("a  b $HOME\n");
  });

  it("passes envs, cwd and user", async () => {
    const res = await client.run('echo "$GREETING $(pwd) $(id -un)"', {
      envs: { GREETING: "hello" },
      cwd: "/tmp",
      user: "root",
    });
    expect(res.stdout).toBe("hello /tmp root\n");
  });

  it("fails with command_failed carrying the exit code, the output and the sandbox", async () => {
    const err = await failureOf(client.run("echo partial; echo 'broken thing' >&2; exit 3"));
    expect(err.code).toBe("command_failed");
    expect(err.message).toContain("exit 3");
    expect(err.message).toContain("exited with code 3");
    expect(err.message).toContain("broken thing");
    expect(err.message).toContain(sandboxID);
    expect(commandResultOf(err)).toMatchObject({
      exitCode: 3,
      stdout: "partial\n",
      stderr: "broken thing\n",
    });
  });

  it("streams typed events with keepalives hidden and the end last", async () => {
    const handle = await client.start("echo one; sleep 0.2; echo two >&2");
    expect(handle.pid).toBeGreaterThan(0);
    const { types, end } = await collect(handle);
    expect(types[types.length - 1]).toBe("end");
    expect(types.filter((t) => t === "end")).toHaveLength(1);
    expect(new Set(types)).toEqual(new Set(["stdout", "stderr", "end"]));
    expect(end).toMatchObject({ type: "end", exitCode: 0, exited: true });
  });

  it("writes stdin with sendInput and ends it with closeStdin", async () => {
    const handle = await client.start("cat", { stdin: true });
    await client.sendInput(handle.pid, "hello ");
    await client.sendInput({ pid: handle.pid }, new TextEncoder().encode("world"));
    await client.closeStdin(handle.pid);
    expect((await handle.wait()).stdout).toBe("hello world");
  });

  it("streams stdin in order over the client-streaming StreamInput", async () => {
    const handle = await client.start("cat", { stdin: true, tag: "streamed-cat" });
    async function* chunks() {
      for (let i = 0; i < 20; i++) yield `line ${i}\n`;
    }
    await client.streamInput({ tag: "streamed-cat" }, chunks());
    await client.closeStdin({ tag: "streamed-cat" });
    const res = await handle.wait();
    expect(res.stdout).toBe(Array.from({ length: 20 }, (_, i) => `line ${i}\n`).join(""));
  });

  it("streams megabytes of binary stdin intact, in messages of several sizes", async () => {
    const handle = await client.start("sha256sum", { stdin: true });
    const sizes = [1 << 20, 1, 0, 300_000, 127, 128, 16_384, (1 << 20) + 3];
    const hash = createHash("sha256");
    async function* chunks() {
      for (const [i, size] of sizes.entries()) {
        const chunk = randomBytes(size);
        hash.update(chunk);
        // A string among the bytes: sent as its UTF-8 bytes.
        yield i === 2 ? "" : chunk;
      }
    }
    await client.streamInput(handle.pid, chunks());
    await client.closeStdin(handle.pid);
    expect((await handle.wait()).stdout).toBe(`${hash.digest("hex")}  -\n`);
  });

  it("fails with not_found, the process named, when streaming stdin to an unknown pid", async () => {
    async function* chunks() {
      yield new Uint8Array(64);
    }
    const err = await failureOf(client.streamInput(999_999, chunks()));
    expect(err).toMatchObject({ code: "not_found", rpcCode: "not_found" });
    expect(err.message).toContain("999999");
  });

  it("answers the next call after stdin was streamed to a process that had exited", async () => {
    // GIVEN a process that has exited, and 100 KB of stdin for it (more than
    // the agent reads before it answers)
    const handle = await client.start("exit 127", { stdin: true });
    await handle.wait();
    async function* chunks() {
      yield new Uint8Array(100_000);
    }
    // WHEN it is streamed THEN the call fails with not_found
    const err = await failureOf(client.streamInput(handle.pid, chunks()));
    expect(err).toMatchObject({ code: "not_found" });
    // AND the next calls, relayed on the agent's connection that call used, are answered
    expect(await client.kill(handle.pid)).toBe(false);
    expect((await client.run("echo next")).stdout).toBe("next\n");
  });

  it("lists a tagged process, reattaches with connect and stops it with SIGTERM", async () => {
    const handle = await client.start(
      "trap 'exit 0' USR1; while true; do echo tick; sleep 0.1; done",
      { tag: "ticker" },
    );
    handle.disconnect();
    const listed = await client.list();
    expect(listed).toContainEqual(
      expect.objectContaining({ pid: handle.pid, tag: "ticker", cmd: "/bin/bash" }),
    );

    const attached = await client.connect({ tag: "ticker" });
    expect(attached.pid).toBe(handle.pid);
    const iterator = attached[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).toMatchObject({ type: "stdout" });
    await client.sendSignal({ tag: "ticker" }, "SIGTERM");
    let last: ProcessEvent | undefined;
    for (let next = await iterator.next(); !next.done; next = await iterator.next())
      last = next.value;
    expect(last).toMatchObject({ type: "end", exitCode: -1, exited: false });
    expect((await client.list()).map((p) => p.pid)).not.toContain(handle.pid);
  });

  it("kills a process and answers false for one that is gone", async () => {
    const handle = await client.start("sleep 300");
    expect(await client.kill(handle.pid)).toBe(true);
    const res = await handle.wait();
    expect(res).toMatchObject({ exitCode: -1, exited: false });
    expect(res.status).toContain("killed");
    expect(await client.kill(handle.pid)).toBe(false);
  });

  it("fails with timeout when the process outlives its timeoutMs, and envd kills it", async () => {
    const marker = `timeout-${Date.now()}`;
    const err = await failureOf(client.run(`sleep 30 # ${marker}`, { timeoutMs: 500 }));
    expect(err.code).toBe("timeout");
    // The kill happens on the server's clock, which may run a moment behind ours.
    const alive = async () =>
      (await client.list()).some((p) => p.args.some((a) => a.includes(marker)));
    await eventually(async () => !(await alive()), { timeoutMs: 5_000 }).catch(() => undefined);
    expect(await alive()).toBe(false);
  });

  it("fails with not_found when connecting to an unknown pid", async () => {
    const err = await failureOf(client.connect(999_999));
    expect(err).toMatchObject({ code: "not_found", rpcCode: "not_found" });
  });

  it("fails with invalid_argument for a cwd that does not exist", async () => {
    const err = await failureOf(client.run("true", { cwd: "/no/such/dir" }));
    expect(err.code).toBe("invalid_argument");
  });
});

describe("pty", () => {
  it("runs an interactive shell on a terminal, resizes it and takes input", async () => {
    const term = await client.startPty({ cols: 80, rows: 24 });
    const iterator = term[Symbol.asyncIterator]();
    let out = "";
    const types = new Set<string>();
    let end: ProcessEvent | undefined;
    async function readUntil(text: string): Promise<void> {
      while (!out.includes(text)) {
        const next = await iterator.next();
        if (next.done)
          throw new Error(
            `the terminal ended before printing ${text}; it printed ${JSON.stringify(out)}`,
          );
        types.add(next.value.type);
        if (next.value.type === "end") end = next.value;
        else out += Buffer.from(next.value.data).toString("utf8");
      }
    }
    await client.sendPtyInput(term.pid, "stty size\n");
    await readUntil("24 80");
    await client.resizePty(term.pid, { cols: 100, rows: 30 });
    await client.sendPtyInput(term.pid, "stty size; echo TERM=$TERM; exit\n");
    await readUntil("30 100");
    await readUntil("TERM=xterm-256color");
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      types.add(next.value.type);
      if (next.value.type === "end") end = next.value;
    }
    expect(types).toEqual(new Set(["pty", "end"]));
    expect(end).toMatchObject({ exitCode: 0 });
  });

  it("fails when pty input goes to a process without a terminal", async () => {
    const handle = await client.start("sleep 5", { stdin: true });
    try {
      const err = await failureOf(client.sendPtyInput(handle.pid, "x"));
      expect(err.code).toBe("internal");
      const resize = await failureOf(client.resizePty(handle.pid, { cols: 10, rows: 10 }));
      expect(resize.code).toBe("internal");
    } finally {
      await client.kill(handle.pid);
    }
  });
});
