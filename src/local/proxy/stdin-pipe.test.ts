/**
 * The service's opening of a pipe an agent names (stdin-pipe.ts), against
 * real kernel objects: this process stands in for the agent, its own
 * `/proc/<pid>` directory held as the runtime holds the agent's, and the
 * descriptors named are ones it opened, with its own uid standing in for the
 * sandbox's. Whatever the number names, only a FIFO with the named inode,
 * owned by the sandbox, with a reader, is opened for writing.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { openStdinPipe } from "./stdin-pipe";

let dir: string;
let self: number;
const opened: number[] = [];
/** Opens `file` with `flags` for the test, closed after it. */
function open(file: string, flags: number): number {
  const fd = fs.openSync(file, flags);
  opened.push(fd);
  return fd;
}
/** A FIFO in the test's directory, with a reader: [its reader's fd, a writer's fd]. */
function fifo(name: string): [number, number] {
  const file = path.join(dir, name);
  execFileSync("mkfifo", [file]);
  const reader = open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  return [reader, open(file, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)];
}
const answerFor = (fd: number) => ({ fd, ino: fs.fstatSync(fd).ino });
/** The host ids of the stand-in sandbox: this process's own uid, which owns what it makes. */
const ours = { first: process.getuid?.() ?? 0, count: 1 };

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "direct-stdin-"));
  self = open(`/proc/${process.pid}`, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
});
afterAll(() => {
  for (const fd of opened) fs.closeSync(fd);
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("openStdinPipe", () => {
  it("opens a write end of the pipe the descriptor names, whose bytes its reader gets", () => {
    const [reader, writer] = fifo("stdin");
    const own = openStdinPipe(self, ours, answerFor(writer));
    expect(own).toBeDefined();
    opened.push(own as number);
    expect(own).not.toBe(writer);
    fs.writeSync(own as number, "through the service's own end");
    const got = Buffer.alloc(64);
    const n = fs.readSync(reader, got);
    expect(got.subarray(0, n).toString()).toBe("through the service's own end");
  });

  it("refuses a pipe whose inode is not the one named", () => {
    const [, writer] = fifo("other");
    const [, named] = fifo("named");
    expect(openStdinPipe(self, ours, { fd: writer, ino: fs.fstatSync(named).ino })).toBeUndefined();
  });

  it("never opens a regular file, a directory, a device or a socket the number names", async () => {
    const file = path.join(dir, "host-file");
    fs.writeFileSync(file, "unchanged");
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(path.join(dir, "sock"), resolve));
    const client = net.connect(path.join(dir, "sock"));
    await new Promise((resolve) => client.once("connect", resolve));
    try {
      const socketFd = (client as unknown as { _handle: { fd: number } })._handle.fd;
      for (const fd of [
        open(file, fs.constants.O_RDONLY),
        open(file, fs.constants.O_WRONLY | fs.constants.O_APPEND),
        open(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY),
        open("/dev/null", fs.constants.O_WRONLY),
        socketFd,
      ]) {
        expect({ fd, own: openStdinPipe(self, ours, answerFor(fd)) }).toEqual({
          fd,
          own: undefined,
        });
      }
      expect(fs.readFileSync(file, "utf8")).toBe("unchanged");
    } finally {
      client.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("refuses a pipe no process reads any more, and a number that names nothing", () => {
    const [reader, writer] = fifo("unread");
    const answer = answerFor(writer);
    fs.closeSync(opened.splice(opened.indexOf(reader), 1)[0]);
    expect(openStdinPipe(self, ours, answer)).toBeUndefined();
    expect(openStdinPipe(self, ours, { fd: 1_000_000, ino: answer.ino })).toBeUndefined();
  });

  it("refuses a pipe no process of the sandbox made: one it holds from outside, owned by another uid", () => {
    const [reader, writer] = fifo("from-outside");
    const answer = answerFor(reader);
    const others = { first: ours.first + 100_000, count: 65_536 };
    expect(openStdinPipe(self, others, answer)).toBeUndefined();
    expect(openStdinPipe(self, others, answerFor(writer))).toBeUndefined();
    // The same pipe is taken with the sandbox's own ids.
    const own = openStdinPipe(self, ours, answer);
    expect(own).toBeDefined();
    opened.push(own as number);
  });
});
