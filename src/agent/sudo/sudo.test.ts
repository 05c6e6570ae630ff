/**
 * The sudo socket against hostile or broken clients, and sudo's option
 * parsing. The end-to-end behaviour (as `user`, through the official SDK) is
 * in test/conformance/contract.test.ts.
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { createAgentState } from "../state";
import { lookupUser } from "../users";
import { parseSudoArgs } from "./client";
import { encodeFrame, FRAME, FrameDecoder, MAX_REQUEST_BYTES, type SudoRequest } from "./protocol";
import { startSudoServer } from "./server";
import { eventually } from "../../../test/support/eventually";

const isRoot = process.getuid?.() === 0;
const itAsRoot = isRoot ? it : it.skip;
if (!isRoot) console.warn("sudo socket tests skipped: they need root (chown of the socket)");

/** Everything the server sent until it closed the connection. */
interface Reply {
  stdout: string;
  stderr: string;
  exit?: { code: number; signal: number | null };
}

/** Connects, writes `bytes`, collects the reply until the server closes. */
function exchange(socket: string, bytes: Buffer[], onStdout?: (s: string) => void): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const reply: Reply = { stdout: "", stderr: "" };
    const decoder = new FrameDecoder(() => 1 << 20);
    const sock = net.connect(socket, () => {
      for (const b of bytes) sock.write(b);
    });
    sock.on("data", (chunk: Buffer) => {
      for (const f of decoder.push(chunk)) {
        if (f.type === FRAME.stdout) {
          reply.stdout += f.payload.toString();
          onStdout?.(reply.stdout);
        } else if (f.type === FRAME.stderr) reply.stderr += f.payload.toString();
        else if (f.type === FRAME.exit)
          reply.exit = JSON.parse(f.payload.toString()) as NonNullable<Reply["exit"]>;
      }
    });
    sock.on("error", reject);
    sock.on("close", () => resolve(reply));
  });
}

function request(over: Partial<SudoRequest>): Buffer {
  const req: SudoRequest = {
    argv: ["true"],
    user: "root",
    cwd: "/",
    env: {},
    preserveEnv: false,
    shell: false,
    login: false,
    ...over,
  };
  return encodeFrame(FRAME.request, JSON.stringify(req));
}

