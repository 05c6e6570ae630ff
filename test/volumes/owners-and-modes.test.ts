/**
 * What the volume content API lets a client set, and how volumes are mounted
 * (issue 18): owners only in the sandbox's id range, no setuid, setgid or
 * sticky bits, and volumes and template layers mounted `nosuid,nodev`.
 */
import { Sandbox, Volume } from "e2b";
import { connectionOpts, startService, type Endpoint, type TestService } from "../support/service";

jest.setTimeout(180_000);

let service: TestService;
let opts: Endpoint;
let vol: Volume;

beforeAll(async () => {
  service = await startService();
  opts = connectionOpts(service);
  vol = await Volume.create("owners-modes", opts);
});
afterAll(async () => {
  await service?.close();
});

/** One content-API call: the status and the parsed JSON answer. */
async function content(
  method: string,
  route: "path" | "dir" | "file",
  query: Record<string, string>,
  body?: string,
): Promise<{ status: number; json: { message?: string; mode?: number; uid?: number } }> {
  const url = new URL(`${opts.apiUrl}/volumecontent/${vol.volumeId}/${route}`);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const res = await fetch(url, {
    method,
    headers: {
      Authorization: `Bearer ${vol.token}`,
      "Content-Type": route === "file" ? "application/octet-stream" : "application/json",
    },
    ...(body === undefined ? {} : { body }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : {} };
}

describe("content API owners and modes", () => {
  it("fails when a uid or gid is outside the sandbox's ids, creating nothing", async () => {
    const file = await content("PUT", "file", { path: "/f", uid: "70000" }, "x");
    expect(file.status).toBe(400);
    expect(file.json.message).toMatch(/query\.uid: must be an id inside the sandbox, 0 to 65535/);
    expect(file.json.message).toMatch(/got "70000"/);
    const dir = await content("POST", "dir", { path: "/d", gid: "65536" });
    expect(dir.status).toBe(400);
    expect(dir.json.message).toMatch(/query\.gid: .*0 to 65535.*got "65536"/);
    expect((await content("GET", "path", { path: "/f" })).status).toBe(404);
    expect((await content("GET", "path", { path: "/d" })).status).toBe(404);
  });

  it("fails when a mode has setuid, setgid or sticky bits, creating nothing", async () => {
    for (const mode of [0o4755, 0o2755, 0o1777]) {
      const r = await content("PUT", "file", { path: "/s", mode: String(mode) }, "x");
      expect(r.status).toBe(400);
      expect(r.json.message).toMatch(/query\.mode: .*setuid, setgid and sticky bits .* refused/);
      expect(r.json.message).toMatch(new RegExp(`got "${mode}"`));
    }
    expect((await content("GET", "path", { path: "/s" })).status).toBe(404);
    const d = await content("POST", "dir", { path: "/sd", mode: String(0o2775) });
    expect(d.status).toBe(400);
    expect((await content("GET", "path", { path: "/sd" })).status).toBe(404);
  });

  it("refuses the same in a metadata update and leaves the entry as it was", async () => {
    const made = await content("PUT", "file", { path: "/meta", mode: String(0o640) }, "x");
    expect(made.status).toBe(201);
    const setuid = await content("PATCH", "path", { path: "/meta" }, '{"mode": 2541}');
    expect(setuid.status).toBe(400);
    expect(setuid.json.message).toMatch(/body\.mode: .*refused.*got 2541/);
    const hostUid = await content("PATCH", "path", { path: "/meta" }, '{"uid": 100000}');
    expect(hostUid.status).toBe(400);
    expect(hostUid.json.message).toMatch(/body\.uid: .*0 to 65535.*got 100000/);
    expect((await content("GET", "path", { path: "/meta" })).json).toMatchObject({
      mode: 0o640,
      uid: 1000,
    });
    // The edges of the range are fine.
    const edge = await content("PATCH", "path", { path: "/meta" }, '{"uid": 65535, "mode": 511}');
    expect(edge.json).toMatchObject({ uid: 65535, mode: 0o777 });
  });
});

describe("mounts", () => {
  it("mounts volumes and the template's root nosuid,nodev inside a sandbox", async () => {
    const sbx = await Sandbox.create({
      ...opts,
      volumeMounts: { "/mnt/v": vol },
      timeoutMs: 60_000,
    });
    try {
      const options = async (mountPoint: string): Promise<string[]> => {
        const r = await sbx.commands.run(
          `awk '$5 == "${mountPoint}" { print $6 }' /proc/self/mountinfo`,
        );
        const lines = r.stdout.trim().split("\n").filter(Boolean);
        expect(lines.length).toBeGreaterThan(0);
        return lines.flatMap((l) => l.split(","));
      };
      for (const mountPoint of ["/mnt/v", "/", "/usr"]) {
        const o = await options(mountPoint);
        expect(o).toEqual(expect.arrayContaining(["nosuid", "nodev"]));
      }
    } finally {
      await sbx.kill();
    }
  });
});
