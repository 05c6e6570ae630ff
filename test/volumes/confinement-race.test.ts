/**
 * The volume content API and volume deletion stay inside the volume while a
 * sandbox mounting it swaps its directories for symlinks to a host directory
 * (issue 18): host canaries in a directory this test owns survive every
 * content operation and both deletions, and never show in an answer.
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { Sandbox, Volume } from "e2b";
import { eventually } from "../support/eventually";
import { connectionOpts, startService, type Endpoint, type TestService } from "../support/service";

jest.setTimeout(600_000);

/** Names the sandbox fills its swapped directories with, and the canaries share (what a path-string walk would delete). */
const SHARED_NAMES = Array.from({ length: 1000 }, (_, i) => `f${String(i).padStart(4, "0")}`);
/** Canaries only the host has: any answer naming one read the host. */
const HOST_ONLY = `host-only-${randomBytes(4).toString("hex")}`;
const SECRET = `canary-secret-${randomBytes(8).toString("hex")}`;
/** Rounds of each operation against the swapping sandbox. */
const ROUNDS = 40;

/**
 * Runs in the sandbox (its own Node), in one of two modes, on the directory
 * `D` of the mounted volume, swapping it for a symlink to the host path `T`:
 * - `loop`: keeps `D` filled and swaps it back and forth as fast as it can;
 * - `watch`: fills `D`, marks it `D.ready`, and swaps it the moment inotify
 *   reports the service deleting its first entry (the attack of issue 18),
 *   keeping the symlink a while before starting over.
 */
const SWAPPER = `
const fs = require("fs");
const [mode, D, T] = process.argv.slice(2);
// Few entries for the fast loops (listings stay quick), every shared name for the watched directory.
const names = ${JSON.stringify(SHARED_NAMES)}.slice(0, mode === "loop" ? 20 : undefined);
const fill = () => {
  fs.mkdirSync(D, { recursive: true });
  for (const n of names) fs.writeFileSync(D + "/" + n, "inside");
};
const hold = () => { for (let k = 0; k < 50; k++) fs.lstatSync("/"); };
const toLink = () => { fs.renameSync(D, D + ".real"); fs.symlinkSync(T, D); };
const back = () => {
  if (fs.lstatSync(D, { throwIfNoEntry: false })?.isSymbolicLink()) fs.unlinkSync(D);
  if (fs.existsSync(D + ".real")) fs.renameSync(D + ".real", D);
};
if (mode === "loop") {
  for (;;) {
    try {
      if (!fs.existsSync(D)) fill();
      toLink(); hold(); back(); hold();
    } catch { try { back(); } catch {} }
  }
} else {
  const arm = () => {
    try { fs.rmSync(D + ".real", { recursive: true, force: true }); fill(); } catch { return setTimeout(arm, 20); }
    const w = fs.watch(D, () => {
      w.close();
      try { toLink(); } catch {}
      setTimeout(() => { try { back(); } catch {} arm(); }, 300);
    });
    fs.writeFileSync(D + ".ready", "");
  };
  arm();
}
`;

let service: TestService;
let opts: Endpoint;
let canaryDir: string;

/** The canary directory's entries with mode and content, to compare before and after. */
async function canaryState(): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const e of (await fs.readdir(dir, { withFileTypes: true })).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const p = path.join(dir, e.name);
      const st = await fs.lstat(p);
      const body = e.isFile() ? await fs.readFile(p, "utf8") : "";
      out.push(`${path.relative(canaryDir, p)} ${st.mode.toString(8)} ${st.uid} ${body}`);
      if (e.isDirectory()) await walk(p);
    }
  };
  await walk(canaryDir);
  return out;
}

beforeAll(async () => {
  service = await startService();
  opts = connectionOpts(service);
  canaryDir = await fs.mkdtemp(path.join(os.tmpdir(), "vol-canary-"));
  for (const name of [...SHARED_NAMES, `${HOST_ONLY}-0`, `${HOST_ONLY}-1`])
    await fs.writeFile(path.join(canaryDir, name), SECRET, { mode: 0o644 });
  await fs.mkdir(path.join(canaryDir, "sub"));
  await fs.mkdir(path.join(canaryDir, `${HOST_ONLY}-dir`));
  await fs.writeFile(path.join(canaryDir, "sub", "deep"), SECRET);
});
afterAll(async () => {
  await service?.close();
  if (canaryDir) await fs.rm(canaryDir, { recursive: true, force: true });
});

