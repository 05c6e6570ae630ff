import { readFileSync } from "node:fs";
import { destroy, isSecret, refresh, up } from "../harness";
import { ops, plaintextOccurrences, pulumiStack, stackOptions } from "./support";
import { phases } from "../support/phases";

jest.setTimeout(600_000);

const stack = pulumiStack("snapshot-reader");

async function newSandbox(): Promise<{ sandboxID: string; envdAccessToken: string }> {
  const created = await stack.svc.call("POST", "/sandboxes", {
    templateID: "base",
    timeout: 900,
    secure: true,
  });
  expect(created.status).toBe(201);
  return created.body as { sandboxID: string; envdAccessToken: string };
}

async function snapshotNames(): Promise<string[]> {
  const listed = await stack.svc.call("GET", "/snapshots");
  return (listed.body as Array<{ snapshotID: string }>).map((s) => s.snapshotID);
}

describe("Snapshot and SandboxReader through Pulumi: one scenario, phase by phase", () => {
  const phase = phases();
  let sandbox: { sandboxID: string; envdAccessToken: string };
  const opts = (config: Record<string, unknown>) =>
    stackOptions(stack.svc, stack.dir, { sandboxID: sandbox.sandboxID, ...config });
  let snapshotID: string;
  let newSnapshotID: string;

  phase("reads a running secure sandbox and snapshots it, the token kept secret", async () => {
    sandbox = await newSandbox();
    const created = await up(stack.dir, opts({ snapshotName: "scn-snap" }));
    expect(ops(created).sort()).toEqual(["create reader", "create snap"]);
    expect(created.outputs["state"]).toBe("running");
    expect(created.outputs["templateID"]).toBe("base");
    snapshotID = created.outputs["snapshotID"] as string;
    expect(await snapshotNames()).toContain(snapshotID);

    // The token is a secret output: stored only inside a secret wrapper, never in clear.
    expect(created.secretOutputs).toContain("envdAccessToken");
    const reader = created.state.resources.find((r) => r.urn.endsWith("::reader"));
    expect(isSecret(reader?.outputs["envdAccessToken"])).toBe(true);
    const stateText = readFileSync(opts({}).stateFile, "utf8");
    expect(stateText).not.toContain(stack.svc.apiKey);
    expect(plaintextOccurrences(JSON.parse(stateText), sandbox.envdAccessToken)).toBe(0);
  });

  phase("does nothing when nothing changed", async () => {
    expect(ops(await up(stack.dir, opts({ snapshotName: "scn-snap" }))).sort()).toEqual([
      "same reader",
      "same snap",
    ]);
  });

  phase("updates the reader in place when metrics are asked for", async () => {
    const updated = await up(stack.dir, opts({ snapshotName: "scn-snap", includeMetrics: true }));
    expect(ops(updated).sort()).toEqual(["same snap", "update reader"]);
  });

  phase("replaces the snapshot when its name changes and deletes the old one", async () => {
    const replaced = await up(
      stack.dir,
      opts({ snapshotName: "scn-snap-b", includeMetrics: true }),
    );
    expect(ops(replaced)).toContain("replace snap");
    const names = await snapshotNames();
    expect(names).toContain(replaced.outputs["snapshotID"]);
    expect(names).not.toContain(snapshotID);
    newSnapshotID = replaced.outputs["snapshotID"] as string;
  });

  phase(
    "drops both on refresh when the snapshot and the sandbox went away out of band",
    async () => {
      expect(
        (await stack.svc.call("DELETE", `/templates/${encodeURIComponent(newSnapshotID)}`)).status,
      ).toBe(204);
      expect((await stack.svc.call("DELETE", `/sandboxes/${sandbox.sandboxID}`)).status).toBe(204);
      const refreshed = await refresh(
        stack.dir,
        opts({ snapshotName: "scn-snap-b", includeMetrics: true }),
      );
      expect(ops(refreshed).sort()).toEqual(["refresh-deleted reader", "refresh-deleted snap"]);
    },
  );

  phase("destroys, leaving nothing", async () => {
    const destroyed = await destroy(stack.dir, opts({ snapshotName: "scn-snap-b" }));
    expect(destroyed.state.resources).toEqual([]);
    expect(await snapshotNames()).toEqual([]);
  });
});

describe("Snapshot and SandboxReader through Pulumi", () => {
  it("fails when the sandbox to read does not exist, naming it", async () => {
    const options = stackOptions(stack.svc, stack.dir, {
      sandboxID: "inotthere000000000000",
      snapshotName: "scn-none",
    });
    options.stateFile = `${options.stateFile}.missing`;
    const failure = await up(stack.dir, options).then(
      () => undefined,
      (err: unknown) => err as { result: { errors: string[] } },
    );
    expect(failure?.result.errors.join("\n")).toMatch(
      /sandbox "inotthere000000000000" does not exist/,
    );
  });
});
