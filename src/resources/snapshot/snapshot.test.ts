import { snapshotLifecycle } from "./snapshot.lifecycle";
import type { SnapshotOutputs } from "./snapshot.args";

const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const isUnknown = (v: unknown) => v === UNKNOWN;
const baseDir = "/nonexistent";
const olds: SnapshotOutputs = {
  sandboxID: "iabc123",
  name: "ready",
  snapshotID: "ready:default",
  names: ["ready:default"],
};

describe("Snapshot check()", () => {
  it("accepts a sandbox ID and a name in any case, returning them unchanged", () => {
    expect(snapshotLifecycle.check({ sandboxID: "iabc123", name: " Ready " })).toEqual({
      inputs: { sandboxID: "iabc123", name: " Ready " },
      failures: [],
    });
  });

  it("accepts a Provisioner's keptSandboxRef as the sandbox and refuses a ref to no sandbox ID", () => {
    expect(
      snapshotLifecycle.check({ sandboxID: "iabc123@run-1f2e", name: "ready" }).failures,
    ).toEqual([]);
    expect(
      snapshotLifecycle
        .check({ sandboxID: "Bad ID@run-1", name: "ready" })
        .failures.map((f) => f.property),
    ).toEqual(["sandboxID"]);
  });

  it("fails when both inputs are wrong, listing both", () => {
    const result = snapshotLifecycle.check({ sandboxID: "Bad ID", name: "a/b/c" });
    expect(result.failures.map((f) => f.property)).toEqual(["sandboxID", "name"]);
  });

  it("fails when an input is missing or unexpected", () => {
    const result = snapshotLifecycle.check({ name: "x", extra: 1 });
    expect(result.failures.map((f) => f.property).sort()).toEqual(["extra", "sandboxID"]);
  });

  it("tolerates a sandbox ID not known yet", () => {
    expect(
      snapshotLifecycle.check({ sandboxID: UNKNOWN, name: "ready" }, { isUnknown }).failures,
    ).toEqual([]);
  });
});

describe("Snapshot diff()", () => {
  it("reports no change for the same inputs", async () => {
    expect(
      (await snapshotLifecycle.diff(olds, { sandboxID: "iabc123", name: "ready" }, { baseDir }))
        .changes,
    ).toBe(false);
  });

  it("replaces on any change, deleting the old one first when the name (its id) stays", async () => {
    const result = await snapshotLifecycle.diff(
      olds,
      { sandboxID: "iother", name: "ready" },
      { baseDir },
    );
    expect(result).toEqual({
      changes: true,
      replaces: ["sandboxID"],
      updates: [],
      deleteBeforeReplace: true,
    });
    const renamed = await snapshotLifecycle.diff(
      olds,
      { sandboxID: "iabc123", name: "v2" },
      { baseDir },
    );
    expect(renamed.replaces).toEqual(["name"]);
    expect(renamed.deleteBeforeReplace).toBeUndefined();
  });

  it("retakes the snapshot when a Provisioner's keptSandboxRef names a new run of the same sandbox", async () => {
    const ofRun = { ...olds, sandboxID: "iabc123@run-1" };
    const result = await snapshotLifecycle.diff(
      ofRun,
      { sandboxID: "iabc123@run-2", name: "ready" },
      { baseDir },
    );
    expect(result).toMatchObject({ replaces: ["sandboxID"], deleteBeforeReplace: true });
  });

  it("sees no change when only the name's case differs", async () => {
    expect(
      (await snapshotLifecycle.diff(olds, { sandboxID: "iabc123", name: "READY" }, { baseDir }))
        .changes,
    ).toBe(false);
  });

  it("adopts the configured sandbox of an imported snapshot without replacing it", async () => {
    const { sandboxID: _none, ...imported } = olds;
    const result = await snapshotLifecycle.diff(
      imported as SnapshotOutputs,
      { sandboxID: "iabc123", name: "ready" },
      { baseDir },
    );
    expect(result).toEqual({ changes: true, replaces: [], updates: ["sandboxID"] });
  });

  it("replaces when the sandbox is not known yet", async () => {
    const result = await snapshotLifecycle.diff(
      olds,
      { sandboxID: UNKNOWN, name: "ready" },
      { isUnknown, baseDir },
    );
    expect(result.replaces).toEqual(["sandboxID"]);
  });
});