/** One content-API call: the status and the body as text. */
async function content(
  vol: Volume,
  method: string,
  route: "path" | "dir" | "file",
  volumePath: string,
  extra: { query?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; text: string }> {
  const url = new URL(`${opts.apiUrl}/volumecontent/${vol.volumeId}/${route}`);
  url.searchParams.set("path", volumePath);
  for (const [k, v] of Object.entries(extra.query ?? {})) url.searchParams.set(k, v);
  const res = await fetch(url, {
    method,
    headers: {
      Authorization: `Bearer ${vol.token}`,
      ...(extra.body === undefined
        ? {}
        : { "Content-Type": route === "file" ? "application/octet-stream" : "application/json" }),
    },
    ...(extra.body === undefined ? {} : { body: extra.body }),
  });
  return { status: res.status, text: await res.text() };
}

/**
 * Fails when an answer shows anything of the host canary directory (an error
 * may repeat the path asked for, so names count only in a success).
 */
function expectNoHostData(answer: { status: number; text: string }): void {
  expect(answer.status).toBeLessThan(500);
  if (answer.status < 300) expect(answer.text).not.toContain(HOST_ONLY);
  expect(answer.text).not.toContain(SECRET);
}

describe("volume content under a sandbox swapping directories for host symlinks", () => {
  let vol: Volume;
  let sbx: Sandbox;
  let before: string[];

  beforeAll(async () => {
    before = await canaryState();
    vol = await Volume.create(`race-${randomBytes(3).toString("hex")}`, opts);
    sbx = await Sandbox.create({ ...opts, volumeMounts: { "/mnt/v": vol }, timeoutMs: 600_000 });
    await sbx.files.write("/tmp/swap.js", SWAPPER);
    const swapper = (mode: string, dir: string) =>
      sbx.commands.run(`/.sandbox-iac/node /tmp/swap.js ${mode} /mnt/v${dir} ${canaryDir}`, {
        background: true,
        timeoutMs: 0,
      });
    await swapper("watch", "/victim/sub");
    await swapper("loop", "/top/sub");
    await swapper("loop", "/top");
    // The race is live: the service sees the symlink at times, and the real directory at others.
    for (const type of ["symlink", "directory"])
      await eventually(async () => {
        const r = await content(vol, "GET", "path", "/top/sub");
        return r.status === 200 && (JSON.parse(r.text) as { type: string }).type === type;
      });
  });
  afterAll(async () => {
    await sbx?.kill();
  });
  afterEach(async () => {
    expect(await canaryState()).toEqual(before);
  });

  it("lists depth > 1 without naming a host entry", async () => {
    for (let i = 0; i < ROUNDS; i++) {
      for (const p of ["/", "/top"])
        expectNoHostData(await content(vol, "GET", "dir", p, { query: { depth: "4" } }));
    }
  });

  it("stats and reads without answering with a host file", async () => {
    for (let i = 0; i < ROUNDS; i++) {
      for (const p of [`/top/sub/${HOST_ONLY}-0`, `/top/${HOST_ONLY}-1`, "/top/sub/sub/deep"]) {
        const stat = await content(vol, "GET", "path", p);
        expectNoHostData(stat);
        expect(stat.status).not.toBe(200);
        expectNoHostData(await content(vol, "GET", "file", p));
      }
      expectNoHostData(await content(vol, "GET", "file", "/top/sub/f0001"));
    }
  });

  it("writes, makes directories and changes metadata only inside the volume", async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const where = i % 2 === 0 ? "/top" : "/top/sub";
      expectNoHostData(
        await content(vol, "PUT", "file", `${where}/written-${i}`, { body: "planted" }),
      );
      expectNoHostData(await content(vol, "PUT", "file", `${where}/f0002`, { body: "replaced" }));
      expectNoHostData(await content(vol, "POST", "dir", `${where}/made-${i}`));
      expectNoHostData(
        await content(vol, "PATCH", "path", `${where}/f0003`, {
          body: JSON.stringify({ mode: 0o600, uid: 4321 }),
        }),
      );
    }
  });

  it("deletes a directory a sandbox swaps mid-removal, and nothing outside the volume", async () => {
    const ready = () => content(vol, "GET", "path", "/victim/sub.ready");
    for (let i = 0; i < 10; i++) {
      await eventually(async () => (await ready()).status === 200);
      const r = await content(vol, "DELETE", "path", "/victim");
      expectNoHostData(r);
      expect(r.status).toBe(204);
      expectNoHostData(await content(vol, "DELETE", "path", "/top/sub"));
    }
  });

  it("deletes the whole volume while the sandbox swaps, and nothing outside it", async () => {
    await eventually(
      async () => (await content(vol, "GET", "path", "/victim/sub.ready")).status === 200,
    );
    expect(await Volume.destroy(vol.volumeId, opts)).toBe(true);
    expect(await fs.readdir(path.join(service.dataDir, "volumes"))).not.toContain(vol.volumeId);
  });
});
