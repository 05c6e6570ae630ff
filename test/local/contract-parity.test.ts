import * as fs from "node:fs";
import * as path from "node:path";
import { eventually } from "../support/eventually";
import { startService, type TestService } from "../support/service";
import { call, createSandbox, runThroughProxy } from "./support";

let svc: TestService | undefined;
const logs: string[] = [];

beforeAll(async () => {
  svc = await startService({ log: (line) => logs.push(line) });
});
afterAll(async () => {
  await svc?.close();
});

/** Host processes of sandboxes (running or waiting in the pool) that mount `layer`. */
/**
 * The sandboxes (by mount namespace) that have `layer` mounted: each
 * sandbox's holder mounts its template layers in its own mount namespace,
 * where mountinfo names the layer's directory.
 */
function sandboxesOn(layer: string): string[] {
  const needle = path.join(svc!.dataDir, "layers", layer);
  const namespaces = new Set<string>();
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (!fs.readFileSync(`/proc/${pid}/mountinfo`, "utf8").includes(needle)) continue;
      namespaces.add(fs.readlinkSync(`/proc/${pid}/ns/mnt`));
    } catch {
      // gone meanwhile
    }
  }
  return [...namespaces];
}

describe("E2B contract parity", () => {
  it("filters startedAfter and startedBefore inclusively", async () => {
    const s = svc!;
    const { sandboxID } = await createSandbox(s);
    const info = await call(s, "GET", `/sandboxes/${sandboxID}`);
    const startedAt = (info.body as { startedAt: string }).startedAt;
    const ids = async (q: string) =>
      ((await call(s, "GET", `/v2/sandboxes?${q}`)).body as { sandboxID: string }[]).map(
        (x) => x.sandboxID,
      );
    expect(await ids(`startedAfter=${encodeURIComponent(startedAt)}`)).toContain(sandboxID);
    expect(await ids(`startedBefore=${encodeURIComponent(startedAt)}`)).toContain(sandboxID);
    const later = new Date(Date.parse(startedAt) + 1).toISOString();
    expect(await ids(`startedAfter=${encodeURIComponent(later)}`)).not.toContain(sandboxID);
    const bad = await call(s, "GET", "/v2/sandboxes?startedBefore=yesterday");
    expect(bad.status).toBe(400);
    expect((bad.body as { message: string }).message).toMatch(
      /query.startedBefore: must be an RFC 3339/,
    );
    await call(s, "DELETE", `/sandboxes/${sandboxID}`);
  });

  it("takes POST /sandboxes/{id}/timeout without a body, as E2B does", async () => {
    const s = svc!;
    const { sandboxID } = await createSandbox(s);
    const res = await fetch(`${s.apiUrl}/sandboxes/${sandboxID}/timeout`, {
      method: "POST",
      headers: { "X-API-Key": s.apiKey },
    });
    expect(res.status).toBe(204);
    const info = (await call(s, "GET", `/sandboxes/${sandboxID}`)).body as { endAt: string };
    const left = Date.parse(info.endAt) - Date.now();
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(15_000);
    await call(s, "DELETE", `/sandboxes/${sandboxID}`);
  });

  it("refuses template names longer than E2B's 128 characters", async () => {
    const s = svc!;
    const res = await call(s, "POST", "/v3/templates", { name: "n".repeat(129) });
    expect(res.status).toBe(400);
    expect((res.body as { message: string }).message).toMatch(/body\.name/);
    const ok = await call(s, "POST", "/v3/templates", { name: "n".repeat(128) });
    expect(ok.status).toBe(202);
  });

  it("stops keeping sandboxes warm for a deleted snapshot and deletes its layer", async () => {
    const s = svc!;
    const { sandboxID } = await createSandbox(s);
    await runThroughProxy(s, sandboxID, "echo snap > /home/user/s.txt");
    const layersBefore = new Set(fs.readdirSync(path.join(svc!.dataDir, "layers")));
    const snap = await call(s, "POST", `/sandboxes/${sandboxID}/snapshots`, {});
    expect(snap.status).toBe(201);
    const snapshotID = (snap.body as { snapshotID: string }).snapshotID;
    const layer = fs
      .readdirSync(path.join(svc!.dataDir, "layers"))
      .find((n) => !layersBefore.has(n));
    expect(layer).toBeDefined();
    // Starting from the snapshot makes the pool keep its layers warm: its
    // sandboxes and pool members are the mount namespaces with the layer mounted.
    const fromSnap = await createSandbox(s, { templateID: snapshotID });
    await eventually(async () => sandboxesOn(layer!).length >= 2, {
      timeoutMs: 60_000,
    });
    await call(s, "DELETE", `/sandboxes/${fromSnap.sandboxID}`);
    await call(s, "DELETE", `/sandboxes/${sandboxID}`);

    const del = await call(s, "DELETE", `/templates/${encodeURIComponent(snapshotID)}`);
    expect(del.status).toBe(204);
    expect(fs.existsSync(path.join(svc!.dataDir, "layers", layer!))).toBe(false);
    await eventually(async () => sandboxesOn(layer!).length === 0, {
      timeoutMs: 30_000,
    });
    // A create afterwards (which refills the pool) never tries the deleted layer.
    const after = await createSandbox(s);
    await call(s, "DELETE", `/sandboxes/${after.sandboxID}`);
    expect(logs.filter((l) => /warm pool.*(failed|could not)/.test(l))).toEqual([]);
    expect(logs.filter((l) => /could not delete layer/.test(l))).toEqual([]);
  });
});
