import { Code, ConnectError } from "@connectrpc/connect";
import { Signal } from "../../gen/envd/process/process_pb";
import { startTestSandbox, type TestSandbox } from "../../../test/support/agent/bwrap-sandbox";
import { agentClients } from "../../../test/support/agent/clients";
import { collect } from "../../../test/support/agent/collect";

// One sandbox for the file: starting one costs a Node boot; every test uses its own processes.
let sbx: TestSandbox;
let clients: ReturnType<typeof agentClients>;
beforeAll(async () => {
  sbx = await startTestSandbox();
  clients = agentClients(sbx.socketPath);
});
afterAll(async () => {
  await sbx?.stop();
});

const bash = (cmd: string) => ({ cmd: "/bin/bash", args: ["-l", "-c", cmd] });

async function expectCode(p: Promise<unknown>, code: Code, message?: RegExp): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  expect((err as ConnectError).code).toBe(code);
  if (message) expect((err as ConnectError).rawMessage).toMatch(message);
}

describe("Process.Start", () => {
  it("streams start, stdout and stderr, then an end with exit code 0", async () => {
    const s = await collect(
      clients.process.start({ process: bash("echo out; echo err >&2"), stdin: false }),
    );
    expect(s.kinds[0]).toBe("start");
    expect(s.kinds.at(-1)).toBe("end");
    expect(s.stdout).toBe("out\n");
    expect(s.stderr).toBe("err\n");
    expect(s.end).toEqual({ exitCode: 0, exited: true, status: "exit status 0", error: undefined });
  });

  it("reports a non-zero exit code with an error", async () => {
    const s = await collect(clients.process.start({ process: bash("exit 3"), stdin: false }));
    expect(s.end).toEqual({
      exitCode: 3,
      exited: true,
      status: "exit status 3",
      error: "exit status 3",
    });
  });

  it("reports exit code 127 with stderr for a command that does not exist", async () => {
    const s = await collect(
      clients.process.start({ process: { cmd: "no-such-binary-xyz", args: [] } }),
    );
    expect(s.end?.exitCode).toBe(127);
    expect(s.stderr).toMatch(/not found/);
  });

  it("runs as the default user with its environment, then as root when asked", async () => {
    const s = await collect(
      clients.process.start({
        process: {
          ...bash('echo "$(id -u):$HOME:$USER:$PWD:$E2B_SANDBOX:$FOO"'),
          envs: { FOO: "bar" },
        },
      }),
    );
    // Boot default user is root until /init says otherwise.
    expect(s.stdout).toBe("0:/root:root:/root:true:bar\n");
    const asUser = await collect(
      clients.process.start(
        { process: bash('echo "$(id -u):$(id -g):$HOME:$PWD"') },
        { headers: { Authorization: `Basic ${Buffer.from("user:").toString("base64")}` } },
      ),
    );
    expect(asUser.stdout).toBe("1000:1000:/home/user:/home/user\n");
  });

  it("resolves a relative cwd against HOME and expands ~", async () => {
    const headers = { Authorization: `Basic ${Buffer.from("user:").toString("base64")}` };
    await collect(clients.process.start({ process: bash("mkdir -p sub") }, { headers }));
    const rel = await collect(
      clients.process.start({ process: { ...bash("pwd"), cwd: "sub" } }, { headers }),
    );
    expect(rel.stdout).toBe("/home/user/sub\n");
    const tilde = await collect(
      clients.process.start({ process: { ...bash("pwd"), cwd: "~/sub" } }, { headers }),
    );
    expect(tilde.stdout).toBe("/home/user/sub\n");
  });

  it("fails when the cwd does not exist", async () => {
    await expectCode(
      collect(clients.process.start({ process: { ...bash("pwd"), cwd: "/nope" } })),
      Code.InvalidArgument,
      /^cwd '\/nope' does not exist$/,
    );
  });

  it("fails when the user is unknown", async () => {
    await expectCode(
      collect(
        clients.process.start(
          { process: bash("true") },
          { headers: { Authorization: `Basic ${Buffer.from("ghost:").toString("base64")}` } },
        ),
      ),
      Code.Unauthenticated,
      /^invalid username: 'ghost'$/,
    );
  });

  it("gives the process an open stdin pipe when stdin is absent, closed by CloseStdin", async () => {
    const stream = clients.process.start({ process: bash("cat; sleep 1") });
    const it = stream[Symbol.asyncIterator]();
    const first = await it.next();
    const pid = first.value.event.event.value.pid as number;
    await clients.process.sendInput({
      process: { selector: { case: "pid", value: pid } },
      input: { input: { case: "stdin", value: Buffer.from("hello\n") } },
    });
    await clients.process.closeStdin({ process: { selector: { case: "pid", value: pid } } });
    // CloseStdin is idempotent.
    await clients.process.closeStdin({ process: { selector: { case: "pid", value: pid } } });
    const rest = await collect({ [Symbol.asyncIterator]: () => it });
    expect(rest.stdout).toBe("hello\n");
    expect(rest.end?.exitCode).toBe(0);
  });

  it("fails SendInput when stdin is /dev/null", async () => {
    const stream = clients.process.start({ process: bash("sleep 5"), stdin: false });
    const it = stream[Symbol.asyncIterator]();
    const pid = (await it.next()).value.event.event.value.pid as number;
    const sel = { selector: { case: "pid" as const, value: pid } };
    await expectCode(
      clients.process.sendInput({
        process: sel,
        input: { input: { case: "stdin", value: Buffer.from("x") } },
      }),
      Code.Internal,
      /stdin not enabled or closed/,
    );
    await clients.process.sendSignal({ process: sel, signal: Signal.SIGKILL });
    const rest = await collect({ [Symbol.asyncIterator]: () => it });
    expect(rest.end).toEqual({
      exitCode: -1,
      exited: false,
      status: "signal: killed",
      error: "signal: killed",
    });
  });

  it("reports SIGTERM deaths as terminated and refuses other signals", async () => {
    const stream = clients.process.start({ process: { cmd: "sleep", args: ["30"] }, stdin: false });
    const it = stream[Symbol.asyncIterator]();
    const pid = (await it.next()).value.event.event.value.pid as number;
    const sel = { selector: { case: "pid" as const, value: pid } };
    await expectCode(
      clients.process.sendSignal({ process: sel, signal: 1 as Signal }),
      Code.Unimplemented,
    );
    await clients.process.sendSignal({ process: sel, signal: Signal.SIGTERM });
    const rest = await collect({ [Symbol.asyncIterator]: () => it });
    expect(rest.end?.status).toBe("signal: terminated");
  });

  it("kills the process when Connect-Timeout-Ms expires", async () => {
    const err = await collect(
      clients.process.start(
        { process: bash("sleep 30"), stdin: false, tag: "timeout-test" },
        { timeoutMs: 500 },
      ),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as ConnectError).code).toBe(Code.DeadlineExceeded);
    // The process is gone: Connect now yields its retained end.
    const after = await collect(
      clients.process.connect({ process: { selector: { case: "tag", value: "timeout-test" } } }),
    );
    expect(after.kinds).toEqual(["start", "end"]);
    expect(after.end?.status).toBe("signal: killed");
  });

  it("splits large output into chunks of at most 32 KiB", async () => {
    const sizes: number[] = [];
    for await (const msg of clients.process.start({
      process: bash("head -c 200000 /dev/zero"),
      stdin: false,
    })) {
      const ev = msg.event?.event;
      if (ev?.case === "data" && ev.value.output.case === "stdout")
        sizes.push(ev.value.output.value.length);
    }
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(200000);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(32 * 1024);
  });

  it("sends keepalives when the stream is idle", async () => {
    const s = await collect(
      clients.process.start(
        { process: bash("sleep 2.5"), stdin: false },
        { headers: { "Keepalive-Ping-Interval": "1" } },
      ),
    );
    expect(s.kinds.filter((k) => k === "keepalive").length).toBeGreaterThanOrEqual(1);
    expect(s.kinds.at(-1)).toBe("end");
  });
});

