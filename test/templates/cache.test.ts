/**
 * The step cache with E2B's semantics, driven by the official SDK's
 * `Template.build`: an unchanged prefix of steps is reused (the build log
 * marks it `CACHED`), the first changed or forced step and everything after
 * it run, a COPY is keyed by its content, templates share the layers of a
 * common prefix, unused layers are garbage-collected, and past its limit the
 * cache drops its least recently used entries.
 */
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { call, sdk, type Json } from "./util";
import { startService, type TestService } from "../support/service";

jest.setTimeout(600_000);

let svc: TestService;
const serviceLog: string[] = [];
let context: string;

beforeAll(async () => {
  svc = await startService({ log: (line) => serviceLog.push(line) });
  context = await fs.mkdtemp(path.join(os.tmpdir(), "sbx-cache-ctx-"));
});
afterAll(async () => {
  await svc?.close();
  if (context) await fs.rm(context, { recursive: true, force: true });
});

/** A RUN step writing a nanosecond timestamp: a step that ran again leaves another value. */
const marker = (n: number, variant = "") => ({
  run: `${variant ? `: ${variant}; ` : ""}date +%s%N > ~/m${n}`,
});
const THREE = [marker(1), marker(2), marker(3)];

async function build(name: string, spec: Json): Promise<Json> {
  const built = await sdk(svc, "build-spec", name, JSON.stringify(spec));
  expect(built).toMatchObject({ ok: true });
  return built;
}

/** The step lines of a build's log, e.g. `CACHED Step 1/3: RUN …` or `Step 2/3: RUN …`. */
function stepLines(built: Json): string[] {
  return (built.logs as string[]).filter((l) => /^(CACHED )?Step \d+\/\d+: /.test(l));
}

