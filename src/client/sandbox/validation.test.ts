import { SandboxIacError } from "../../errors";
import { createSandboxClient, type SandboxClient } from "./client";
import { neverFetch, neverTransport } from "../../../test/support/never-transports";

function setup() {
  const rpcCalls: string[] = [];
  const fetchCalls: string[] = [];
  const client = createSandboxClient({
    sandboxID: "isbx1",
    baseUrl: "http://127.0.0.1:1",
    transport: neverTransport(rpcCalls),
    fetch: neverFetch(fetchCalls),
  });
  return { client, rpcCalls, fetchCalls };
}

async function failure(
  fn: (c: SandboxClient) => unknown,
): Promise<{ err: SandboxIacError; sent: number }> {
  const { client, rpcCalls, fetchCalls } = setup();
  let caught: unknown;
  try {
    await fn(client);
  } catch (err) {
    caught = err;
  }
  if (!SandboxIacError.is(caught))
    throw new Error(`expected a SandboxIacError, got ${String(caught)}`);
  return { err: caught, sent: rpcCalls.length + fetchCalls.length };
}

describe("argument validation", () => {
  it.each<[string, (c: SandboxClient) => unknown, string]>([
    ["stat with an empty path", (c) => c.stat(""), "path"],
    ["makeDir with an empty path", (c) => c.makeDir(""), "path"],
    ["move with an empty destination", (c) => c.move("/a", ""), "destination"],
    ["listDir with depth 0", (c) => c.listDir("/a", { depth: 0 }), "depth"],
    ["remove with a non-string path", (c) => c.remove(undefined as unknown as string), "path"],
    ["watchDir with an empty path", (c) => c.watchDir(""), "path"],
    ["getWatcherEvents without an id", (c) => c.getWatcherEvents(""), "watcherId"],
    ["start with an empty command", (c) => c.start("  "), "cmd"],
    [
      "start with non-string args",
      (c) => c.start("ls", { args: [1 as unknown as string] }),
      "args",
    ],
    ["start with a negative timeout", (c) => c.start("ls", { timeoutMs: -1 }), "timeoutMs"],
    ["start with a user containing ':'", (c) => c.start("ls", { user: "a:b" }), "user"],
    [
      "start with a non-string env value",
      (c) => c.start("ls", { envs: { A: 1 as unknown as string } }),
      "envs.A",
    ],
    ["sendInput to pid 0", (c) => c.sendInput(0, "x"), "selector"],
    ["connect with an empty tag", (c) => c.connect({ tag: "" }), "selector.tag"],
    ["sendSignal with SIGHUP", (c) => c.sendSignal(1, "SIGHUP" as "SIGTERM"), "signal"],
    ["kill with a fractional pid", (c) => c.kill(1.5), "selector"],
    ["startPty with cols 0", (c) => c.startPty({ cols: 0, rows: 24 }), "cols"],
    ["resizePty with rows 70000", (c) => c.resizePty(5, { cols: 80, rows: 70000 }), "rows"],
    ["sendPtyInput to pid -1", (c) => c.sendPtyInput(-1, "x"), "pid"],
    ["uploadBytes with an empty path", (c) => c.uploadBytes("", "x"), "remotePath"],
    [
      "uploadFile of a missing local file",
      (c) => c.uploadFile("/nonexistent/file", "/a"),
      "localPath",
    ],
    [
      "uploadFile with mode 0o10000",
      (c) => c.uploadFile(__filename, "/a", { mode: 0o10000 }),
      "mode",
    ],
    ["downloadFile with an empty local path", (c) => c.downloadFile("/a", ""), "localPath"],
    ["readText with an empty path", (c) => c.readText(""), "path"],
    ["compose with no sources", (c) => c.compose([], "/d"), "sourcePaths"],
    ["compose into one of its sources", (c) => c.compose(["/a", "/b"], "/a"), "destination"],
  ])("fails when %s, before sending anything", async (_name, call, field) => {
    const { err, sent } = await failure(call);
    expect(err.field).toBe(field);
    expect(err.code).toBe("invalid_argument");
    expect(sent).toBe(0);
  });

  it("fails when the sandbox id has characters outside [a-z0-9]", () => {
    expect(() => createSandboxClient({ sandboxID: "Bad-Id", baseUrl: "http://x" })).toThrow(
      expect.objectContaining({ code: "invalid_argument", field: "sandboxID" }),
    );
  });

  it("fails when the base URL is not http(s)", () => {
    expect(() => createSandboxClient({ sandboxID: "isbx1", baseUrl: "ftp://x" })).toThrow(
      expect.objectContaining({ code: "invalid_argument", field: "baseUrl" }),
    );
  });

  it("takes the URL and routing headers from the configuration", () => {
    const client = createSandboxClient({
      sandboxID: "isbx1",
      config: {
        sandboxBaseUrl: (id) => ({ url: `http://proxy.test/`, headers: { "E2b-Sandbox-Id": id } }),
      },
      transport: neverTransport(),
    });
    expect(client.baseUrl).toBe("http://proxy.test");
  });
});
