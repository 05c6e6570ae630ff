import { secretLifecycle } from "./secret.lifecycle";
import type { SecretOutputs } from "./secret.args";

const baseDir = "/nonexistent";
const olds: SecretOutputs = {
  name: "api-key",
  value: "old-value",
  metadata: { a: "b" },
  secretID: "sec_0123",
  currentVersion: 1,
  createdAt: "2026-01-01T00:00:00Z",
  updatedAt: "2026-01-01T00:00:00Z",
};

describe("Secret check()", () => {
  it("lists every bad input, never repeating the value", () => {
    const result = secretLifecycle.check({ name: "sec_x", value: 12345678 });
    expect(result.failures.map((f) => f.property).sort()).toEqual(["name", "value"]);
    expect(JSON.stringify(result.failures)).not.toContain("12345678");
  });

  it("refuses names with characters outside [a-zA-Z0-9_-]", () => {
    expect(secretLifecycle.check({ name: "has space", value: "v" }).failures[0]?.property).toBe(
      "name",
    );
  });
});

describe("Secret diff()", () => {
  it("sees no change when only the name's case differs", async () => {
    const same = { name: "API-Key", value: "old-value", metadata: { a: "b" } };
    expect((await secretLifecycle.diff(olds, same, { baseDir })).changes).toBe(false);
  });

  it("updates in place on a new value or metadata, replaces on a new name", async () => {
    const value = await secretLifecycle.diff(olds, { ...olds, value: "new" }, { baseDir });
    expect(value).toMatchObject({ changes: true, updates: ["value"], replaces: [] });
    const meta = await secretLifecycle.diff(olds, { ...olds, metadata: {} }, { baseDir });
    expect(meta.updates).toEqual(["metadata"]);
    const renamed = await secretLifecycle.diff(olds, { ...olds, name: "other" }, { baseDir });
    expect(renamed.replaces).toEqual(["name"]);
  });
});