describe("Process.Connect and List", () => {
  it("lists a running process and streams only live output to a late subscriber", async () => {
    const stream = clients.process.start({
      process: bash("echo early; read line; echo $line"),
      tag: "svc",
    });
    const it = stream[Symbol.asyncIterator]();
    const pid = (await it.next()).value.event.event.value.pid as number;
    const list = await clients.process.list({});
    const mine = list.processes.find((p) => p.pid === pid);
    expect(mine?.tag).toBe("svc");
    expect(mine?.config?.args).toEqual(["-l", "-c", "echo early; read line; echo $line"]);
    // The late subscriber attaches once "early" was printed (a login shell can be slow to get there).
    let early = "";
    while (!early.includes("early\n")) {
      const next = await it.next();
      const ev = next.value?.event?.event;
      if (next.done || ev?.case === "end") throw new Error(`ended before "early": ${early}`);
      if (ev?.case === "data" && ev.value.output.case === "stdout")
        early += Buffer.from(ev.value.output.value).toString();
    }
    const attached = clients.process.connect({
      process: { selector: { case: "tag", value: "svc" } },
    });
    const ait = attached[Symbol.asyncIterator]();
    expect((await ait.next()).value.event.event).toEqual(
      expect.objectContaining({ case: "start" }),
    );
    await clients.process.sendInput({
      process: { selector: { case: "pid", value: pid } },
      input: { input: { case: "stdin", value: Buffer.from("late\n") } },
    });
    const live = await collect({ [Symbol.asyncIterator]: () => ait });
    expect(live.stdout).toBe("late\n");
    const orig = await collect({ [Symbol.asyncIterator]: () => it });
    expect(early + orig.stdout).toBe("early\nlate\n");
    expect((await clients.process.list({})).processes.some((p) => p.pid === pid)).toBe(false);
  });

  it("fails when the pid is unknown", async () => {
    await expectCode(
      collect(clients.process.connect({ process: { selector: { case: "pid", value: 999999 } } })),
      Code.NotFound,
      /^process with pid 999999 not found$/,
    );
    await expectCode(
      clients.process.sendSignal({
        process: { selector: { case: "pid", value: 999999 } },
        signal: Signal.SIGKILL,
      }),
      Code.NotFound,
    );
  });

  it("keeps the process running when the client disconnects", async () => {
    const ac = new AbortController();
    const stream = clients.process.start(
      { process: bash("sleep 1; echo done"), tag: "detached", stdin: false },
      { signal: ac.signal },
    );
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    ac.abort();
    await it.next().catch(() => undefined);
    const after = await collect(
      clients.process.connect({ process: { selector: { case: "tag", value: "detached" } } }),
    );
    expect(after.end?.exitCode).toBe(0);
    expect(after.stdout).toBe("done\n");
  });
});