describe("the sudo socket", () => {
  let dir: string;
  let socket: string;
  let server: net.Server | undefined;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "sudo-sock-"));
    socket = path.join(dir, "sudo", "sudo.sock");
    const owner = lookupUser("nobody");
    if (!isRoot || !owner) return;
    server = await startSudoServer({ socket, owner, state: createAgentState() });
  });
  afterAll(() => {
    server?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  itAsRoot("leaves the socket to its owner alone, in a directory only root can change", () => {
    const d = fs.statSync(path.dirname(socket));
    const s = fs.statSync(socket);
    expect([d.uid, d.mode & 0o777]).toEqual([0, 0o755]);
    expect([s.uid, s.mode & 0o777]).toEqual([lookupUser("nobody")!.uid, 0o600]);
  });

  itAsRoot("runs the command and relays stdin, stdout, stderr and the exit code", async () => {
    const reply = await exchange(socket, [
      request({ argv: ["sh", "-c", "cat; echo err >&2; exit 4"] }),
      encodeFrame(FRAME.stdin, "from stdin\n"),
      encodeFrame(FRAME.stdinEnd, ""),
    ]);
    expect(reply).toEqual({
      stdout: "from stdin\n",
      stderr: "err\n",
      exit: { code: 4, signal: null },
    });
  });

  itAsRoot("forwards a signal and reports the command's death by it", async () => {
    let sent = false;
    let sock: net.Socket | undefined;
    const reply = await new Promise<Reply>((resolve, reject) => {
      const r: Reply = { stdout: "", stderr: "" };
      const decoder = new FrameDecoder(() => 1 << 20);
      sock = net.connect(socket, () =>
        sock!.write(request({ argv: ["sh", "-c", "echo ready; exec sleep 60"] })),
      );
      sock.on("data", (chunk: Buffer) => {
        for (const f of decoder.push(chunk)) {
          if (f.type === FRAME.stdout && !sent) {
            sent = true;
            sock!.write(encodeFrame(FRAME.signal, "SIGTERM"));
          } else if (f.type === FRAME.exit)
            r.exit = JSON.parse(f.payload.toString()) as NonNullable<Reply["exit"]>;
        }
      });
      sock.on("error", reject);
      sock.on("close", () => resolve(r));
    });
    expect(reply.exit).toEqual({ code: 0, signal: 15 });
  });

  itAsRoot("kills the command when the client goes away", async () => {
    let pid = 0;
    const sock = net.connect(socket, () =>
      sock.write(request({ argv: ["sh", "-c", "echo $$; exec sleep 60"] })),
    );
    const decoder = new FrameDecoder(() => 1 << 20);
    await new Promise<void>((resolve) =>
      sock.on("data", (chunk: Buffer) => {
        for (const f of decoder.push(chunk)) {
          if (f.type === FRAME.stdout) pid = Number(f.payload.toString().trim());
        }
        if (pid) resolve();
      }),
    );
    sock.destroy();
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await eventually(() => !alive(), { timeoutMs: 5_000, intervalMs: 50 }).catch(() => undefined);
    expect(alive()).toBe(false);
  });

  itAsRoot(
    "refuses a request that is not JSON, or not a request, without running anything",
    async () => {
      const notJson = await exchange(socket, [encodeFrame(FRAME.request, "{argv")]);
      expect(notJson).toEqual({
        stdout: "",
        stderr: "sudo: malformed request\n",
        exit: { code: 1, signal: null },
      });
      const marker = path.join(dir, "ran");
      for (const bad of [
        JSON.stringify({ argv: ["touch", marker], user: "root", cwd: "/", env: {} }),
        JSON.stringify({
          ...JSON.parse(request({}).subarray(5).toString()),
          argv: ["touch", `${marker}\0`],
        }),
        JSON.stringify({
          ...JSON.parse(request({}).subarray(5).toString()),
          argv: ["touch", marker],
          extra: 1,
        }),
      ]) {
        const reply = await exchange(socket, [encodeFrame(FRAME.request, bad)]);
        expect(reply.stderr).toMatch(/^sudo: malformed request/);
        expect(reply.exit).toEqual({ code: 1, signal: null });
      }
      expect(fs.existsSync(marker)).toBe(false);
      const unknown = await exchange(socket, [request({ user: "no-such-user-here" })]);
      expect(unknown.stderr).toBe("sudo: unknown user no-such-user-here\n");
    },
  );

  itAsRoot("drops a connection that breaks the framing, before buffering it", async () => {
    const huge = Buffer.alloc(5);
    huge.writeUInt8(FRAME.request, 0);
    huge.writeUInt32BE(MAX_REQUEST_BYTES + 1, 1);
    for (const bytes of [
      [huge],
      [encodeFrame(FRAME.stdin, "before any request")],
      [request({ argv: ["sleep", "60"] }), request({})],
      [encodeFrame(99, "")],
    ]) {
      expect(await exchange(socket, bytes)).toEqual({ stdout: "", stderr: "" });
    }
  });
});

describe("sudo's options", () => {
  const parse = (args: string[]) => parseSudoArgs(args, "/home/user", { FOO: "1" });

  it("stops reading options at the command", () => {
    expect(parse(["ls", "-l", "-u", "x"])).toMatchObject({
      argv: ["ls", "-l", "-u", "x"],
      user: "root",
    });
    expect(parse(["-u", "nobody", "-E", "--", "-x"])).toMatchObject({
      argv: ["-x"],
      user: "nobody",
      preserveEnv: true,
    });
    expect(parse(["-n", "-i"])).toMatchObject({ argv: [], login: true, cwd: "/home/user" });
  });

  it("says what is wrong with options it does not take, or a missing command", () => {
    expect(parse(["-Z", "ls"])).toEqual({ error: expect.stringMatching(/-Z[\s\S]*usage: sudo/) });
    expect(parse(["-u"])).toEqual({ error: expect.stringMatching(/usage: sudo/) });
    expect(parse([])).toEqual({ error: expect.stringMatching(/^usage: sudo/) });
  });
});
