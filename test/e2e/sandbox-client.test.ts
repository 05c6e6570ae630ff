/**
 * The typed sandbox client against the REAL local service: a secure sandbox
 * created through the control API, every Process and Filesystem RPC, file
 * transfer (streamed, gzip), compose, metrics, envs, signed URLs, errors.
 */
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { resolveConfig } from "../../src/config";
import { SandboxIacError } from "../../src/errors";
import {
  createSandboxClient,
  type FilesystemEvent,
  type ProcessEvent,
  type SandboxClient,
} from "../../src/client/sandbox";
import { commandResultOf } from "../../src/client/sandbox/errors";
import { startLocalService, type LocalService } from "../../src/local";
import { agentBundleDir, createSandbox, tempDataDir } from "../local/support";

jest.setTimeout(120_000);

let svc: LocalService;
let dataDir: string;
let workDir: string;
let sandboxID: string;
let token: string;
let client: SandboxClient;

beforeAll(async () => {
  dataDir = tempDataDir();
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-client-e2e-"));
  // SANDBOX_CLIENT_E2E_LOG=<file> keeps the service's log for debugging.
  const logFile = process.env.SANDBOX_CLIENT_E2E_LOG;
  svc = await startLocalService({
    port: 0,
    dataDir,
    agentBundleDir: await agentBundleDir(),
    log: logFile
      ? (line) => fs.appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`)
      : undefined,
  });
  const sbx = await createSandbox(svc, { secure: true });
  sandboxID = sbx.sandboxID;
  if (!sbx.envdAccessToken) throw new Error("a secure sandbox must come with an envdAccessToken");
  token = sbx.envdAccessToken;
  client = createSandboxClient({
    sandboxID,
    accessToken: token,
    config: resolveConfig({
      apiUrl: svc.apiUrl,
      sandboxUrl: svc.sandboxUrl,
      apiKey: svc.apiKey,
      env: {},
    }),
  });
});

afterAll(async () => {
  await svc?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(workDir, { recursive: true, force: true });
});

async function collect(
  events: AsyncIterable<ProcessEvent>,
): Promise<{ out: string; end: ProcessEvent | undefined; types: string[] }> {
  let out = "";
  let end: ProcessEvent | undefined;
  const types: string[] = [];
  for await (const e of events) {
    types.push(e.type);
    if (e.type === "end") end = e;
    else out += Buffer.from(e.data).toString("utf8");
  }
  return { out, end, types };
}

async function failureOf(p: Promise<unknown>): Promise<SandboxIacError> {
  try {
    await p;
  } catch (err) {
    if (SandboxIacError.is(err)) return err;
    throw err;
  }
  throw new Error("expected the call to fail");
}

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
    let alive = true;
    for (let i = 0; i < 50 && alive; i++) {
      alive = (await client.list()).some((p) => p.args.some((a) => a.includes(marker)));
      if (alive) await new Promise((r) => setTimeout(r, 100));
    }
    expect(alive).toBe(false);
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

describe("filesystem", () => {
  it("makes a directory, then answers false when it exists", async () => {
    expect(await client.makeDir("fs-test/a/b")).toBe(true);
    expect(await client.makeDir("/home/user/fs-test/a/b")).toBe(false);
    const entry = await client.stat("fs-test/a");
    expect(entry).toMatchObject({
      name: "a",
      type: "dir",
      path: "/home/user/fs-test/a",
      owner: "user",
    });
    expect(entry.modifiedTime).toBeInstanceOf(Date);
  });

  it("stats a file with its size as a number and its mode bits", async () => {
    await client.uploadBytes("fs-test/hello.txt", "hello");
    const entry = await client.stat("/home/user/fs-test/hello.txt");
    expect(entry).toMatchObject({ type: "file", size: 5, mode: 0o644, permissions: "-rw-r--r--" });
    expect(await client.exists("fs-test/hello.txt")).toBe(true);
    expect(await client.exists("fs-test/nope.txt")).toBe(false);
  });

  it("lists a directory to a depth, in pre-order", async () => {
    await client.uploadBytes("fs-list/x/deep.txt", "d");
    await client.uploadBytes("fs-list/top.txt", "t");
    const shallow = await client.listDir("fs-list");
    expect(shallow.map((e) => e.name)).toEqual(["top.txt", "x"]);
    const deep = await client.listDir("fs-list", { depth: 2 });
    expect(deep.map((e) => e.path)).toEqual([
      "/home/user/fs-list/top.txt",
      "/home/user/fs-list/x",
      "/home/user/fs-list/x/deep.txt",
    ]);
  });

  it("moves a file, creating the destination's parents", async () => {
    await client.uploadBytes("fs-move/src.txt", "moved");
    const entry = await client.move("fs-move/src.txt", "fs-move/new/dir/dst.txt");
    expect(entry.path).toBe("/home/user/fs-move/new/dir/dst.txt");
    expect(await client.readText("fs-move/new/dir/dst.txt")).toBe("moved");
    expect(await client.exists("fs-move/src.txt")).toBe(false);
  });

  it("removes a tree, and removing a missing path succeeds", async () => {
    await client.uploadBytes("fs-rm/a/b.txt", "x");
    await client.remove("fs-rm");
    expect(await client.exists("fs-rm")).toBe(false);
    await expect(client.remove("fs-rm")).resolves.toBeUndefined();
  });

  it("fails with not_found for a missing path and invalid_argument for listing a file", async () => {
    const missing = await failureOf(client.stat("/no/such/file"));
    expect(missing).toMatchObject({
      code: "not_found",
      resourceId: "/no/such/file",
      operation: "filesystem.stat",
    });
    await client.uploadBytes("fs-test/file.txt", "f");
    const notDir = await failureOf(client.listDir("fs-test/file.txt"));
    expect(notDir.code).toBe("invalid_argument");
  });

  it("watches a directory and reports writes after the watch started", async () => {
    await client.makeDir("watched");
    const watch = await client.watchDir("watched", { recursive: true, includeEntry: true });
    const seen: FilesystemEvent[] = [];
    const done = (async () => {
      for await (const event of watch) {
        seen.push(event);
        if (event.name === "sub/b.txt" && event.type === "write") break;
      }
    })();
    await client.uploadBytes("watched/sub/b.txt", "content");
    await done;
    watch.close();
    expect(seen).toContainEqual(expect.objectContaining({ name: "sub/b.txt", type: "write" }));
    const withEntry = seen.find((e) => e.name === "sub/b.txt" && e.entry);
    expect(withEntry?.entry?.path).toBe("/home/user/watched/sub/b.txt");
  });

  it("ends a watch quietly on close", async () => {
    await client.makeDir("watched-close");
    const watch = await client.watchDir("watched-close");
    const iteration = (async () => {
      const names: string[] = [];
      for await (const e of watch) names.push(e.name);
      return names;
    })();
    watch.close();
    await expect(iteration).resolves.toEqual([]);
  });

  it("fails with not_found when watching a missing directory", async () => {
    const err = await failureOf(client.watchDir("/no/such/dir"));
    expect(err.code).toBe("not_found");
  });

  it("buffers events in a polling watcher until they are fetched", async () => {
    await client.makeDir("polled");
    const id = await client.createWatcher("polled");
    await client.uploadBytes("polled/p.txt", "p");
    let events: FilesystemEvent[] = [];
    for (let i = 0; i < 50 && !events.some((e) => e.name === "p.txt"); i++) {
      events = events.concat(await client.getWatcherEvents(id));
      if (!events.some((e) => e.name === "p.txt")) await new Promise((r) => setTimeout(r, 100));
    }
    expect(events).toContainEqual(expect.objectContaining({ name: "p.txt", type: "create" }));
    expect(await client.getWatcherEvents(id)).toEqual([]);
    await client.removeWatcher(id);
    const gone = await failureOf(client.getWatcherEvents(id));
    expect(gone.code).toBe("not_found");
  });
});

describe("file transfer", () => {
  const SIZE = 64 * 1024 * 1024;
  let bigFile: string;
  let bigSha: string;

  beforeAll(async () => {
    bigFile = path.join(workDir, "big.bin");
    const hash = createHash("sha256");
    const out = fs.createWriteStream(bigFile);
    for (let written = 0; written < SIZE; written += 1024 * 1024) {
      const chunk = randomBytes(1024 * 1024);
      hash.update(chunk);
      if (!out.write(chunk)) await new Promise<void>((r) => out.once("drain", () => r()));
    }
    await new Promise<void>((resolve, reject) => {
      out.once("error", reject);
      out.end(() => resolve());
    });
    bigSha = hash.digest("hex");
  });

  /** A fetch that passes everything through and records what went over the wire. */
  function observingFetch() {
    const seen = {
      requestBodyIsStream: false,
      maxChunk: 0,
      chunks: 0,
      requestEncoding: "",
      responseEncoding: "",
    };
    const observed: typeof fetch = async (input, init) => {
      seen.requestEncoding = new Headers(init?.headers).get("content-encoding") ?? "";
      let body = init?.body;
      if (body instanceof ReadableStream) {
        seen.requestBodyIsStream = true;
        body = body.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
              seen.chunks++;
              seen.maxChunk = Math.max(seen.maxChunk, chunk.byteLength);
              controller.enqueue(chunk);
            },
          }),
        );
      }
      const res = await fetch(input, { ...init, body });
      seen.responseEncoding = res.headers.get("content-encoding") ?? "";
      return res;
    };
    return { seen, observed };
  }

  function clientWith(fetchImpl: typeof fetch): SandboxClient {
    return createSandboxClient({
      sandboxID,
      accessToken: token,
      baseUrl: svc.sandboxUrl,
      fetch: fetchImpl,
    });
  }

  async function sha256Of(file: string): Promise<string> {
    const hash = createHash("sha256");
    for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
    return hash.digest("hex");
  }

  it("streams a 64 MiB upload from disk in small chunks and downloads it back intact", async () => {
    const { seen, observed } = observingFetch();
    const c = clientWith(observed);
    const written = await c.uploadFile(bigFile, "big/big.bin");
    expect(written).toMatchObject({ path: "/home/user/big/big.bin", name: "big.bin" });
    // The body was a stream read in 1 MiB chunks, never one 64 MiB buffer.
    // (That reading follows the server's pace is shown in files-transfer.test.ts;
    // process memory is no measure here: freed chunks wait for the GC.)
    expect(seen.requestBodyIsStream).toBe(true);
    expect(seen.maxChunk).toBeLessThanOrEqual(1024 * 1024);
    expect(seen.chunks).toBeGreaterThanOrEqual(SIZE / (1024 * 1024));
    expect((await c.stat("big/big.bin")).size).toBe(SIZE);

    const target = path.join(workDir, "big.down");
    await c.downloadFile("big/big.bin", target);
    expect(fs.statSync(target).size).toBe(SIZE);
    expect(await sha256Of(target)).toBe(bigSha);
    const inSandbox = await c.run("sha256sum big/big.bin");
    expect(inSandbox.stdout.split(" ")[0]).toBe(bigSha);
  });

  it("compresses an upload with gzip on the fly", async () => {
    const { seen, observed } = observingFetch();
    const local = path.join(workDir, "text.txt");
    fs.writeFileSync(local, "compress me\n".repeat(10_000));
    await clientWith(observed).uploadFile(local, "gz/text.txt", { gzip: true });
    expect(seen.requestEncoding).toBe("gzip");
    expect(await client.readText("gz/text.txt")).toBe("compress me\n".repeat(10_000));
  });

  it("downloads with gzip and writes the decoded content", async () => {
    const { seen, observed } = observingFetch();
    const target = path.join(workDir, "gz.down");
    await clientWith(observed).downloadFile("gz/text.txt", target, { gzip: true });
    expect(seen.responseEncoding).toBe("gzip");
    expect(fs.readFileSync(target, "utf8")).toBe("compress me\n".repeat(10_000));
  });

  it("sets the mode of an uploaded file", async () => {
    const local = path.join(workDir, "script.sh");
    fs.writeFileSync(local, "#!/bin/sh\necho ran\n");
    await client.uploadFile(local, "bin/script.sh", { mode: 0o755 });
    expect((await client.stat("bin/script.sh")).mode).toBe(0o755);
    expect((await client.run("./bin/script.sh")).stdout).toBe("ran\n");
  });

  it("reads small files as bytes and text", async () => {
    await client.uploadBytes("small/b.bin", new Uint8Array([0, 1, 2, 255]));
    expect(Array.from(await client.readBytes("small/b.bin"))).toEqual([0, 1, 2, 255]);
    await client.uploadBytes("small/t.txt", "héllo");
    expect(await client.readText("small/t.txt")).toBe("héllo");
  });

  it("fails with not_found when reading or downloading a missing file", async () => {
    const err = await failureOf(client.readText("no/such.txt"));
    expect(err).toMatchObject({
      code: "not_found",
      status: 404,
      operation: "files.read",
      resourceId: "no/such.txt",
    });
    const down = await failureOf(client.downloadFile("no/such.txt", path.join(workDir, "never")));
    expect(down.code).toBe("not_found");
  });

  it("composes parts in order into one file and deletes the parts", async () => {
    await client.uploadBytes("parts/1", "alpha-");
    await client.uploadBytes("parts/2", "beta-");
    await client.uploadBytes("parts/3", "gamma");
    const entry = await client.compose(
      ["parts/1", "/home/user/parts/2", "parts/3"],
      "parts/all.txt",
    );
    expect(entry).toMatchObject({ path: "/home/user/parts/all.txt", name: "all.txt" });
    expect(await client.readText("parts/all.txt")).toBe("alpha-beta-gamma");
    expect(await client.exists("parts/1")).toBe(false);
    const missing = await failureOf(client.compose(["parts/none"], "parts/x"));
    expect(missing.code).toBe("not_found");
  });
});

describe("sandbox reads", () => {
  it("reports metrics in camelCase", async () => {
    const m = await client.metrics();
    expect(m.cpuCount).toBeGreaterThan(0);
    expect(m.memTotal).toBeGreaterThan(0);
    expect(m.diskTotal).toBeGreaterThan(0);
    expect(m.timestamp.getFullYear()).toBeGreaterThanOrEqual(2024);
  });

  it("reads envd's global environment", async () => {
    const envs = await client.envs();
    expect(envs).toMatchObject({ E2B_SANDBOX: "true", E2B_SANDBOX_ID: sandboxID });
  });

  it("reports the sandbox healthy", async () => {
    expect(await client.health()).toBe(true);
  });
});

describe("security", () => {
  it("fails with unauthenticated without the access token, without showing it", async () => {
    const anonymous = createSandboxClient({ sandboxID, baseUrl: svc.sandboxUrl });
    const err = await failureOf(anonymous.stat("/home/user"));
    expect(err.code).toBe("unauthenticated");
    const run = await failureOf(anonymous.run("true"));
    expect(run.code).toBe("unauthenticated");
    expect(run.message).not.toContain(token);
  });

  it("downloads through a signed URL with no headers at all", async () => {
    await client.uploadBytes("signed/a.txt", "signed content");
    const url = client.downloadUrl("/home/user/signed/a.txt", { expiresInSeconds: 120 });
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("signed content");
  });

  it("uploads through a signed URL", async () => {
    const url = client.uploadUrl("/home/user/signed/up.txt", { user: "user" });
    const res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/octet-stream" },
      body: "via url",
    });
    expect(res.status).toBe(200);
    expect(await client.readText("signed/up.txt")).toBe("via url");
  });

  it("fails when a signed URL is used for another path", async () => {
    const url = new URL(client.downloadUrl("/home/user/signed/a.txt"));
    url.searchParams.set("path", "/home/user/signed/up.txt");
    // Routed by header: without it a shared URL cannot tell which sandbox a bad signature was for.
    const res = await fetch(url, { headers: { "E2b-Sandbox-Id": sandboxID } });
    expect(res.status).toBe(401);
  });
});
