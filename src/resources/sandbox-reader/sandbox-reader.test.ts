import { sandboxReaderLifecycle } from "./sandbox-reader.lifecycle";
import type { SandboxReaderOutputs } from "./sandbox-reader.args";

const baseDir = "/nonexistent";
const olds: SandboxReaderOutputs = {
  sandboxID: "iabc123",
  templateID: "base",
  clientID: "c",
  startedAt: "2026-01-01T00:00:00Z",
  endAt: "2026-01-01T01:00:00Z",
  envdVersion: "0.6.13",
  cpuCount: 2,
  memoryMB: 512,
  diskSizeMB: 1024,
  state: "running",
  metadata: {},
  envdAccessToken: "",
  domain: null,
  volumeMounts: [],
};

describe("SandboxReader check()", () => {
  it("accepts a sandbox ID with optional metrics", () => {
    expect(
      sandboxReaderLifecycle.check({ sandboxID: "iabc123", includeMetrics: true }).inputs,
    ).toEqual({
      sandboxID: "iabc123",
      includeMetrics: true,
    });
  });

  it("fails when every input is wrong, listing each", () => {
    const result = sandboxReaderLifecycle.check({ sandboxID: "", includeMetrics: "yes" });
    expect(result.failures.map((f) => f.property)).toEqual(["sandboxID", "includeMetrics"]);
    expect(result.failures[1]?.reason).toBe('must be true or false, got "yes"');
  });
});

describe("SandboxReader diff()", () => {
  it("ignores the fields it read from the service", async () => {
    expect(
      await sandboxReaderLifecycle.diff(
        { ...olds, state: "paused" },
        { sandboxID: "iabc123" },
        { baseDir },
      ),
    ).toEqual({
      changes: false,
      replaces: [],
      updates: [],
    });
  });

  it("replaces for another sandbox and updates for metrics", async () => {
    expect(
      (await sandboxReaderLifecycle.diff(olds, { sandboxID: "iother" }, { baseDir })).replaces,
    ).toEqual(["sandboxID"]);
    expect(
      (
        await sandboxReaderLifecycle.diff(
          olds,
          { sandboxID: "iabc123", includeMetrics: true },
          { baseDir },
        )
      ).updates,
    ).toEqual(["includeMetrics"]);
  });
});
