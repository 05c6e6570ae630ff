/**
 * Planning ahead in the core (what Terraform's plan shows): inputs not known
 * yet, the change rules' default, which outputs stay known, plan-time outputs.
 */
import { z } from "zod";
import type { ResourceDescriptor } from "../../src/resources/core/descriptor";
import { diffByRules } from "../../src/resources/core/diff";
import type { ResourceLifecycle } from "../../src/resources/core/lifecycle";
import {
  outputKnownAfter,
  planChange,
  planTimeOutputs,
} from "../../src/resources/core/planned-change";

const UNKNOWN = Symbol("unknown");
const options = { baseDir: "/nowhere", isUnknown: (v: unknown) => v === UNKNOWN };

/** A descriptor whose diff compares by its rules and records what it was given. */
function thingDescriptor(seen: unknown[]): ResourceDescriptor {
  const changeRules = { name: "replace", tags: "update", note: "ignore" } as const;
  const lifecycle = {
    typeName: "Thing",
    diff(olds: object, news: object) {
      seen.push(news);
      return diffByRules(olds, news as Record<string, unknown>, changeRules);
    },
    async planOutputs() {
      return { digest: "d" };
    },
  } as unknown as ResourceLifecycle<unknown, object>;
  return {
    kind: "resource",
    typeName: "Thing",
    description: "A thing.",
    version: 0,
    args: z.strictObject({}),
    outputs: z.strictObject({}),
    changeRules,
    outputRules: {},
    sensitiveInputs: [],
    sensitiveOutputs: [],
    replacement: { deleteFirst: false, reason: "" },
    lifecycle,
  };
}

describe("planChange()", () => {
  it("counts an input holding an unknown value as changed by its rule (replace when it has none), and diffs it as unchanged", async () => {
    const seen: unknown[] = [];
    const olds = { name: "a", tags: ["x"], note: "n" };
    const news = { name: "a", tags: ["x", UNKNOWN], note: UNKNOWN, size: UNKNOWN };
    const change = await planChange(thingDescriptor(seen), olds, news, options);
    expect(seen).toEqual([{ name: "a", tags: ["x"], note: "n", size: undefined }]);
    expect(change).toMatchObject({ changes: true, replaces: ["size"], updates: ["tags"] });
  });

  it("is the lifecycle's own diff when every input is known", async () => {
    const seen: unknown[] = [];
    const change = await planChange(
      thingDescriptor(seen),
      { name: "a", tags: ["x"] },
      { name: "a", tags: ["y"], note: "changed" },
      options,
    );
    expect(change).toEqual({ changes: true, replaces: [], updates: ["tags"] });
    const none = await planChange(
      thingDescriptor(seen),
      { name: "a" },
      { name: "a", note: "n" },
      options,
    );
    expect(none.changes).toBe(false);
  });
});

describe("outputKnownAfter()", () => {
  const update = { changes: true, replaces: [], updates: ["tags"] };
  const replace = { changes: true, replaces: ["name"], updates: [] };
  const none = { changes: false, replaces: [], updates: [] };

  it("keeps an output known through an update unless its rule recomputes it there", () => {
    expect(outputKnownAfter("stable", update, "id-1")).toBe(true);
    expect(outputKnownAfter({ recomputedWith: ["build"] }, update, "b-1")).toBe(true);
    expect(outputKnownAfter({ recomputedWith: ["tags"] }, update, "b-1")).toBe(false);
    expect(outputKnownAfter("recomputed", update, ["n"])).toBe(false);
  });

  it("knows no output through a replacement, and none that has no value yet through an update", () => {
    expect(outputKnownAfter("stable", replace, "id-1")).toBe(false);
    expect(outputKnownAfter("stable", update, null)).toBe(false);
    expect(outputKnownAfter("recomputed", none, null)).toBe(true);
  });
});

describe("planTimeOutputs()", () => {
  it("gives none while an input is not known yet", async () => {
    const { lifecycle } = thingDescriptor([]);
    expect(await planTimeOutputs(lifecycle, { name: "a" }, options)).toEqual({ digest: "d" });
    expect(await planTimeOutputs(lifecycle, { name: ["a", UNKNOWN] }, options)).toEqual({});
  });
});