/** Which steps (1-based) the log marks as reused. */
function cachedSteps(built: Json): number[] {
  return stepLines(built)
    .filter((l) => l.startsWith("CACHED "))
    .map((l) => Number(/Step (\d+)\//.exec(l)![1]));
}

/** The markers a sandbox from `name` sees. */
async function markers(name: string, count = 3): Promise<string[]> {
  const files = Array.from({ length: count }, (_, i) => `~/m${i + 1}`).join(" ");
  const ran = await sdk(svc, "run-in", name, `cat ${files}`);
  expect(ran).toMatchObject({ ok: true });
  return (ran.stdout as string).trim().split("\n");
}

async function catalogFile(): Promise<Json> {
  return JSON.parse(await fs.readFile(path.join(svc.dataDir, "templates", "catalog.json"), "utf8"));
}

/** The layers of the newest build of template `name`, from the catalog file. */
async function layersOf(name: string): Promise<string[]> {
  const t = (await catalogFile()).templates.find((x: Json) => x.name === name);
  return t.builds[t.builds.length - 1].output.layers;
}

async function layerDirs(): Promise<string[]> {
  return (await fs.readdir(path.join(svc.dataDir, "layers"))).filter((n) =>
    /^[0-9a-f]{16}$/.test(n),
  );
}

describe("the step cache", () => {
  let first: string[];

  it("reuses every step of an identical second build, and marks them CACHED in the log", async () => {
    const built = await build("cache-a", { steps: THREE });
    expect(cachedSteps(built)).toEqual([]);
    expect(stepLines(built)).toEqual([
      "Step 1/3: RUN date +%s%N > ~/m1",
      "Step 2/3: RUN date +%s%N > ~/m2",
      "Step 3/3: RUN date +%s%N > ~/m3",
    ]);
    first = await markers("cache-a");

    const again = await build("cache-a", { steps: THREE });
    expect(cachedSteps(again)).toEqual([1, 2, 3]);
    expect(again.logs).toContain("Reused 3 of 3 steps from the cache");
    expect(await markers("cache-a")).toEqual(first);
  });

  it("keeps what each step deleted or replaced, the steps running in one sandbox", async () => {
    const built = await build("cache-deletes", {
      steps: [
        {
          run: "mkdir -p ~/d/sub && echo s > ~/d/sub/s && echo a > ~/d/a && echo k > ~/d/k && echo x > ~/gone",
        },
        { run: "rm ~/d/a ~/gone && rm -rf ~/d/sub && echo b > ~/d/b" },
        { run: "mkdir -p /opt/od && echo old > /opt/od/old", user: "root" },
        { run: "rm -rf /opt/od && mkdir /opt/od && echo one > /opt/od/one", user: "root" },
        // /etc/skel is the base layer's: replacing it makes it opaque in the upper
        { run: "rm -rf /etc/skel && mkdir /etc/skel && echo n > /etc/skel/new", user: "root" },
        { run: "echo m > /etc/skel/more", user: "root" },
      ],
    });
    expect(cachedSteps(built)).toEqual([]);
    // one layer per step on top of base
    expect(await layersOf("cache-deletes")).toHaveLength(7);
    const ran = await sdk(
      svc,
      "run-in",
      "cache-deletes",
      "ls ~/d; test -e ~/gone || echo gone; ls /opt/od; ls /etc/skel",
    );
    expect(ran.stdout).toBe("b\nk\ngone\none\nmore\nnew\n");
  });

  it("runs a changed step and every step after it, and reuses the steps before", async () => {
    const built = await build("cache-a", { steps: [marker(1), marker(2, "v2"), marker(3)] });
    expect(cachedSteps(built)).toEqual([1]);
    const now = await markers("cache-a");
    expect(now[0]).toBe(first[0]);
    expect(now[1]).not.toBe(first[1]);
    expect(now[2]).not.toBe(first[2]);
  });

  it("runs the step after skipCache() and every step after it", async () => {
    const before = await markers("cache-a");
    const built = await build("cache-a", {
      steps: [marker(1), { ...marker(2, "v2"), skipCache: true }, marker(3)],
    });
    expect(cachedSteps(built)).toEqual([1]);
    const now = await markers("cache-a");
    expect(now[0]).toBe(before[0]);
    expect(now[1]).not.toBe(before[1]);
    expect(now[2]).not.toBe(before[2]);
  });

  it("runs every step again when the build is forced (Template.build's skipCache)", async () => {
    const before = await markers("cache-a");
    const built = await build("cache-a", {
      steps: [marker(1), marker(2, "v2"), marker(3)],
      force: true,
    });
    expect(cachedSteps(built)).toEqual([]);
    const now = await markers("cache-a");
    for (const i of [0, 1, 2]) expect(now[i]).not.toBe(before[i]);
  });

  it("runs a COPY again when its content changed, even with the same mtime", async () => {
    const file = path.join(context, "data.txt");
    const spec = { context, steps: [{ copy: ["data.txt", "/home/user/"] }, marker(1)] };
    await fs.writeFile(file, "content one\n");
    await fs.utimes(file, new Date("2020-01-01T00:00:00Z"), new Date("2020-01-01T00:00:00Z"));
    const built = await build("cache-copy", spec);
    expect(cachedSteps(built)).toEqual([]);
    const again = await build("cache-copy", spec);
    expect(cachedSteps(again)).toEqual([1, 2]);

    // the same size and the same mtime (what touch -d sets), other content
    await fs.writeFile(file, "content two\n");
    await fs.utimes(file, new Date("2020-01-01T00:00:00Z"), new Date("2020-01-01T00:00:00Z"));
    const changed = await build("cache-copy", spec);
    expect(cachedSteps(changed)).toEqual([]);
    const ran = await sdk(svc, "run-in", "cache-copy", "cat ~/data.txt");
    expect(ran.stdout).toBe("content two\n");
  });

  it("shares the layers of a common prefix between templates (stored once on disk)", async () => {
    const dirsBefore = await layerDirs();
    const built = await build("cache-b", { steps: [marker(1), marker(2, "v2"), marker(3, "b")] });
    expect(cachedSteps(built)).toEqual([1, 2]);
    const a = await layersOf("cache-a");
    const b = await layersOf("cache-b");
    // base, step 1 and step 2: the very same layers; step 3 is B's own
    expect(b.slice(0, 3)).toEqual(a.slice(0, 3));
    expect(b[3]).not.toBe(a[3]);
    const added = (await layerDirs()).filter((d) => !dirsBefore.includes(d));
    expect(added).toEqual([b[3]]);
  });

  it("deletes the layers only a deleted template used, and logs the bytes reclaimed", async () => {
    // cache-a's older builds hold layers the cache replaced since (forced steps)
    const t = (await catalogFile()).templates.find((x: Json) => x.name === "cache-a");
    const all = new Set<string>(t.builds.flatMap((x: Json) => x.output?.layers ?? []));
    const cache = JSON.parse(
      await fs.readFile(path.join(svc.dataDir, "templates", "step-cache.json"), "utf8"),
    );
    const cached = new Set(Object.values(cache.entries).flatMap((e: Json) => e.layers));
    const exclusive = [...all].filter((l) => /^[0-9a-f]{16}$/.test(l) && !cached.has(l));
    expect(exclusive.length).toBeGreaterThan(0);

    const logFrom = serviceLog.length;
    expect((await call(svc, "DELETE", `/templates/${t.templateID}`)).status).toBe(204);
    const dirs = await layerDirs();
    for (const l of exclusive) expect(dirs).not.toContain(l);
    for (const l of cached) if (/^[0-9a-f]{16}$/.test(l as string)) expect(dirs).toContain(l);
    // (The sweep after the previous build may still be running and take them first: either logs it.)
    expect(serviceLog.slice(logFrom).join("\n")).toMatch(
      /garbage collection \((template cache-a deleted|build [0-9a-f-]+ ended)\) deleted [1-9]\d* unused layers, reclaimed [1-9]\d* bytes/,
    );
    // cache-b still starts and still sees the shared prefix's files
    expect(await markers("cache-b")).toHaveLength(3);
  });

  it("removes a leftover layer at start, and ignores a cache entry whose layer is gone", async () => {
    // GIVEN a layer directory nothing recorded (a kill -9 between copy and save leaves one)
    const orphan = "0123456789abcdef";
    await fs.mkdir(path.join(svc.dataDir, "layers", orphan, "root"), { recursive: true });
    await fs.mkdir(path.join(svc.dataDir, "layers", orphan, "usr"));
    await fs.writeFile(path.join(svc.dataDir, "layers", orphan, "root", "junk"), "x".repeat(8192));
    // AND the layer of cache-b's third step lost (its entry stays in the cache file)
    const b = await layersOf("cache-b");
    serviceLog.length = 0;
    svc = await svc.restart();
    await fs.rm(path.join(svc.dataDir, "layers", b[3]), { recursive: true });

    // THEN the orphan is gone with its bytes counted, and the step whose layer is gone runs again
    expect(await layerDirs()).not.toContain(orphan);
    expect(serviceLog.join("\n")).toMatch(
      /garbage collection \(service start\) deleted [1-9]\d* unused layers, reclaimed [1-9]\d* bytes/,
    );
    const rebuilt = await build("cache-b", {
      steps: [marker(1), marker(2, "v2"), marker(3, "b")],
    });
    expect(cachedSteps(rebuilt)).toEqual([1, 2]);
  });

  it("drops the least recently used entry past its limit and deletes its layer, keeping a recently hit one", async () => {
    // GIVEN a cache of at most two entries (one per single-step build below)
    svc = await svc.restart({ maxStepCacheEntries: 2 });
    const step = (what: string) => ({ steps: [{ run: `echo ${what} > ~/lru` }] });
    expect(cachedSteps(await build("lru-kept", step("kept")))).toEqual([]);
    expect(cachedSteps(await build("lru-dropped", step("dropped")))).toEqual([]);
    // AND the older entry hit since, so the other one is now the least recently used
    expect(cachedSteps(await build("lru-kept", step("kept")))).toEqual([1]);
    const kept = (await layersOf("lru-kept")).at(-1)!;
    const dropped = (await layersOf("lru-dropped")).at(-1)!;

    // WHEN a third step is cached
    expect(cachedSteps(await build("lru-new", step("new")))).toEqual([]);

    // THEN the cache holds the hit entry and the new one, not the least recently used
    const cache = JSON.parse(
      await fs.readFile(path.join(svc.dataDir, "templates", "step-cache.json"), "utf8"),
    );
    const cachedLayers = Object.values(cache.entries).map((e: Json) => e.layer);
    expect(cachedLayers).toHaveLength(2);
    expect(cachedLayers).toContain(kept);
    expect(cachedLayers).not.toContain(dropped);
    // AND once no template uses them, the dropped entry's layer is deleted and the kept one's stays
    for (const name of ["lru-dropped", "lru-kept"]) {
      const found = await call(svc, "GET", `/templates/aliases/${name}`);
      expect((await call(svc, "DELETE", `/templates/${found.body.templateID}`)).status).toBe(204);
    }
    const dirs = await layerDirs();
    expect(dirs).not.toContain(dropped);
    expect(dirs).toContain(kept);
    expect(cachedSteps(await build("lru-kept", step("kept")))).toEqual([1]);
  });
});
