/**
 * The typed sandbox client against the REAL local service: the Filesystem RPCs
 * (make, stat, list, move, remove) and directory watches.
 */
import type { FilesystemEvent, SandboxClient } from "../../src/client/sandbox";
import { failureOf, useSandboxClientFixture } from "./sandbox-client.support";
import { eventually } from "../support/eventually";

jest.setTimeout(120_000);

let client: SandboxClient;

useSandboxClientFixture((fx) => ({ client } = fx));

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
    await eventually(
      async () => {
        events = events.concat(await client.getWatcherEvents(id));
        return events.some((e) => e.name === "p.txt");
      },
      { timeoutMs: 5_000 },
    );
    expect(events).toContainEqual(expect.objectContaining({ name: "p.txt", type: "create" }));
    expect(await client.getWatcherEvents(id)).toEqual([]);
    await client.removeWatcher(id);
    const gone = await failureOf(client.getWatcherEvents(id));
    expect(gone.code).toBe("not_found");
  });
});