describe("Process PTY", () => {
  it("runs on a PTY of the given size, takes pty input and resizes", async () => {
    const stream = clients.process.start({
      process: {
        cmd: "/bin/bash",
        args: ["-c", "stty size; read l; stty size; echo got:$l"],
        envs: { TERM: "xterm-256color" },
      },
      pty: { size: { cols: 100, rows: 30 } },
    });
    const it = stream[Symbol.asyncIterator]();
    const pid = (await it.next()).value.event.event.value.pid as number;
    const sel = { selector: { case: "pid" as const, value: pid } };
    // The first size must be printed before the resize, or the resize wins the race.
    let firstOutput = "";
    while (!firstOutput.includes("30 100")) {
      const next = await it.next();
      if (next.done) break;
      const ev = next.value.event?.event;
      if (ev?.case === "data" && ev.value.output.case === "pty") {
        firstOutput += Buffer.from(ev.value.output.value).toString();
      }
    }
    expect(firstOutput).toContain("30 100");
    await expectCode(
      clients.process.sendInput({
        process: sel,
        input: { input: { case: "stdin", value: Buffer.from("x") } },
      }),
      Code.Internal,
    );
    await expectCode(clients.process.closeStdin({ process: sel }), Code.Unknown);
    await clients.process.update({ process: sel, pty: { size: { cols: 120, rows: 40 } } });
    await clients.process.sendInput({
      process: sel,
      input: { input: { case: "pty", value: Buffer.from("hi\r") } },
    });
    const rest = await collect({ [Symbol.asyncIterator]: () => it });
    expect(rest.pty).toContain("40 120");
    expect(rest.pty).toContain("got:hi");
    expect(rest.stdout).toBe("");
    expect(rest.end?.exitCode).toBe(0);
  });

  it("fails Update with a size on a process without a PTY", async () => {
    const stream = clients.process.start({ process: bash("sleep 5"), stdin: false });
    const it = stream[Symbol.asyncIterator]();
    const pid = (await it.next()).value.event.event.value.pid as number;
    const sel = { selector: { case: "pid" as const, value: pid } };
    await expectCode(
      clients.process.update({ process: sel, pty: { size: { cols: 1, rows: 1 } } }),
      Code.Internal,
      /tty not assigned/,
    );
    await clients.process.sendSignal({ process: sel, signal: Signal.SIGKILL });
    await collect({ [Symbol.asyncIterator]: () => it });
  });
});
