import { createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { createSandboxClient, type SandboxClient } from "../../src/client/sandbox";
import { resolveConfig } from "../../src/config";
import { destroy, HarnessRunError, preview, refresh, up } from "../harness";
import { ops, pulumiStack, stackOptions } from "./support";
import { phases } from "../support/phases";

jest.setTimeout(600_000);

/** The local files of the program; `big.bin` is larger than `partSizeMB: 1`, so it goes up in parts. */
const BIG_BYTES = 2 * 1024 * 1024 + 123_457;
const SCRIPT = '#!/bin/sh\necho "run $(cat /home/user/single.txt)"\n';

const stack = pulumiStack("provisioner", {
  prepare: (root) => {
    mkdirSync(path.join(root, "app", "bin"), { recursive: true });
    writeFileSync(path.join(root, "app", "bin", "run.sh"), SCRIPT);
    chmodSync(path.join(root, "app", "bin", "run.sh"), 0o755);
    writeFileSync(path.join(root, "app", "notes.txt"), "notes\n");
    writeFileSync(path.join(root, "single.txt"), "one");
    writeFileSync(path.join(root, "big.bin"), randomBytes(BIG_BYTES));
  },
});

/** Inputs of the scenario's Provisioner; `over` replaces fields. */
function provisionerArgs(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    template: "base",
    files: [
      { source: "app", destination: "/home/user/app" },
      { source: "single.txt", destination: "/home/user/single.txt" },
      { source: "big.bin", destination: "/home/user/big.bin" },
    ],
    commands: [
      { run: "sha256sum /home/user/big.bin | cut -d' ' -f1 > /home/user/big.sha" },
      { run: "/home/user/app/bin/run.sh >> /home/user/marker.txt" },
    ],
    snapshot: { name: "scn-prov-ready" },
    keepSandbox: true,
    partSizeMB: 1,
    ...over,
  };
}

function localSize(rel: string): number {
  return statSync(path.join(stack.dir, rel)).size;
}

