import { Code, ConnectError } from "@connectrpc/connect";
import { EventType, FileType } from "../../gen/envd/filesystem/filesystem_pb";
import { startTestSandbox, type TestSandbox } from "../../../test/support/agent/bwrap-sandbox";
import { agentClients } from "../../../test/support/agent/clients";
import { collect } from "../../../test/support/agent/collect";
import { eventually } from "../../../test/support/eventually";
import { MAX_ENTRIES } from "./list-dir";

// One sandbox for the file: starting one costs a Node boot; every test works in its own directory.
let sbx: TestSandbox;
let clients: ReturnType<typeof agentClients>;
const asUser = { headers: { Authorization: `Basic ${Buffer.from("user:").toString("base64")}` } };
beforeAll(async () => {
  sbx = await startTestSandbox();
  clients = agentClients(sbx.socketPath);
});
afterAll(async () => {
  await sbx?.stop();
});

async function sh(cmd: string): Promise<string> {
  const s = await collect(
    clients.process.start(
      { process: { cmd: "/bin/bash", args: ["-c", cmd] }, stdin: false },
      asUser,
    ),
  );
  if (s.end?.exitCode !== 0) throw new Error(`${cmd}: ${s.stderr}`);
  return s.stdout;
}

async function codeOf(p: Promise<unknown>): Promise<Code | undefined> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  return err instanceof ConnectError ? err.code : undefined;
}

describe("Filesystem.Stat", () => {
  it("describes a file from lstat, resolving relative paths against HOME", async () => {
    await sh("printf abc > stat.txt && chmod 640 stat.txt");
    const { entry } = await clients.fs.stat({ path: "stat.txt" }, asUser);
    expect(entry).toMatchObject({
      name: "stat.txt",
      type: FileType.FILE,
      path: "/home/user/stat.txt",
      size: 3n,
      mode: 0o640,
      permissions: "-rw-r-----",
      owner: "user",
      group: "user",
    });
    expect(entry?.modifiedTime?.seconds).toBeGreaterThan(0n);
  });

  it("reports a symlink with its target's type and the resolved target", async () => {
    await sh("mkdir -p linkdir && ln -sfn linkdir link && ln -sfn /nowhere broken");
    const { entry } = await clients.fs.stat({ path: "~/link" }, asUser);
    expect(entry).toMatchObject({
      type: FileType.DIRECTORY,
      symlinkTarget: "/home/user/linkdir",
      permissions: "Lrwxrwxrwx",
    });
    const broken = await clients.fs.stat({ path: "broken" }, asUser);
    expect(broken.entry?.type).toBe(FileType.UNSPECIFIED);
  });

  it("fails when the path does not exist", async () => {
    expect(await codeOf(clients.fs.stat({ path: "/no/such" }))).toBe(Code.NotFound);
  });
});

describe("Filesystem.MakeDir", () => {
  it("creates missing parents owned by the user", async () => {
    const { entry } = await clients.fs.makeDir({ path: "md/a/b" }, asUser);
    expect(entry).toMatchObject({
      path: "/home/user/md/a/b",
      type: FileType.DIRECTORY,
      owner: "user",
      permissions: "drwxr-xr-x",
    });
    expect(await sh("stat -c %U md md/a")).toBe("user\nuser\n");
  });

  it("fails when the directory already exists, or a file is there", async () => {
    await clients.fs.makeDir({ path: "md2" }, asUser);
    expect(await codeOf(clients.fs.makeDir({ path: "md2" }, asUser))).toBe(Code.AlreadyExists);
    await sh("touch md2file");
    expect(await codeOf(clients.fs.makeDir({ path: "md2file" }, asUser))).toBe(
      Code.InvalidArgument,
    );
  });
});

describe("Filesystem.Move and Remove", () => {
  it("moves into new parent directories and returns the destination entry", async () => {
    await sh("echo x > mv-src");
    const { entry } = await clients.fs.move(
      { source: "mv-src", destination: "mv/deep/dst" },
      asUser,
    );
    expect(entry).toMatchObject({ path: "/home/user/mv/deep/dst", size: 2n });
    expect(await codeOf(clients.fs.stat({ path: "mv-src" }, asUser))).toBe(Code.NotFound);
  });

  it("fails when the source is missing", async () => {
    expect(await codeOf(clients.fs.move({ source: "nope", destination: "x" }, asUser))).toBe(
      Code.NotFound,
    );
  });

  it("removes recursively and treats a missing path as success", async () => {
    await sh("mkdir -p rm/a && touch rm/a/f");
    await clients.fs.remove({ path: "rm" }, asUser);
    await clients.fs.remove({ path: "rm" }, asUser);
    expect(await codeOf(clients.fs.stat({ path: "rm" }, asUser))).toBe(Code.NotFound);
  });
});

