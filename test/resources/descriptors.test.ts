/**
 * The descriptors as data, without the service: every field described with
 * schema metadata, shapes Terraform can express, rules that name real fields,
 * and a check that changes no value.
 */
import { z, type ZodType } from "zod";
import type { AnyDescriptor } from "../../src/resources/core/descriptor";
import {
  allDescriptors,
  dataSourceDescriptors,
  deletesFirst,
  resourceDescriptor,
  resourceDescriptors,
} from "../../src/resources/registry";

type JsonSchema = {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  additionalProperties?: boolean | JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
};

/** Every object property below `schema`, as `path` and its JSON schema. */
function properties(schema: JsonSchema, path = ""): Array<{ path: string; schema: JsonSchema }> {
  const found: Array<{ path: string; schema: JsonSchema }> = [];
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const at = path ? `${path}.${key}` : key;
    found.push({ path: at, schema: child });
    found.push(...properties(child, at));
  }
  if (schema.items) found.push(...properties(schema.items, `${path}[]`));
  if (typeof schema.additionalProperties === "object")
    found.push(...properties(schema.additionalProperties, `${path}{}`));
  for (const option of schema.anyOf ?? []) found.push(...properties(option, path));
  return found;
}

/** Schemas with no type at all (`z.unknown()`, `z.any()`), which Terraform cannot type. */
function untyped(schema: JsonSchema, path = "(root)"): string[] {
  const own =
    schema.type === undefined &&
    schema.anyOf === undefined &&
    schema.enum === undefined &&
    schema.const === undefined
      ? [path]
      : [];
  const nested = [
    ...Object.entries(schema.properties ?? {}).flatMap(([k, c]) => untyped(c, `${path}.${k}`)),
    ...(schema.items ? untyped(schema.items, `${path}[]`) : []),
    ...(typeof schema.additionalProperties === "object"
      ? untyped(schema.additionalProperties, `${path}{}`)
      : []),
    ...(schema.anyOf ?? []).flatMap((o) => untyped(o, path)),
  ];
  return [...own, ...nested];
}

function schemasOf(d: AnyDescriptor): Array<[string, z.ZodObject]> {
  return d.kind === "resource"
    ? [
        ["args", d.args],
        ["outputs", d.outputs],
      ]
    : [
        ["args", d.args],
        ["result", d.result],
      ];
}

const cases = allDescriptors.flatMap((d) =>
  schemasOf(d).map(([part, schema]) => ({ name: `${d.kind} ${d.typeName} ${part}`, schema })),
);

describe.each(cases)("$name", ({ schema }) => {
  const json = z.toJSONSchema(schema, { io: "input" }) as JsonSchema;

  it("publishes a description for every field, at every depth", () => {
    const undescribed = properties(json)
      .filter((p) => !p.schema.description?.trim())
      .map((p) => p.path);
    expect(undescribed).toEqual([]);
    // The adapters read the same text straight from the zod field.
    for (const [key, field] of Object.entries(schema.shape))
      expect([key, (field as z.ZodType).meta()?.description]).toEqual([key, expect.any(String)]);
  });

  it("types every field (no unknown or any, which Terraform cannot express)", () => {
    expect(untyped(json)).toEqual([]);
  });

  it("is strict: unknown keys are errors", () => {
    expect(json.additionalProperties).toBe(false);
  });
});

/** True when the dotted `path` (`build.fromImageRegistry.password`) names a field of `schema`. */
function hasField(schema: ZodType, path: string): boolean {
  let current: ZodType | undefined = schema;
  for (const key of path.split(".")) {
    while (current && !("shape" in current) && "unwrap" in current)
      current = (current as unknown as { unwrap(): ZodType }).unwrap();
    const shape: Record<string, ZodType> | undefined = (
      current as unknown as { shape?: Record<string, ZodType> } | undefined
    )?.shape;
    current = shape?.[key];
    if (!current) return false;
  }
  return true;
}

/** `{ a: { b: value } }` for path `a.b`. */
function nestedAt(path: string, value: unknown): Record<string, unknown> {
  return path
    .split(".")
    .reverse()
    .reduce<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>;
}