function sha256(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** A client of a running sandbox, its token read from the control API. */
async function clientOf(sandboxID: string): Promise<SandboxClient> {
  const detail = await stack.svc.call("GET", `/sandboxes/${sandboxID}`);
  expect(detail.status).toBe(200);
  const token = (detail.body as { envdAccessToken?: string }).envdAccessToken;
  return createSandboxClient({
    sandboxID,
    accessToken: token,
    config: resolveConfig({ apiUrl: stack.svc.apiUrl, apiKey: stack.svc.apiKey, env: {} }),
  });
}

/** The `POST /files` uploads among `requests` (one file, or many in one multipart request). */
function uploads(requests: string[]): string[] {
  return requests.filter((r) => /^POST \/files(\?|$)/.test(r));
}

/** Destinations of the single-file uploads (`?path=`) among `requests`. */
function uploadedPaths(requests: string[]): string[] {
  return uploads(requests)
    .map((r) => new URL(r.slice("POST ".length), "http://x").searchParams.get("path"))
    .filter((p): p is string => p !== null)
    .sort();
}

/** Sandbox creations among `requests`. */
function sandboxCreations(requests: string[]): string[] {
  return requests.filter((r) => /^POST \/(v2\/)?sandboxes(\?|$)/.test(r));
}

/** Requests made while `fn` ran. */
async function requestsDuring<T>(fn: () => Promise<T>): Promise<{ result: T; requests: string[] }> {
  const before = stack.svc.requests.length;
  const result = await fn();
  return { result, requests: stack.svc.requests.slice(before) };
}

async function sandboxStatus(sandboxID: string): Promise<number> {
  return (await stack.svc.call("GET", `/sandboxes/${sandboxID}`)).status;
}

/** Kills a sandbox through the control API; returns the HTTP status. */
async function killStatus(sandboxID: string): Promise<number> {
  return (await stack.svc.call("DELETE", `/sandboxes/${sandboxID}`)).status;
}

async function snapshotIDs(): Promise<string[]> {
  const listed = await stack.svc.call("GET", "/snapshots");
  return (listed.body as Array<{ snapshotID: string }>).map((s) => s.snapshotID);
}

/** A template of the base image plus `/home/user/from-alt.txt`, made by snapshotting a sandbox. */
async function snapshotTemplate(name: string): Promise<string> {
  const created = await stack.svc.call("POST", "/sandboxes", {
    templateID: "base",
    timeout: 300,
    secure: true,
  });
  expect(created.status).toBe(201);
  const sandboxID = (created.body as { sandboxID: string }).sandboxID;
  await (await clientOf(sandboxID)).uploadBytes("/home/user/from-alt.txt", "alt\n");
  const snapshot = await stack.svc.call("POST", `/sandboxes/${sandboxID}/snapshots`, { name });
  expect(snapshot.status).toBe(201);
  expect(await killStatus(sandboxID)).toBe(204);
  return (snapshot.body as { snapshotID: string }).snapshotID;
}

async function failureOf(run: Promise<unknown>): Promise<HarnessRunError> {
  const failure = await run.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(failure).toBeInstanceOf(HarnessRunError);
  return failure as HarnessRunError;
}

describe("Provisioner through Pulumi: one scenario, phase by phase", () => {
  const phase = phases();
  const opts = (over: Record<string, unknown> = {}) =>
    stackOptions(stack.svc, stack.dir, { args: provisionerArgs(over) });
  const altOpts = () => opts({ triggers: { revision: "2" }, template: "scn-prov-alt" });
  let kept: string;
  let sandbox: SandboxClient;
  let altTemplate: string;
  let keptB: string;

  phase(
    "creates: uploads the tree (big.bin in parts), runs the commands, keeps the sandbox and snapshots it",
    async () => {
      // GIVEN a directory tree with an executable script, a single file and a file above the part size
      const { result: created, requests: createRequests } = await requestsDuring(() =>
        up(stack.dir, opts()),
      );
      expect(ops(created)).toEqual(["create setup"]);
      kept = created.outputs["keptSandboxID"] as string;
      expect(kept).toMatch(/^[a-z0-9]+$/);
      expect(created.outputs["commandsRun"]).toBe(2);
      expect(created.outputs["bytesUploaded"]).toBe(
        localSize("app/bin/run.sh") +
          localSize("app/notes.txt") +
          localSize("single.txt") +
          BIG_BYTES,
      );
      // big.bin went up in three parts joined in the sandbox.
      expect(uploadedPaths(createRequests).filter((p) => p.includes("big.bin"))).toEqual([
        "/home/user/big.bin.sandbox-iac-part-0",
        "/home/user/big.bin.sandbox-iac-part-1",
        "/home/user/big.bin.sandbox-iac-part-2",
      ]);
      expect(createRequests.filter((r) => r.startsWith("POST /files/compose"))).toHaveLength(1);
      expect(sandboxCreations(createRequests)).toHaveLength(1);

      // THEN the kept sandbox holds the same bytes and modes, and the commands saw the files
      sandbox = await clientOf(kept);
      const big = await sandbox.readBytes("/home/user/big.bin");
      expect(sha256(big)).toBe(sha256(readFileSync(path.join(stack.dir, "big.bin"))));
      expect((await sandbox.readText("/home/user/big.sha")).trim()).toBe(sha256(big));
      expect(await sandbox.readText("/home/user/app/bin/run.sh")).toBe(SCRIPT);
      expect((await sandbox.stat("/home/user/app/bin/run.sh")).mode).toBe(0o755);
      expect((await sandbox.stat("/home/user/app/notes.txt")).mode).toBe(0o644);
      expect(await sandbox.exists("/home/user/big.bin.sandbox-iac-part-0")).toBe(false);
      expect(await sandbox.readText("/home/user/marker.txt")).toBe("run one\n");
      const fileDigest = created.outputs["fileDigest"] as Record<
        string,
        { sha256: string; mode: number }
      >;
      expect(fileDigest["/home/user/app/bin/run.sh"]).toMatchObject({
        mode: 0o755,
        sha256: sha256(Buffer.from(SCRIPT)),
      });

      // AND a sandbox created from the snapshot sees the marker
      const snapshotID = created.outputs["snapshotID"] as string;
      expect(await snapshotIDs()).toContain(snapshotID);
      const fromSnapshot = await stack.svc.call("POST", "/sandboxes", {
        templateID: snapshotID,
        timeout: 300,
        secure: true,
      });
      expect(fromSnapshot.status).toBe(201);
      const restoredID = (fromSnapshot.body as { sandboxID: string }).sandboxID;
      expect(await (await clientOf(restoredID)).readText("/home/user/marker.txt")).toBe(
        "run one\n",
      );
      expect(await killStatus(restoredID)).toBe(204);
    },
  );

  phase("changes nothing and calls nothing when nothing changed", async () => {
    // WHEN nothing changed THEN nothing happens and the service is not called
    const { result: unchanged, requests: sameRequests } = await requestsDuring(() =>
      up(stack.dir, opts()),
    );
    expect(ops(unchanged)).toEqual(["same setup"]);
    expect(sameRequests).toEqual([]);
  });

  phase(
    "previews an edited local file without a call, then uploads only that file and re-runs the commands",
    async () => {
      // WHEN one local file is edited THEN preview shows an update without calling the service
      writeFileSync(path.join(stack.dir, "single.txt"), "two, edited");
      const { result: previewed, requests: previewRequests } = await requestsDuring(() =>
        preview(stack.dir, opts()),
      );
      expect(ops(previewed)).toEqual(["update setup"]);
      expect(previewRequests).toEqual([]);

      // AND up uploads only that file, in the same sandbox, and runs the commands again.
      // An unchanged file altered inside the sandbox stays altered: it was not sent again.
      await sandbox.uploadBytes("/home/user/app/notes.txt", "changed in the sandbox\n");
      const { result: edited, requests: editRequests } = await requestsDuring(() =>
        up(stack.dir, opts()),
      );
      expect(ops(edited)).toEqual(["update setup"]);
      expect(edited.outputs["keptSandboxID"]).toBe(kept);
      expect(edited.outputs["bytesUploaded"]).toBe(localSize("single.txt"));
      expect(uploads(editRequests)).toHaveLength(1);
      expect(editRequests.filter((r) => r.startsWith("POST /files/compose"))).toEqual([]);
      expect(sandboxCreations(editRequests)).toEqual([]);
      expect(await sandbox.readText("/home/user/single.txt")).toBe("two, edited");
      expect(await sandbox.readText("/home/user/app/notes.txt")).toBe("changed in the sandbox\n");
      expect(await sandbox.readText("/home/user/marker.txt")).toBe("run one\nrun two, edited\n");
    },
  );

  phase("re-runs the commands without any upload when only the triggers change", async () => {
    // WHEN only the triggers change THEN the commands run again without any upload
    const { result: triggered, requests: triggerRequests } = await requestsDuring(() =>
      up(stack.dir, opts({ triggers: { revision: "2" } })),
    );
    expect(ops(triggered)).toEqual(["update setup"]);
    expect(triggered.outputs["bytesUploaded"]).toBe(0);
    expect(triggered.outputs["commandsRun"]).toBe(2);
    expect(uploads(triggerRequests)).toEqual([]);
    expect(await sandbox.readText("/home/user/marker.txt")).toBe(
      "run one\nrun two, edited\nrun two, edited\n",
    );
  });

  phase("provisions a new sandbox and kills the old one when the template changes", async () => {
    // WHEN the template changes THEN a new sandbox is provisioned and the old one killed
    altTemplate = await snapshotTemplate("scn-prov-alt");
    const replaced = await up(stack.dir, altOpts());
    expect(ops(replaced)).toContain("replace setup");
    keptB = replaced.outputs["keptSandboxID"] as string;
    expect(keptB).not.toBe(kept);
    expect(await sandboxStatus(kept)).toBe(404);
    const sandboxB = await clientOf(keptB);
    expect(await sandboxB.readText("/home/user/marker.txt")).toBe("run two, edited\n");
    expect(await sandboxB.readText("/home/user/from-alt.txt")).toBe("alt\n");
    // The replacement's snapshot (the same name) survives the old Provisioner's delete.
    expect(await snapshotIDs()).toContain(replaced.outputs["snapshotID"]);
    const fromNewSnapshot = await stack.svc.call("POST", "/sandboxes", {
      templateID: replaced.outputs["snapshotID"],
      timeout: 300,
    });
    expect(fromNewSnapshot.status).toBe(201);
    expect(await killStatus((fromNewSnapshot.body as { sandboxID: string }).sandboxID)).toBe(204);
  });

  phase(
    "keeps the Provisioner on refresh after its kept sandbox was killed out of band",
    async () => {
      // WHEN the kept sandbox is killed out of band THEN refresh keeps the
      // Provisioner (it still owns the snapshot) without the sandbox
      expect(await killStatus(keptB)).toBe(204);
      expect(ops(await refresh(stack.dir, altOpts()))).toEqual(["refresh-update setup"]);
    },
  );

  phase(
    "provisions a kept sandbox again on the next up, and destroys it and the snapshot",
    async () => {
      // AND the next up provisions a kept sandbox again
      const recreated = await up(stack.dir, altOpts());
      expect(ops(recreated)).toEqual(["update setup"]);
      const keptC = recreated.outputs["keptSandboxID"] as string;

      // WHEN destroyed THEN the kept sandbox and the snapshot template are gone
      const destroyed = await destroy(stack.dir, altOpts());
      expect(ops(destroyed)).toEqual(["delete setup"]);
      expect(destroyed.state.resources).toEqual([]);
      expect(await sandboxStatus(keptC)).toBe(404);
      expect(await snapshotIDs()).toEqual([altTemplate]);
      expect((await stack.svc.call("GET", "/templates/aliases/scn-prov-ready")).status).toBe(404);
    },
  );
});

describe("Provisioner through Pulumi", () => {
  it("fails when a command exits non-zero, naming it, and leaves no sandbox and no snapshot", async () => {
    const options = stackOptions(stack.svc, stack.dir, {
      args: provisionerArgs({
        metadata: { scenario: "broken" },
        snapshot: { name: "scn-prov-broken" },
        commands: [{ run: "echo about to fail >&2; exit 3" }],
        // keepSandbox would keep the failed run's sandbox for inspection, on purpose.
        keepSandbox: false,
      }),
    });
    options.stateFile = path.join(stack.dir, "broken-state.json");

    const failure = await failureOf(up(stack.dir, options));

    const errors = failure.result.errors.join("\n");
    const created = /created sandbox ([a-z0-9]+) from template base/.exec(failure.result.log);
    expect(created).not.toBeNull();
    const sandboxID = created![1];
    expect(errors).toContain('"echo about to fail >&2; exit 3"');
    expect(errors).toContain("exited with code 3");
    expect(errors).toContain("about to fail");
    expect(errors).toContain(sandboxID);
    expect(await sandboxStatus(sandboxID)).toBe(404);
    const metadataQuery = encodeURIComponent("scenario=broken");
    expect((await stack.svc.call("GET", `/v2/sandboxes?metadata=${metadataQuery}`)).body).toEqual(
      [],
    );
    expect((await stack.svc.call("GET", "/templates/aliases/scn-prov-broken")).status).toBe(404);
    expect(failure.result.state.resources.filter((r) => r.type.includes("Provisioner"))).toEqual(
      [],
    );
  });

  it("fails at check when inputs are invalid, listing every failure, without calling the service", async () => {
    const options = stackOptions(stack.svc, stack.dir, {
      args: provisionerArgs({
        sandboxID: "i0123456789abcdefghij",
        commands: [{ run: "ls", cmd: "/bin/ls" }],
        concurrency: 0,
      }),
    });
    options.stateFile = path.join(stack.dir, "invalid-state.json");

    const { result: failure, requests } = await requestsDuring(() =>
      failureOf(up(stack.dir, options)),
    );

    const text = [...failure.result.errors, failure.result.log].join("\n");
    expect(text).toMatch(/template.*exactly one of `template`/);
    expect(text).toMatch(/commands\[0\].*exactly one of `run`/);
    expect(text).toContain("concurrency");
    expect(requests).toEqual([]);
    expect(failure.result.state.resources).toEqual([]);
  });

  it("previews a new Provisioner without calling the service", async () => {
    const options = stackOptions(stack.svc, stack.dir, {
      args: provisionerArgs({ snapshot: { name: "scn-prov-preview" } }),
    });
    options.stateFile = path.join(stack.dir, "preview-state.json");

    const { result: previewed, requests } = await requestsDuring(() => preview(stack.dir, options));

    expect(ops(previewed)).toEqual(["create setup"]);
    expect(requests).toEqual([]);
  });
});