describe("Filesystem.ListDir", () => {
  it("lists to the given depth in pre-order, sorted, without the root", async () => {
    await sh("mkdir -p ls/b/inner ls/a && touch ls/c ls/b/inner/deep ls/b/f");
    const one = await clients.fs.listDir({ path: "ls", depth: 0 }, asUser);
    expect(one.entries.map((e) => e.name)).toEqual(["a", "b", "c"]);
    const two = await clients.fs.listDir({ path: "ls", depth: 2 }, asUser);
    expect(two.entries.map((e) => e.path)).toEqual([
      "/home/user/ls/a",
      "/home/user/ls/b",
      "/home/user/ls/b/f",
      "/home/user/ls/b/inner",
      "/home/user/ls/c",
    ]);
  });

  it("follows a symlink at the root and builds paths from the requested path", async () => {
    await sh(
      "mkdir -p lsreal && touch lsreal/x && ln -sfn lsreal lslink && ln -sfn lsreal lsreal/self",
    );
    const res = await clients.fs.listDir({ path: "lslink", depth: 3 }, asUser);
    expect(res.entries.map((e) => e.path)).toEqual([
      "/home/user/lslink/self",
      "/home/user/lslink/x",
    ]);
  });

  it("reports a broken link inside the walk with its own path as target, not entering links", async () => {
    await sh("mkdir -p lsb/d && ln -sfn /nowhere lsb/broken && ln -sfn / lsb/d/root");
    const res = await clients.fs.listDir({ path: "lsb", depth: 5 }, asUser);
    expect(res.entries.map((e) => [e.path, e.symlinkTarget ?? ""])).toEqual([
      ["/home/user/lsb/broken", "/home/user/lsb/broken"],
      ["/home/user/lsb/d", ""],
      ["/home/user/lsb/d/root", "/"],
    ]);
  });

  it("refuses a listing of more entries than it answers with, saying what to list instead", async () => {
    await sh(`mkdir -p lsmany/sub && cd lsmany/sub && seq ${MAX_ENTRIES} | xargs touch`);
    // At depth 1 the listing is one entry; one level deeper it is one too many.
    expect((await clients.fs.listDir({ path: "lsmany", depth: 1 }, asUser)).entries).toHaveLength(
      1,
    );
    const err = await clients.fs.listDir({ path: "lsmany", depth: 2 }, asUser).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.ResourceExhausted);
    expect((err as ConnectError).rawMessage).toMatch(
      /more than 10000 entries: list a subdirectory or pass a smaller depth/,
    );
  });

  it("fails when the path is missing or not a directory", async () => {
    expect(await codeOf(clients.fs.listDir({ path: "nope", depth: 1 }, asUser))).toBe(
      Code.NotFound,
    );
    await sh("touch lsfile");
    expect(await codeOf(clients.fs.listDir({ path: "lsfile", depth: 1 }, asUser))).toBe(
      Code.InvalidArgument,
    );
  });
});

describe("Filesystem.WatchDir", () => {
  it("sends start, then create and write events with relative names", async () => {
    await sh("mkdir -p w/sub");
    const ac = new AbortController();
    const stream = clients.fs.watchDir(
      { path: "w", recursive: true, includeEntry: true },
      { ...asUser, signal: ac.signal },
    );
    const it = stream[Symbol.asyncIterator]();
    expect((await it.next()).value.event.case).toBe("start");
    await sh(
      "echo hi > w/new.txt; echo more >> w/sub/../sub/x.txt; sleep 0.2; echo again >> w/new.txt",
    );
    const seen: { name: string; type: EventType; hasEntry: boolean }[] = [];
    while (
      !seen.some((e) => e.name === "new.txt" && e.type === EventType.WRITE) ||
      !seen.some((e) => e.name === "sub/x.txt")
    ) {
      const { value } = await it.next();
      if (value.event.case === "filesystem") {
        seen.push({
          name: value.event.value.name,
          type: value.event.value.type,
          hasEntry: value.event.value.entry !== undefined,
        });
      }
    }
    ac.abort();
    expect(seen).toContainEqual({ name: "new.txt", type: EventType.CREATE, hasEntry: true });
    expect(seen).toContainEqual({ name: "new.txt", type: EventType.WRITE, hasEntry: true });
  });

  it("fails when the path is not a directory", async () => {
    await sh("touch wfile");
    const err = await collect(clients.fs.watchDir({ path: "wfile" }, asUser) as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
  });
});

describe("Filesystem watchers", () => {
  it("buffers events until polled, reports a deletion once, clears them, and forgets removed watchers", async () => {
    await sh("mkdir -p pw");
    const { watcherId } = await clients.fs.createWatcher({ path: "pw" }, asUser);
    let events: { name: string; type: EventType }[] = [];
    const poll = async () => {
      const batch = (await clients.fs.getWatcherEvents({ watcherId })).events;
      events = events.concat(batch.map((e) => ({ name: e.name, type: e.type })));
      return batch;
    };
    const names = Array.from({ length: 20 }, (_, i) => `f${i}`);
    await sh(`cd pw && for f in ${names.join(" ")}; do echo one > $f; done`);
    await eventually(async () => {
      await poll();
      return names.every((n) => events.some((e) => e.name === n && e.type === EventType.CREATE));
    });
    events = [];
    // Writes just before the deletions: their change events are handled after
    // the files are gone, and must not add REMOVEs of their own.
    await sh(
      `cd pw && for f in ${names.join(" ")}; do echo two >> $f; done; rm ${names.join(" ")}`,
    );
    // Drained once the removal was seen and a later poll brings nothing new. Polls are
    // 100 ms apart because the watcher holds a vanished name 50 ms to pair a rename.
    await eventually(
      async () => (await poll()).length === 0 && events.some((e) => e.type === EventType.REMOVE),
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    // One deletion, one event, as envd reports it, and each name's last one.
    for (const name of names) {
      const own = events.filter((e) => e.name === name);
      expect({ name, removes: own.filter((e) => e.type === EventType.REMOVE).length }).toEqual({
        name,
        removes: 1,
      });
      expect(own.at(-1)).toEqual({ name, type: EventType.REMOVE });
    }
    expect((await clients.fs.getWatcherEvents({ watcherId })).events).toEqual([]);
    await clients.fs.removeWatcher({ watcherId });
    expect(await codeOf(clients.fs.getWatcherEvents({ watcherId }))).toBe(Code.NotFound);
  });
});
