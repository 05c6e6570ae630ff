import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { SandboxIacError } from "../../errors";
import { eventually } from "../../../test/support/eventually";
import { execHost } from "./exec";
import { hostSpawnerPid, spawnHost } from "./host-spawner";

jest.setTimeout(60_000);

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "host-spawner-"));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** State and parent pid of `pid`, from /proc/<pid>/stat; undefined once it is gone. */
function statOf(pid: number): { state: string; ppid: number } | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, { encoding: "utf8", flag: "r" });
  } catch {
    return undefined;
  }
  const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state, ppid: Number(ppid) };
}

/** True while `pid` runs (not gone, not a zombie waiting for its new parent to reap it). */
function running(pid: number): boolean {
  const s = statOf(pid);
  return s !== undefined && s.state !== "Z";
}

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
});
