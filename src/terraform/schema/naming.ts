/**
 * A resource's fields in an adapter's naming, from the attribute tree that
 * publishes the schema: Terraform's snake_case (`timeout_seconds`) or the CDK
 * bindings' camelCase of it (`timeoutSeconds`, `sandboxId`). Messages about
 * fields are shown in the user's naming, never in the core's.
 *
 * @module
 */
import type { NamedShape } from "../../resources/core/unknown-keys";
import type { TfAttribute, TfType } from "./model";

/** How an adapter names an attribute: Terraform's name, or the CDK's property. */
export type AttributeName = (attribute: TfAttribute) => string;

/** Terraform's name: `timeout_seconds`. */
export const terraformName: AttributeName = (a) => a.name;

/**
 * The CDK bindings' property name: the camelCase of the Terraform name, as the
 * cdktf and cdktn generators write it (`sandbox_id` -> `sandboxId`). The
 * top-level `build` is `buildAttribute` in the constructs (a reserved name);
 * the construct check maps that one itself.
 */
export const cdkName: AttributeName = (a) => camelCase(a.name);

/** `timeout_seconds` -> `timeoutSeconds`, `memory_mb` -> `memoryMb`. */
export function camelCase(snake: string): string {
  return snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function shapeOf(type: TfType, name: AttributeName): NamedShape {
  switch (type.kind) {
    case "list":
    case "map":
      return { kind: type.kind, element: shapeOf(type.element, name) };
    case "object":
      return namedShape(type.attributes, name);
    default:
      return { kind: "value" };
  }
}

/** The fields of `attributes`, at every depth, in the naming `name`. */
export function namedShape(attributes: readonly TfAttribute[], name: AttributeName): NamedShape {
  return {
    kind: "object",
    fields: new Map(attributes.map((a) => [name(a), shapeOf(a.type, name)])),
  };
}

/** Every core name below `attributes` whose adapter name differs, with that name. */
export function renamedFields(
  attributes: readonly TfAttribute[],
  name: AttributeName,
  into = new Map<string, string>(),
): Map<string, string> {
  for (const a of attributes) {
    if (name(a) !== a.coreName) into.set(a.coreName, name(a));
    let type = a.type;
    while (type.kind === "list" || type.kind === "map") type = type.element;
    if (type.kind === "object") renamedFields(type.attributes, name, into);
  }
  return into;
}

/**
 * `text` (a check failure's reason, written with the core's field names) with
 * every field name in the adapter's naming: `must set exactly one of
 * fromTemplate or fromImage` -> `... from_template or from_image`.
 */
export function inAdapterNames(text: string, renames: ReadonlyMap<string, string>): string {
  if (renames.size === 0) return text;
  const names = [...renames.keys()].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(`(?<![\\w-])(${names.map(escape).join("|")})(?![\\w-])`, "g");
  return text.replace(pattern, (core) => renames.get(core) ?? core);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** One step of a core property path along the schema: an attribute, a list index, a map key. */
export type PropertyStep =
  | { kind: "attribute"; attribute: TfAttribute }
  | { kind: "index"; index: string }
  | { kind: "key"; key: string };

/**
 * The steps of a core property path (`build.steps.2.run`, as `check` reports
 * it) along the attribute tree that produced the published schema; a segment
 * the schema does not describe ends the walk there. The one walk behind the
 * path texts of messages and the attribute paths of diagnostics.
 */
export function propertySteps(
  attributes: readonly TfAttribute[],
  property: string,
): PropertyStep[] {
  const steps: PropertyStep[] = [];
  let attrs: readonly TfAttribute[] | undefined = attributes;
  let type: TfType | undefined;
  for (const segment of property.split(".").filter((s) => s !== "" && s !== "(inputs)")) {
    if (attrs) {
      const attr: TfAttribute | undefined = attrs.find(
        (a) => a.coreName === segment || a.name === segment,
      );
      if (!attr) break;
      steps.push({ kind: "attribute", attribute: attr });
      type = attr.type;
    } else if (type?.kind === "list" && /^\d+$/.test(segment)) {
      steps.push({ kind: "index", index: segment });
      type = type.element;
    } else if (type?.kind === "map") {
      steps.push({ kind: "key", key: segment });
      type = type.element;
    } else {
      break;
    }
    attrs = type?.kind === "object" ? type.attributes : undefined;
  }
  return steps;
}

/**
 * A core property path in the adapter's naming: `build.steps[2].run`
 * (Terraform), `buildAttribute.steps[2].run` (CDK). Segments past what the
 * schema describes are left out.
 */
export function propertyPathText(
  attributes: readonly TfAttribute[],
  property: string,
  name: AttributeName,
): string {
  let text = "";
  for (const step of propertySteps(attributes, property)) {
    if (step.kind === "attribute")
      text = text ? `${text}.${name(step.attribute)}` : name(step.attribute);
    else if (step.kind === "index") text += `[${step.index}]`;
    else text += `[${JSON.stringify(step.key)}]`;
  }
  return text || "(configuration)";
}