describe.each(resourceDescriptors.map((d) => ({ name: d.typeName, d })))(
  "resource $name rules",
  ({ d }) => {
    it("has a change rule for every input and an output rule for every output", () => {
      expect(Object.keys(d.changeRules).sort()).toEqual(Object.keys(d.args.shape).sort());
      expect(Object.keys(d.outputRules).sort()).toEqual(Object.keys(d.outputs.shape).sort());
    });

    it("names only real fields as sensitive, and never an output that is also an input", () => {
      for (const name of d.sensitiveInputs) expect(hasField(d.args, name)).toBe(true);
      for (const name of d.sensitiveOutputs) expect(Object.keys(d.outputs.shape)).toContain(name);
      const clash = Object.keys(d.outputs.shape).filter((k) => k in d.args.shape);
      expect(clash).toEqual([]);
    });

    it("serves the lifecycle of its own type", () => {
      expect(d.lifecycle.typeName).toBe(d.typeName);
      expect(resourceDescriptor(d.typeName)).toBe(d);
    });

    it("never shows a sensitive input's value in a check failure", () => {
      for (const name of d.sensitiveInputs) {
        // Wrong in type and in content, so check must report it.
        for (const wrong of [987654321, { NESTED: 987654321 }, ["987654321"]]) {
          const { failures } = d.lifecycle.check(nestedAt(name, wrong));
          const about = failures.filter(
            (f) => f.property === name || f.property.startsWith(`${name}.`),
          );
          expect(about.length).toBeGreaterThan(0);
          for (const f of about) {
            expect(f.reason).not.toContain("987654321");
            expect(f.reason).toContain("not shown: secret");
          }
        }
      }
    });
  },
);

describe("registry", () => {
  it("holds the six resources and the data sources, each name once", () => {
    expect(resourceDescriptors.map((d) => d.typeName)).toEqual([
      "Template",
      "Snapshot",
      "SandboxReader",
      "Provisioner",
      "Volume",
      "Secret",
    ]);
    expect(dataSourceDescriptors.map((d) => d.typeName)).toEqual([
      "sandbox",
      "sandboxes",
      "sandboxMetrics",
      "template",
      "snapshots",
    ]);
  });

  it("states the replacement order as data: snapshots, and Provisioners with a snapshot, delete first", () => {
    expect(deletesFirst(resourceDescriptor("Snapshot"), {})).toBe(true);
    expect(resourceDescriptor("Snapshot").replacement.reason).toBe(
      "a new snapshot with the same name needs the old one deleted first",
    );
    const provisioner = resourceDescriptor("Provisioner");
    expect(deletesFirst(provisioner, { template: "base" })).toBe(false);
    expect(deletesFirst(provisioner, { template: "base", snapshot: { name: "x" } })).toBe(true);
    expect(deletesFirst(resourceDescriptor("Template"), {})).toBe(false);
  });

  it("marks the sandbox access token sensitive wherever it is an output", () => {
    expect(resourceDescriptor("SandboxReader").sensitiveOutputs).toEqual(["envdAccessToken"]);
    expect(dataSourceDescriptors.find((d) => d.typeName === "sandbox")?.sensitiveOutputs).toEqual([
      "envdAccessToken",
    ]);
  });
});

/** Freezes `value` and everything in it, so any write throws. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** Valid inputs each resource would normalise if check were allowed to. */
const VALID: Record<string, Record<string, unknown>> = {
  Template: {
    name: " My-Team/Tools:V1 ",
    tags: ["Latest"],
    build: { fromTemplate: "base", steps: [{ run: ["a", "b"] }, { env: { A: "1" } }] },
  },
  Snapshot: { sandboxID: "iabc123", name: "My-Snap" },
  SandboxReader: { sandboxID: "iabc123" },
  Provisioner: {
    template: "Base",
    files: [{ source: "./x", destination: "/home/user/x" }],
    commands: [{ run: "true" }],
    triggers: { revision: "1" },
  },
  Volume: { name: "Work-Space", files: [{ source: "./seed", destination: "/seed" }] },
  Secret: { name: "API-Key", value: "v", metadata: { a: "b" } },
};

describe.each(resourceDescriptors.map((d) => ({ name: d.typeName, d })))(
  "$name check()",
  ({ d }) => {
    it("returns the very inputs it was given, changing no value (no case, no defaults)", () => {
      const raw = deepFreeze(structuredClone(VALID[d.typeName]));
      const before = JSON.stringify(raw);
      const result = d.lifecycle.check(raw);
      expect(result.failures).toEqual([]);
      expect(result.inputs).toBe(raw);
      expect(JSON.stringify(result.inputs)).toBe(before);
    });

    it("names an unknown key in its failure", () => {
      const result = d.lifecycle.check({ ...VALID[d.typeName], bogusField: 1 });
      expect(result.failures.map((f) => f.reason).join("\n")).toContain("bogusField");
    });
  },
);
