/**
 * Terraform objects of a resource or data source, split the way the provider
 * needs them: inputs (what the user writes), computed attributes, and the
 * conversions between a Terraform object and the core's inputs and outputs.
 *
 * @module
 */
import { registerSecretsIn } from "../../errors";
import type { TfAttribute, TfBlock } from "../schema/model";
import { ID_ATTRIBUTE } from "../schema/blocks";
import { decodeDynamic, type TfValue } from "../values/dynamic-value";
import { type CoreValue, objectToCore, toTerraform } from "../values/convert";

/** A decoded Terraform object (attribute name -> value). */
export type TfObject = Record<string, TfValue>;

/** Decodes a state, plan or config: an object, or null where there is none. */
export function decodeObject(value: Parameters<typeof decodeDynamic>[0]): TfObject | null {
  return decodeDynamic(value) as TfObject | null;
}

/** Attributes the user writes (required or optional, computed or not). */
export function inputAttributes(block: TfBlock): TfAttribute[] {
  return block.attributes.filter((a) => a.required || a.optional);
}

/** Attributes only the provider sets. */
export function computedOnlyAttributes(block: TfBlock): TfAttribute[] {
  return block.attributes.filter((a) => a.computed && !a.required && !a.optional);
}

/**
 * The core inputs in a Terraform object (config or state). The values of
 * sensitive attributes become known secrets, redacted by value in every log
 * line and diagnostic of this process.
 */
export function coreInputs(block: TfBlock, value: TfObject | null): Record<string, CoreValue> {
  const attributes = inputAttributes(block);
  for (const a of attributes) if (a.sensitive && value) registerSecretsIn(value[a.name]);
  return objectToCore(attributes, value);
}

/** The core outputs (inputs included, the `id` attribute left out) in a stored state. */
export function coreOutputs(block: TfBlock, state: TfObject): Record<string, CoreValue> {
  return objectToCore(
    block.attributes.filter((a) => a.name !== ID_ATTRIBUTE),
    state,
  );
}

/** The id stored in a state. */
export function stateId(state: TfObject): string {
  const id = state[ID_ATTRIBUTE];
  return typeof id === "string" ? id : "";
}

/**
 * `planned` with what the service reported: computed-only attributes from
 * `outputs` (and `id`), optional + computed ones where the plan left them unknown.
 * Inputs stay exactly as planned (as the user wrote them).
 */
export function withOutputs(
  block: TfBlock,
  planned: TfObject,
  outputs: Record<string, unknown>,
  id: string | undefined,
): TfObject {
  const out: TfObject = { ...planned };
  for (const attr of block.attributes) {
    if (!attr.computed) continue;
    const computedOnly = !attr.required && !attr.optional;
    const given = planned[attr.name];
    // An optional + computed attribute the user set keeps the user's value.
    if (!computedOnly && given !== undefined && given !== null && !isUnknownValue(given)) continue;
    out[attr.name] =
      attr.name === ID_ATTRIBUTE && id !== undefined
        ? id
        : toTerraform(attr.type, outputs[attr.coreName], attr.stringOrList);
  }
  return out;
}

function isUnknownValue(value: TfValue | undefined): boolean {
  return typeof value === "symbol";
}
