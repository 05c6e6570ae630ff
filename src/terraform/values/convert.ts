/**
 * Values and attribute paths between Terraform's shape (snake_case names,
 * every attribute present, null for unset) and the core's (camelCase names,
 * unset fields left out), walking the same attribute tree that produced the
 * published schema.
 *
 * @module
 */
import { create } from "@bufbuild/protobuf";
import {
  type AttributePath,
  AttributePathSchema,
  AttributePath_StepSchema,
} from "../../gen/terraform/tfplugin6_pb";
import type { TfAttribute, TfType } from "../schema/model";
import { type TfValue, UNKNOWN, isUnknown } from "./dynamic-value";
import { dynamicToPlain, plainToDynamic, storedToDynamic } from "./dynamic-attribute";

/** A core value: plain JS, `undefined` for unset, {@link UNKNOWN} where not known yet. */
export type CoreValue = unknown;

/** A Terraform value of type `type` as the core value (names in camelCase, nulls dropped). */
function toCore(type: TfType, value: TfValue | undefined): CoreValue {
  if (value === null || value === undefined) return undefined;
  if (isUnknown(value)) return UNKNOWN;
  switch (type.kind) {
    case "dynamic":
      return plainToCore(dynamicToPlain(value));
    case "string":
      return value;
    case "number":
      // cty sends numbers too large for a float64 as strings.
      return typeof value === "string" ? Number(value) : value;
    case "bool":
      return value;
    case "list":
      return (value as TfValue[]).map((v) => toCore(type.element, v));
    case "map":
      return Object.fromEntries(
        Object.entries(value as Record<string, TfValue>).map(([k, v]) => [
          k,
          toCore(type.element, v),
        ]),
      );
    case "object":
      return objectToCore(type.attributes, value as Record<string, TfValue>);
  }
}

/** A value of no declared type (inside a dynamic attribute) as a core value; the core's schema checks its type. */
function plainToCore(value: TfValue): CoreValue {
  if (value === null) return undefined;
  if (isUnknown(value)) return UNKNOWN;
  if (Array.isArray(value)) return value.map(plainToCore);
  if (typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plainToCore(v)]));
  return value;
}

/** The attributes of a Terraform object as a core object (unset attributes left out). */
export function objectToCore(
  attributes: readonly TfAttribute[],
  value: Record<string, TfValue> | null,
): Record<string, CoreValue> {
  const out: Record<string, CoreValue> = {};
  if (value === null) return out;
  for (const attr of attributes) {
    const v = toCore(attr.type, value[attr.name]);
    if (v !== undefined) out[attr.coreName] = v;
  }
  return out;
}

/** A core value as a Terraform value of type `type` (every object attribute present). */
export function toTerraform(type: TfType, value: CoreValue, stringOrList = false): TfValue {
  if (value === null || value === undefined) return null;
  if (isUnknown(value)) return UNKNOWN;
  switch (type.kind) {
    case "dynamic":
      return plainToDynamic(value as TfValue);
    case "string":
      return typeof value === "string" ? value : JSON.stringify(value);
    case "number":
      return Number(value);
    case "bool":
      return Boolean(value);
    case "list": {
      const items = stringOrList && typeof value === "string" ? [value] : (value as unknown[]);
      return items.map((v) => toTerraform(type.element, v));
    }
    case "map":
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => [
          k,
          toTerraform(type.element, v),
        ]),
      );
    case "object":
      return objectToTerraform(type.attributes, value as Record<string, unknown>);
  }
}

/** A core object as a Terraform object with every attribute (null where unset). */
export function objectToTerraform(
  attributes: readonly TfAttribute[],
  value: Record<string, CoreValue>,
): Record<string, TfValue> {
  return Object.fromEntries(
    attributes.map((a) => [a.name, toTerraform(a.type, value[a.coreName], a.stringOrList)]),
  );
}

/** A value of a stored JSON state as a Terraform value of type `type` (see {@link storedObject}). */
function storedValue(type: TfType, value: TfValue | undefined): TfValue {
  if (value === null || value === undefined) return null;
  switch (type.kind) {
    case "dynamic":
      return storedToDynamic(value);
    case "number":
      return typeof value === "string" ? Number(value) : value;
    case "string":
    case "bool":
      return value;
    case "list":
      return (value as TfValue[]).map((v) => storedValue(type.element, v));
    case "map":
      return Object.fromEntries(
        Object.entries(value as Record<string, TfValue>).map(([k, v]) => [
          k,
          storedValue(type.element, v),
        ]),
      );
    case "object":
      return storedObject(type.attributes, value as Record<string, TfValue>);
  }
}

/**
 * A stored JSON state reshaped to the current schema: attributes added since
 * are null, removed ones dropped, and a dynamic value keeps the type it was
 * stored with (a round trip through core values would lose it, and Terraform
 * would then plan an update of every resource at every plan).
 */
export function storedObject(
  attributes: readonly TfAttribute[],
  value: Record<string, TfValue>,
): Record<string, TfValue> {
  return Object.fromEntries(attributes.map((a) => [a.name, storedValue(a.type, value[a.name])]));
}

/** True when `value` is or holds an unknown value. */
export function containsUnknown(value: unknown): boolean {
  if (isUnknown(value)) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (value !== null && typeof value === "object")
    return Object.values(value).some(containsUnknown);
  return false;
}

/**
 * A core property path (`build.steps.2.run`, as `check` reports it) as a
 * Terraform attribute path (`build.steps[2].run`). Segments that do not match
 * the schema end the path where it stopped matching.
 */
export function attributePath(attributes: readonly TfAttribute[], property: string): AttributePath {
  const steps = [];
  let attrs: readonly TfAttribute[] | undefined = attributes;
  let type: TfType | undefined;
  for (const segment of property.split(".").filter((s) => s !== "" && s !== "(inputs)")) {
    if (attrs) {
      const attr: TfAttribute | undefined = attrs.find(
        (a) => a.coreName === segment || a.name === segment,
      );
      if (!attr) break;
      steps.push(
        create(AttributePath_StepSchema, { selector: { case: "attributeName", value: attr.name } }),
      );
      type = attr.type;
    } else if (type?.kind === "list" && /^\d+$/.test(segment)) {
      steps.push(
        create(AttributePath_StepSchema, {
          selector: { case: "elementKeyInt", value: BigInt(segment) },
        }),
      );
      type = type.element;
    } else if (type?.kind === "map") {
      steps.push(
        create(AttributePath_StepSchema, {
          selector: { case: "elementKeyString", value: segment },
        }),
      );
      type = type.element;
    } else {
      break;
    }
    attrs = type?.kind === "object" ? type.attributes : undefined;
  }
  return create(AttributePathSchema, { steps });
}

/** The path of one top-level attribute. */
export function topLevelPath(name: string): AttributePath {
  return create(AttributePathSchema, {
    steps: [create(AttributePath_StepSchema, { selector: { case: "attributeName", value: name } })],
  });
}
