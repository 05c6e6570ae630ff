/**
 * A first upload's manifest (deferHashes): small files the cache does not
 * vouch for are listed without reading them, their hashes come from the
 * bytes the archive packs, the rest are hashed before `finish()` resolves,
 * and the cache then holds every hash, as after a manifest built up front.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { packChunks } from "./archive-pack";
import { HashCache } from "./hash-cache";
import { buildManifest, digestOf } from "./manifest";

let work: string;
let cacheDir: string;
beforeEach(() => {
  work = mkdtempSync(path.join(tmpdir(), "deferred-hashes-"));
  cacheDir = path.join(work, ".cache");
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

/** `count` files of distinct contents under `tree/`, dated a minute ago (not racily clean). */
function tree(count: number): string {
  const root = path.join(work, "tree");
  const past = new Date(Date.now() - 60_000);
  for (let i = 0; i < count; i++) {
    const dir = path.join(root, `d${i % 3}`);
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `f${i}`);
    writeFileSync(file, `content ${i}\n`.repeat(1 + i));
    utimesSync(file, past, past);
  }
  return root;
}

describe("deferred hashes of a first upload", () => {
  it("takes each packed file's hash from the bytes packed, hashes the others on finish, and caches all", async () => {
    // GIVEN a tree and an empty hash cache
    const root = tree(12);
    const specs = [{ source: root, destination: "/home/user/t" }];
    const expected = digestOf(await buildManifest(specs, work));

    // WHEN its manifest defers hashes and half of its files are packed
    const manifest = await buildManifest(specs, work, {
      cache: HashCache.open(work, cacheDir),
      deferHashes: true,
    });
    const deferred = manifest.deferred!;
    expect(deferred.size).toBe(12);
    expect(manifest.files.every((f) => f.sha256 === "")).toBe(true);
    const packed = manifest.files.slice(0, 6);
    for await (const _ of packChunks(packed, (e, c) => deferred.fromContent(e, c)));

    // THEN the packed files have their hashes and the others only once finished
    expect(deferred.size).toBe(6);
    await deferred.finish();
    expect(deferred.size).toBe(0);
    expect(digestOf(manifest)).toEqual(expected);

    // AND the next manifest finds every hash in the cache, reading no file
    const cache = HashCache.open(work, cacheDir);
    expect(digestOf(await buildManifest(specs, work, { cache }))).toEqual(expected);
    expect(cache.misses).toBe(0);
    expect(cache.hits).toBe(12);
  });

  it("says the hashes are complete once the last pending file is packed, and at once when none is", async () => {
    // GIVEN a first upload's manifest of three files, none in the cache
    const specs = [{ source: tree(3), destination: "/home/user/t" }];
    const manifest = await buildManifest(specs, work, {
      cache: HashCache.open(work, cacheDir),
      deferHashes: true,
    });
    const deferred = manifest.deferred!;
    let complete = false;
    void deferred.complete().then(() => (complete = true));

    // WHEN two of them are packed THEN the hashes are not complete yet
    const pack = async (files: typeof manifest.files) => {
      for await (const _ of packChunks(files, (e, c) => deferred.fromContent(e, c)));
      await new Promise<void>((resolve) => setImmediate(resolve));
    };
    await pack(manifest.files.slice(0, 2));
    expect(complete).toBe(false);
    // WHEN the last one is packed THEN they are
    await pack(manifest.files.slice(2));
    expect(complete).toBe(true);
    expect(manifest.files.every((f) => /^[0-9a-f]{64}$/.test(f.sha256))).toBe(true);
    await expect(deferred.complete()).resolves.toBeUndefined();
  });

  it("hashes a file the cache vouches for from the cache, not deferring it", async () => {
    // GIVEN a tree whose hashes are cached
    const root = tree(4);
    const specs = [{ source: root, destination: "t" }];
    await buildManifest(specs, work, { cache: HashCache.open(work, cacheDir) });

    // WHEN a first upload's manifest is built THEN nothing is left to hash
    const manifest = await buildManifest(specs, work, {
      cache: HashCache.open(work, cacheDir),
      deferHashes: true,
    });
    expect(manifest.deferred!.size).toBe(0);
    expect(manifest.files.every((f) => /^[0-9a-f]{64}$/.test(f.sha256))).toBe(true);
  });
});
