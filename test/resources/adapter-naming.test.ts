/**
 * Every input field of every resource, at every depth, walked through each
 * adapter's naming: a misspelling of it is refused with the path and the
 * nearest key as that adapter's user writes them (HCL snake_case for
 * Terraform, the generated bindings' camelCase for the CDK, the core's names
 * for Pulumi), and each name is one the adapter really publishes.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { check as pulumiCheck } from "../../src/pulumi/provider-runtime";
import { type PathStep, stepsText, unknownKeysIn } from "../../src/resources/core/unknown-keys";
import { defaultCatalog } from "../../src/terraform/catalog";
import { inputAttributes } from "../../src/terraform/schema/model";
import type { TfAttribute, TfType } from "../../src/terraform/schema/model";
import {
  type AttributeName,
  camelCase,
  cdkName,
  namedShape,
  terraformName,
} from "../../src/terraform/schema/naming";

const ROOT = path.resolve(__dirname, "..", "..");

/** One input field: the attributes from the top down to it (list and map levels noted). */
interface FieldPath {
  readonly chain: ReadonlyArray<{ attribute: TfAttribute; container: "list" | "map" | "none" }>;
}

function containerOf(type: TfType): { container: "list" | "map" | "none"; inner: TfType } {
  if ((type.kind === "list" || type.kind === "map") && type.element.kind === "object")
    return { container: type.kind, inner: type.element };
  return { container: "none", inner: type };
}

/** Every field below `attributes`, parents first. */
function fieldsOf(attributes: readonly TfAttribute[], above: FieldPath["chain"] = []): FieldPath[] {
  return attributes.flatMap((attribute) => {
    const { container, inner } = containerOf(attribute.type);
    const chain = [...above, { attribute, container }];
    return [{ chain }, ...(inner.kind === "object" ? fieldsOf(inner.attributes, chain) : [])];
  });
}

/**
 * A value holding a misspelling of the field's last name (`<name>x`), its
 * parents as one-element lists or maps where the schema has them; and the
 * path of the misspelt key in the naming `name`.
 */
function misspelt(field: FieldPath, name: AttributeName): { value: unknown; steps: PathStep[] } {
  const steps: PathStep[] = [];
  const last = field.chain.length - 1;
  const build = (i: number): unknown => {
    const { attribute, container } = field.chain[i];
    const key = i === last ? `${name(attribute)}x` : name(attribute);
    steps.push({ kind: "key", name: key });
    if (i === last) return { [key]: 1 };
    const inner = build(i + 1);
    if (container === "list") steps.splice(i + 1, 0, { kind: "index", index: 0 });
    if (container === "map") steps.splice(i + 1, 0, { kind: "mapKey", key: "k" });
    const child = container === "list" ? [inner] : container === "map" ? { k: inner } : inner;
    return { [key]: child };
  };
  return { value: build(0), steps };
}

const resources = [...defaultCatalog().resources.values()];
const nested = resources.flatMap((entry) =>
  fieldsOf(inputAttributes(entry.block))
    .filter((f) => f.chain.length > 1)
    .map(
      (f) => [entry.typeName, f.chain.map((c) => c.attribute.name).join("."), entry, f] as const,
    ),
);

describe("adapter naming of every field", () => {
  it("walks nested fields (the matrix is not empty)", () => {
    expect(nested.length).toBeGreaterThan(10);
  });

  it.each(nested)("%s %s: terraform names the misspelling in HCL", (_t, _p, entry, field) => {
    const { value, steps } = misspelt(field, terraformName);
    const found = unknownKeysIn(namedShape(inputAttributes(entry.block), terraformName), value);
    const leaf = field.chain[field.chain.length - 1].attribute;
    expect(found.map((f) => f.path)).toEqual([stepsText(steps)]);
    expect(found[0].reason).toContain(`did you mean ${JSON.stringify(leaf.name)}?`);
  });

  it.each(nested)(
    "%s %s: the CDK names it as the generated binding does",
    (_t, _p, entry, field) => {
      const { value, steps } = misspelt(field, cdkName);
      const found = unknownKeysIn(namedShape(inputAttributes(entry.block), cdkName), value);
      const leaf = field.chain[field.chain.length - 1].attribute;
      expect(found.map((f) => f.path)).toEqual([stepsText(steps)]);
      expect(found[0].reason).toContain(`did you mean ${JSON.stringify(camelCase(leaf.name))}?`);
      // The name is a property of the generated struct.
      const folder = entry.typeName.replace(/^sandboxiac_/, "").replace(/_/g, "-");
      const source = readFileSync(
        path.join(ROOT, "src", "gen", "cdktn", folder, "index.ts"),
        "utf8",
      );
      expect(source).toMatch(new RegExp(`readonly ${cdkName(leaf)}\\??:`));
    },
  );

  it.each(nested)("%s %s: pulumi names it as the program writes it", (_t, _p, entry, field) => {
    const coreName: AttributeName = (a) => a.coreName;
    const { value, steps } = misspelt(field, coreName);
    const { failures } = pulumiCheck(entry.descriptor.typeName, value as Record<string, unknown>);
    const leaf = field.chain[field.chain.length - 1].attribute;
    const failure = failures.find((f) => f.property === stepsText(steps));
    expect(failure?.reason).toContain(`did you mean ${JSON.stringify(leaf.coreName)}?`);
  });
});
