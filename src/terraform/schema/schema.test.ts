import { z } from "zod";
import type { ResourceDescriptor } from "../../resources/core/descriptor";
import { UNKNOWN, decodeDynamic, encodeDynamic } from "../values/dynamic-value";
import { attributePath } from "../values/attribute-path";
import { blockCodec } from "../values/block-codec";
import { buildCatalog } from "./catalog";
import { providerSchemaJson } from "./schema-json";
import { snakeCase } from "./names";

const args = z.strictObject({
  name: z.string().meta({ description: "The name." }),
  cpuCount: z.number().int().optional().meta({ description: "vCPUs." }),
  build: z
    .strictObject({
      fromTemplate: z.string().optional().meta({ description: "Base template." }),
      steps: z
        .array(
          z.strictObject({
            run: z
              .union([z.string(), z.array(z.string())])
              .optional()
              .meta({ terraformListForm: true }),
            env: z.record(z.string(), z.string()).optional(),
          }),
        )
        .optional(),
    })
    .meta({ description: "What to build." }),
  apiToken: z.string().optional().meta({ description: "A secret input." }),
});
const outputs = z.strictObject({
  templateID: z.string().meta({ description: "The ID." }),
  names: z.array(z.string()).meta({ description: "Every name." }),
});

const descriptor = {
  kind: "resource",
  typeName: "Template",
  description: "A template.",
  version: 0,
  args,
  outputs,
  changeRules: { name: "replace" },
  outputRules: { templateID: "stable", names: "recomputed" },
  sensitiveInputs: ["apiToken"],
  sensitiveOutputs: [],
  replacement: { deleteFirst: false, reason: "" },
  lifecycle: {} as ResourceDescriptor["lifecycle"],
} satisfies ResourceDescriptor;

describe("provider schema from zod", () => {
  const catalog = buildCatalog([descriptor], []);
  const json = providerSchemaJson(catalog);
  const provider = json.provider_schemas["registry.terraform.io/sandbox-iac/sandboxiac"];
  const template = provider.resource_schemas["sandboxiac_template"];

  it("names attributes in snake_case of the core names", () => {
    expect(snakeCase("memoryMB")).toBe("memory_mb");
    expect(snakeCase("templateID")).toBe("template_id");
    expect(snakeCase("keptSandboxID")).toBe("kept_sandbox_id");
    expect(snakeCase("fromTemplate")).toBe("from_template");
    expect(Object.keys(template.block.attributes)).toEqual([
      "api_token",
      "build",
      "cpu_count",
      "id",
      "name",
      "names",
      "template_id",
    ]);
  });

  it("publishes objects as nested attributes, string | string[] as a list, descriptions and flags", () => {
    const attrs = template.block.attributes;
    expect(attrs.name).toEqual({
      type: "string",
      description: "The name.",
      description_kind: "markdown",
      required: true,
    });
    expect(attrs.cpu_count).toMatchObject({ type: "number", optional: true });
    expect(attrs.api_token).toMatchObject({ sensitive: true, optional: true });
    expect(attrs.template_id).toMatchObject({ type: "string", computed: true });
    expect(attrs.names).toMatchObject({ type: ["list", "string"], computed: true });
    expect(attrs.build.nested_type!.nesting_mode).toBe("single");
    const steps = attrs.build.nested_type!.attributes.steps;
    expect(steps.nested_type!.nesting_mode).toBe("list");
    expect(steps.nested_type!.attributes.run).toMatchObject({ type: ["list", "string"] });
    expect(steps.nested_type!.attributes.env).toMatchObject({ type: ["map", "string"] });
    expect(provider.provider.block.attributes.api_key).toMatchObject({ sensitive: true });
  });

  it("converts values both ways, keeping map keys and widening a single run string to a list", () => {
    const codec = blockCodec(catalog.resources.get("sandboxiac_template")!.block);
    const core = codec.read(
      encodeDynamic({
        id: null,
        name: "t",
        cpu_count: 2,
        api_token: null,
        build: {
          from_template: "base",
          steps: [
            { run: UNKNOWN, env: null },
            { run: null, env: { APP_HOME: "/opt" } },
          ],
        },
        template_id: null,
        names: null,
      }),
    )!.outputs;
    expect(core).toEqual({
      name: "t",
      cpuCount: 2,
      build: { fromTemplate: "base", steps: [{ run: UNKNOWN }, { env: { APP_HOME: "/opt" } }] },
    });
    const back = codec.fromCore({
      name: "t",
      build: { fromTemplate: "base", steps: [{ run: "echo" }] },
    });
    expect(back.build).toEqual({ from_template: "base", steps: [{ run: ["echo"], env: null }] });
    expect(back.template_id).toBeNull();
  });

  it("maps a core property path to a Terraform attribute path", () => {
    const block = catalog.resources.get("sandboxiac_template")!.block;
    const path = attributePath(block.attributes, "build.steps.1.env.APP_HOME");
    expect(path.steps.map((s) => s.selector)).toEqual([
      { case: "attributeName", value: "build" },
      { case: "attributeName", value: "steps" },
      { case: "elementKeyInt", value: 1n },
      { case: "attributeName", value: "env" },
      { case: "elementKeyString", value: "APP_HOME" },
    ]);
  });
});

describe("DynamicValue", () => {
  it("encodes unknown as msgpack extension type 0 and reads it back", () => {
    const dv = encodeDynamic({ a: UNKNOWN, b: [1, "x", null, true] });
    // fixext1 (0xd4), type 0, one data byte: cty's unknown.
    expect(Buffer.from(dv.msgpack).includes(Buffer.from([0xd4, 0x00, 0x00]))).toBe(true);
    expect(decodeDynamic(dv)).toEqual({ a: UNKNOWN, b: [1, "x", null, true] });
  });

  it("accepts JSON values", () => {
    const json = new TextEncoder().encode('{"name":"t","cpu_count":1}');
    expect(decodeDynamic({ json } as never)).toEqual({ name: "t", cpu_count: 1 });
  });
});
