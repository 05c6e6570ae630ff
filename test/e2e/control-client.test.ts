/**
 * The typed control client against the REAL local service: every control
 * endpoint end to end (sandboxes, lists with filters and paging, connect,
 * pause, resume, timeout, refreshes, metrics, logs, snapshots, templates,
 * builds, tags, aliases, kill).
 */
import { randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import type { ControlClient } from "../../src/client/control";
import { eventually } from "../support/eventually";
import { codeOf } from "../support/errors";
import { controlClientOf, startService, type TestService } from "../support/service";

jest.setTimeout(300_000);

let svc: TestService;
let api: ControlClient;
const created: string[] = [];
const tag = randomBytes(3).toString("hex");

beforeAll(async () => {
  svc = await startService();
  api = controlClientOf(svc);
});

afterAll(async () => {
  for (const id of created) await api.killSandbox(id).catch(() => undefined);
  await svc?.close();
});

describe("control client against the local service", () => {
  let plain: string;
  let secured: string;

  it("creates sandboxes through v1 and v2", async () => {
    const v1 = await api.createSandbox({ templateID: "base", timeout: 300 });
    plain = v1.sandboxID;
    created.push(plain);
    expect(v1.envdAccessToken).toBeUndefined();

    const v2 = await api.createSandboxV2({
      templateID: "base",
      timeout: 300,
      metadata: { suite: `ctl-${tag}`, "a b": "c&d" },
    });
    secured = v2.sandboxID;
    created.push(secured);
    expect(v2.envdAccessToken).toEqual(expect.any(String));
  });

  it("gets a sandbox's detail", async () => {
    const detail = await api.getSandbox(secured);
    expect(detail).toMatchObject({
      sandboxID: secured,
      state: "running",
      metadata: { suite: `ctl-${tag}`, "a b": "c&d" },
    });
  });

  it("lists running sandboxes filtered by metadata (v1)", async () => {
    const items = await api.listSandboxes({ metadata: { suite: `ctl-${tag}`, "a b": "c&d" } });
    expect(items.map((s) => s.sandboxID)).toEqual([secured]);
  });

  it("pages through v2 with a state filter", async () => {
    const first = await api.listSandboxesV2Page({ state: ["running"], limit: 1 });
    expect(first.items).toHaveLength(1);
    expect(first.nextToken).toEqual(expect.any(String));
    const all: string[] = [];
    for await (const s of api.listSandboxesV2({ state: ["running", "paused"], limit: 1 }))
      all.push(s.sandboxID);
    expect(all).toEqual(expect.arrayContaining([plain, secured]));
  });

  it("connects to a running sandbox without resuming it", async () => {
    expect((await api.connectSandbox(plain, { timeout: 300 })).resumed).toBe(false);
    expect((await api.connectSandboxV2(plain, { timeout: 300 })).resumed).toBe(false);
  });

  it("sets the timeout and refreshes", async () => {
    await api.setSandboxTimeout(plain, 600);
    await api.refreshSandbox(plain, 60);
    const detail = await api.getSandbox(plain);
    expect(Date.parse(detail.endAt) - Date.now()).toBeGreaterThan(300_000);
  });

  it("reads metrics, batch metrics and logs", async () => {
    const samples = await eventually(
      async () => {
        const sampled = await api.getSandboxMetrics(plain, { start: 0 });
        return sampled.length > 0 && sampled;
      },
      { timeoutMs: 15_000 },
    );
    const last = samples[samples.length - 1];
    expect(last.cpuCount).toBeGreaterThanOrEqual(1);
    expect(last.memTotal).toBeGreaterThan(0);
    expect(last.diskTotal).toBeGreaterThan(0);
    expect(Math.abs(last.timestampUnix - Date.now() / 1000)).toBeLessThan(600);

    const batch = await api.getSandboxesMetrics([plain, secured]);
    expect(Object.keys(batch.sandboxes)).toContain(plain);
    expect(batch.sandboxes[plain].memTotal).toBe(last.memTotal);

    const v1 = await api.getSandboxLogs(plain);
    expect(v1.logEntries.map((e) => e.message)).toContain("sandbox created");
    expect(v1.logs.map((l) => JSON.parse(l.line).message)).toContain("sandbox created");
    const v2 = await api.getSandboxLogsV2(plain, { limit: 10, direction: "forward" });
    expect(v2[0]?.message).toBe("sandbox created");
  });

  it("pauses, refuses a second pause, resumes, and resumes again through connect", async () => {
    await api.pauseSandbox(plain);
    expect((await api.getSandbox(plain)).state).toBe("paused");
    expect(await codeOf(api.pauseSandbox(plain))).toBe("conflict");
    await api.resumeSandbox(plain, { timeout: 300 });
    expect((await api.getSandbox(plain)).state).toBe("running");
    await api.pauseSandbox(plain, { memory: false });
    expect((await api.connectSandboxV2(plain, { timeout: 300 })).resumed).toBe(true);
  });

  it("creates, lists and deletes a snapshot", async () => {
    const snap = await api.createSnapshot(plain, { name: `snap-${tag}` });
    expect(snap.snapshotID).toEqual(expect.any(String));
    const ids: string[] = [];
    for await (const s of api.listSnapshots({ sandboxID: plain, limit: 1 })) ids.push(s.snapshotID);
    expect(ids).toContain(snap.snapshotID);
    await api.deleteTemplate(snap.snapshotID);
  });

  describe("templates", () => {
    const name = `ctl-${tag}`;
    let templateID: string;
    let buildID: string;

    it("requests a build and gets an upload link for unknown files", async () => {
      const res = await api.createTemplateV3({ name, cpuCount: 1, memoryMB: 512 });
      ({ templateID, buildID } = res);
      const link = await api.getTemplateFilesUploadLink(
        templateID,
        randomBytes(32).toString("hex"),
      );
      expect(link.present).toBe(false);
      expect(link.url).toEqual(expect.any(String));
    });

    it("uploads an archive through its link once; a used or forged link is permission_denied", async () => {
      const hash = randomBytes(32).toString("hex");
      const link = await api.getTemplateFilesUploadLink(templateID, hash);
      const bytes = gzipSync(Buffer.from("not really a tar, the store keeps it as sent"));
      const archive = {
        size: bytes.length,
        open: () => new Blob([bytes]).stream(),
      };
      await api.uploadTemplateFiles(link.url ?? "", archive);
      expect((await api.getTemplateFilesUploadLink(templateID, hash)).present).toBe(true);

      // A link is good for one upload: used again it reads as expired.
      const again = await api.uploadTemplateFiles(link.url ?? "", archive).catch((e: unknown) => e);
      expect(again).toMatchObject({ code: "permission_denied", status: 403 });
      expect(String(again)).toContain("expired");
      expect(String(again)).toContain("ask for a new one with getTemplateFilesUploadLink");
      expect(String(again)).not.toContain("API key");

      const other = randomBytes(32).toString("hex");
      const fresh = new URL((await api.getTemplateFilesUploadLink(templateID, other)).url ?? "");
      // The link's capability is its last path segment (a real service's may be its query).
      fresh.pathname = `${fresh.pathname.replace(/[^/]+$/, "")}${"0".repeat(48)}`;
      expect(await codeOf(api.uploadTemplateFiles(fresh.toString(), archive))).toBe(
        "permission_denied",
      );
    });

    it("builds from steps and polls the status to ready", async () => {
      await api.startTemplateBuildV2(templateID, buildID, {
        fromTemplate: "base",
        steps: [{ type: "RUN", args: ["echo build-output-line; echo built > /tmp/built"] }],
      });
      let offset = 0;
      const status = await eventually(
        async () => {
          const now = await api.getTemplateBuildStatus(templateID, buildID, { logsOffset: offset });
          offset += now.logEntries.length;
          return now.status !== "waiting" && now.status !== "building" && now;
        },
        { timeoutMs: 240_000, intervalMs: 500 },
      );
      expect(status.reason?.message).toBeUndefined();
      expect(status.status).toBe("ready");
      const logs = await api.getTemplateBuildLogs(templateID, buildID, { limit: 100 });
      expect(logs.map((e) => e.message)).toContain("build-output-line");
    });

    it("lists, gets and finds the template by alias", async () => {
      expect((await api.listTemplates()).map((t) => t.templateID)).toContain(templateID);
      const ids: string[] = [];
      for await (const t of api.listTemplatesV2({ limit: 1 })) ids.push(t.templateID);
      expect(ids).toContain(templateID);
      const { template } = await api.getTemplate(templateID);
      expect(template.builds.map((b) => b.buildID)).toContain(buildID);
      expect((await api.getTemplateByAlias(name)).templateID).toBe(templateID);
    });

    it("assigns, lists and deletes tags", async () => {
      const assigned = await api.assignTemplateTags({ target: `${name}:default`, tags: ["v1"] });
      expect(assigned.tags).toContain("v1");
      expect((await api.listTemplateTags(templateID)).map((t) => t.tag)).toContain("v1");
      await api.deleteTemplateTags({ name, tags: ["v1"] });
      expect((await api.listTemplateTags(templateID)).map((t) => t.tag)).not.toContain("v1");
    });

    it("updates visibility and deletes the template", async () => {
      await api.updateTemplate(templateID, { public: false });
      expect((await api.updateTemplateV2(templateID, { public: true })).names).toEqual(
        expect.any(Array),
      );
      await api.deleteTemplate(templateID);
      expect(await codeOf(api.getTemplateByAlias(name))).toBe("not_found");
    });
  });

  it("kills sandboxes; a killed sandbox is not found", async () => {
    await api.killSandbox(plain);
    await api.killSandbox(secured);
    expect(await codeOf(api.getSandbox(plain))).toBe("not_found");
    expect(await codeOf(api.killSandbox(plain))).toBe("not_found");
  });
});
