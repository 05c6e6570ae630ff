import { createHash } from "node:crypto";
import {
  mkdtempSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { HashCache, defaultCacheDir } from "./hash-cache";
import { buildManifest, type Manifest } from "./manifest";

let dir: string;
let cacheDir: string;
let root: string;

/** One hour ago: older than any cache write of the test, so not racily clean. */
const PAST = new Date(Date.now() - 3_600_000);

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "prov-hash-cache-"));
  cacheDir = path.join(dir, "cache");
  root = path.join(dir, "src");
  mkdirSync(path.join(root, "sub"), { recursive: true });
  for (const [rel, content] of Object.entries({
    "a.txt": "alpha",
    "b.txt": "bravo",
    "sub/c.txt": "charlie",
  })) {
    writeFileSync(path.join(root, rel), content);
    utimesSync(path.join(root, rel), PAST, PAST);
  }
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Builds the manifest of `root` with the cache as a new run would load it. */
async function run(): Promise<{ manifest: Manifest; cache: HashCache }> {
  const cache = HashCache.open(dir, cacheDir);
  const manifest = await buildManifest([{ source: root, destination: "/dst" }], dir, { cache });
  return { manifest, cache };
}

function sha(content: string): string {
  return createHash("sha256").update(content).digest("hex");
}

function shaOf(manifest: Manifest, remotePath: string): string | undefined {
  return manifest.files.find((f) => f.remotePath === remotePath)?.sha256;
}

describe("hash cache of the Provisioner's manifest", () => {
  it("hashes every file on the first run and none on the next when nothing changed", async () => {
    const first = await run();
    expect({ hits: first.cache.hits, misses: first.cache.misses }).toEqual({ hits: 0, misses: 3 });

    const second = await run();
    expect({ hits: second.cache.hits, misses: second.cache.misses }).toEqual({
      hits: 3,
      misses: 0,
    });
    expect(second.manifest).toEqual(first.manifest);
    expect(shaOf(second.manifest, "/dst/sub/c.txt")).toBe(sha("charlie"));
  });

  it("takes a hit's hash from the cache without reading the file", async () => {
    await run();
    // A recorded hash that no content has: only the cache can be its source.
    const file = HashCache.open(dir, cacheDir).file!;
    const body = JSON.parse(readFileSync(file, "utf8")) as {
      entries: Record<string, [string, string, string]>;
    };
    body.entries[path.join(root, "a.txt")][1] = "f".repeat(64);
    writeFileSync(file, JSON.stringify(body));

    const { manifest, cache } = await run();
    expect(cache.hits).toBe(3);
    expect(shaOf(manifest, "/dst/a.txt")).toBe("f".repeat(64));
  });

  it("finds an edit that keeps the size and restores the mtime", async () => {
    await run();
    // GIVEN a same-size edit whose mtime is set back to what it was
    const file = path.join(root, "b.txt");
    writeFileSync(file, "BRAVO");
    utimesSync(file, PAST, PAST);
    expect(statSync(file).size).toBe(5);

    // THEN the ctime differs, the file is hashed again and the new content counts
    const { manifest, cache } = await run();
    expect({ hits: cache.hits, misses: cache.misses }).toEqual({ hits: 2, misses: 1 });
    expect(shaOf(manifest, "/dst/b.txt")).toBe(sha("BRAVO"));
  });

  it("re-hashes a racily clean entry: one whose mtime is not older than the cache", async () => {
    // GIVEN a file whose mtime is after any cache write (as a file written in the
    // same clock tick as the cache would be)
    const file = path.join(root, "a.txt");
    const future = new Date(Date.now() + 3_600_000);
    utimesSync(file, future, future);
    await run();

    // WHEN nothing changes THEN that file is still hashed, every run, while the others hit
    for (let i = 0; i < 2; i++) {
      const { manifest, cache } = await run();
      expect({ hits: cache.hits, misses: cache.misses }).toEqual({ hits: 2, misses: 1 });
      expect(shaOf(manifest, "/dst/a.txt")).toBe(sha("alpha"));
    }
  });

  it("treats a corrupt cache file as empty", async () => {
    await run();
    const file = HashCache.open(dir, cacheDir).file!;
    writeFileSync(file, "{not json");
    const { manifest, cache } = await run();
    expect({ hits: cache.hits, misses: cache.misses }).toEqual({ hits: 0, misses: 3 });
    expect(shaOf(manifest, "/dst/a.txt")).toBe(sha("alpha"));
    // and the next run has a good cache again
    expect((await run()).cache.hits).toBe(3);
  });

  it("hashes a file whose entry is malformed, and stores a good entry for it", async () => {
    await run();
    const file = HashCache.open(dir, cacheDir).file!;
    const body = JSON.parse(readFileSync(file, "utf8")) as { entries: Record<string, unknown> };
    body.entries[path.join(root, "a.txt")] = ["only", "two"];
    body.entries[path.join(root, "b.txt")] = { key: "not", sha256: "an array" };
    writeFileSync(file, JSON.stringify(body));
    utimesSync(file, new Date(), new Date());

    const { manifest, cache } = await run();
    expect({ hits: cache.hits, misses: cache.misses }).toEqual({ hits: 1, misses: 2 });
    expect(shaOf(manifest, "/dst/a.txt")).toBe(sha("alpha"));
    expect(shaOf(manifest, "/dst/b.txt")).toBe(sha("bravo"));
    expect((await run()).cache.hits).toBe(3);
  });

  it("drops the entries of deleted and changed files on save, keeping other resources' files", async () => {
    await run();
    // GIVEN c.txt deleted and b.txt changed after they were recorded
    rmSync(path.join(root, "sub", "c.txt"));
    writeFileSync(path.join(root, "b.txt"), "BRAVO, changed");
    utimesSync(path.join(root, "b.txt"), PAST, PAST);

    // WHEN a run over a.txt alone (another resource of the same base directory) saves the cache
    const cache = HashCache.open(dir, cacheDir);
    await buildManifest([{ source: path.join(root, "a.txt"), destination: "/a" }], dir, {
      cache,
    });
    expect({ hits: cache.hits, misses: cache.misses }).toEqual({ hits: 1, misses: 0 });

    // THEN only a.txt is left: the other two entries could never hit again
    const body = JSON.parse(readFileSync(cache.file!, "utf8")) as { entries: object };
    expect(Object.keys(body.entries)).toEqual([path.join(root, "a.txt")]);
  });

  it("keeps one cache per base directory under SANDBOX_IAC_CACHE_DIR or XDG_CACHE_HOME", async () => {
    expect(defaultCacheDir({ SANDBOX_IAC_CACHE_DIR: "/c" })).toBe("/c");
    expect(defaultCacheDir({ XDG_CACHE_HOME: "/x" })).toBe("/x/sandbox-iac");
    const a = HashCache.open("/base/one", cacheDir);
    const b = HashCache.open("/base/two", cacheDir);
    expect(a.file).not.toBe(b.file);
    expect(path.dirname(a.file!)).toBe(path.join(cacheDir, "hashes"));
  });
});
