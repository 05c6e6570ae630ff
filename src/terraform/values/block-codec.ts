/**
 * The one codec between Terraform's objects and the core's values, per
 * schema block (a resource's, a data source's, the provider's): a config,
 * plan or state is decoded once and read once against the block's types into
 * the core's inputs and outputs; a new state is written once from the core's
 * outputs. Terraform's shape: snake_case names, every attribute present, null
 * for unset, {@link UNKNOWN} for cty's unknown. The core's: camelCase names,
 * unset fields left out, {@link UNKNOWN} kept where it stands (the core's
 * planning, `resources/core/planned-change.ts`, decides what an unknown
 * means).
 *
 * @module
 */
import type { DynamicValue } from "../../gen/terraform/tfplugin6_pb";
import { registerSecretsIn } from "../../errors";
import { ID_ATTRIBUTE } from "../schema/blocks";
import {
  type TfAttribute,
  type TfBlock,
  type TfType,
  computedOnlyAttributes,
  inputAttributes,
} from "../schema/model";
import { dynamicToPlain, plainToDynamic, storedToDynamic } from "./dynamic-attribute";
import {
  type TfValue,
  UNKNOWN,
  decodeDynamic,
  decodeJson,
  encodeDynamic,
  isUnknown,
} from "./dynamic-value";

/** A core value: plain JS, `undefined` for unset, {@link UNKNOWN} where not known yet. */
type CoreValue = unknown;

/** A Terraform object as received or sent (attribute name -> value). */
export type TfObject = Record<string, TfValue>;

/** One Terraform object read against its block. */
export interface DecodedObject {
  /** As Terraform sent it: inputs go back exactly so (a tuple stays a tuple). */
  readonly terraform: TfObject;
  /** The inputs the user writes, in core names. */
  readonly inputs: Record<string, CoreValue>;
  /** Every attribute but `id` (inputs included), in core names: what the lifecycle stores. */
  readonly outputs: Record<string, CoreValue>;
  /** The `id` attribute; empty where there is none. */
  readonly id: string;
}

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
        Object.entries(value as TfObject).map(([k, v]) => [k, toCore(type.element, v)]),
      );
    case "object":
      return objectToCore(type.attributes, value as TfObject);
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

/** A nested Terraform object as a core object (unset attributes left out). */
function objectToCore(
  attributes: readonly TfAttribute[],
  value: TfObject,
): Record<string, CoreValue> {
  const out: Record<string, CoreValue> = {};
  for (const attr of attributes) {
    const v = toCore(attr.type, value[attr.name]);
    if (v !== undefined) out[attr.coreName] = v;
  }
  return out;
}

/** A core value as a Terraform value of type `type` (every object attribute present). */
function toTerraform(type: TfType, value: CoreValue, stringOrList = false): TfValue {
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
      return objectToTerraform(type.attributes, value as Record<string, CoreValue>);
  }
}

/** A core object as a Terraform object with every attribute (null where unset). */
function objectToTerraform(
  attributes: readonly TfAttribute[],
  value: Record<string, CoreValue>,
): TfObject {
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
        Object.entries(value as TfObject).map(([k, v]) => [k, storedValue(type.element, v)]),
      );
    case "object":
      return storedObject(type.attributes, value as TfObject);
  }
}

/**
 * A stored JSON state reshaped to the current schema: attributes added since
 * are null, removed ones dropped, and a dynamic value keeps the type it was
 * stored with (a round trip through core values would lose it, and Terraform
 * would then plan an update of every resource at every plan).
 */
function storedObject(attributes: readonly TfAttribute[], value: TfObject): TfObject {
  return Object.fromEntries(attributes.map((a) => [a.name, storedValue(a.type, value[a.name])]));
}

/** The codec of one block; {@link blockCodec} makes it. */
export interface BlockCodec {
  readonly block: TfBlock;
  /** Attributes the user writes (required or optional, computed or not). */
  readonly inputs: readonly TfAttribute[];
  /** Attributes only the provider sets (`id` included for a resource). */
  readonly computedOnly: readonly TfAttribute[];
  /** The object in a `DynamicValue`, as Terraform sent it; null where there is none. */
  decode(value: DynamicValue | undefined): TfObject | null;
  /**
   * A configuration, read: the values of sensitive inputs become known
   * secrets, redacted by value in every log line and diagnostic of this process.
   */
  config(value: DynamicValue | undefined): DecodedObject | null;
  /** A plan, a stored state or the provider block, read (no secret registered: see {@link config}). */
  read(value: DynamicValue | undefined): DecodedObject | null;
  /** An object already decoded (a CDK construct's synthesized attributes), read as a configuration. */
  configObject(object: TfObject | null): DecodedObject | null;
  /** A core value of `attribute` as Terraform's. */
  value(attribute: TfAttribute, value: CoreValue): TfValue;
  /**
   * `base` (a plan, a config, a state) with what the service reported:
   * computed-only attributes from `outputs` (and `id`), optional + computed
   * ones where `base` left them null or unknown. Inputs stay exactly as in
   * `base` (as the user wrote them).
   */
  withOutputs(base: TfObject, outputs: object, id: string | undefined): TfObject;
  /** A whole object from core values (an import: no configuration to start from). */
  fromCore(values: object): TfObject;
  /**
   * A raw JSON state (`RawState.json`) reshaped to the current schema:
   * attributes added since are null, removed ones dropped, dynamic values
   * with their stored types.
   */
  upgrade(json: Uint8Array): TfObject | null;
  /** The `DynamicValue` of an object shaped by this codec (every attribute present). */
  encode(object: TfObject | null): DynamicValue;
}

const codecs = new WeakMap<TfBlock, BlockCodec>();

/** The codec of `block` (made once per block). */
export function blockCodec(block: TfBlock): BlockCodec {
  let codec = codecs.get(block);
  if (!codec) {
    codec = makeCodec(block);
    codecs.set(block, codec);
  }
  return codec;
}

function makeCodec(block: TfBlock): BlockCodec {
  const inputs = inputAttributes(block);
  const inputNames = new Set(inputs.map((a) => a.name));
  const computedOnly = computedOnlyAttributes(block);

  function readObject(object: TfObject | null, secrets: boolean): DecodedObject | null {
    if (object === null) return null;
    const coreInputs: Record<string, CoreValue> = {};
    const outputs: Record<string, CoreValue> = {};
    for (const attr of block.attributes) {
      const given = object[attr.name];
      const input = inputNames.has(attr.name);
      if (input && secrets && attr.sensitive) registerSecretsIn(given);
      const v = toCore(attr.type, given);
      if (v === undefined) continue;
      if (input) coreInputs[attr.coreName] = v;
      if (attr.name !== ID_ATTRIBUTE) outputs[attr.coreName] = v;
    }
    const id = object[ID_ATTRIBUTE];
    return {
      terraform: object,
      inputs: coreInputs,
      outputs,
      id: typeof id === "string" ? id : "",
    };
  }

  const decode = (value: DynamicValue | undefined) => decodeDynamic(value) as TfObject | null;

  return {
    block,
    inputs,
    computedOnly,
    decode,
    config: (value) => readObject(decode(value), true),
    read: (value) => readObject(decode(value), false),
    configObject: (object) => readObject(object, true),
    value: (attr, value) => toTerraform(attr.type, value, attr.stringOrList),
    withOutputs(base, outputs, id) {
      const out: TfObject = { ...base };
      for (const attr of block.attributes) {
        if (!attr.computed) continue;
        const given = base[attr.name];
        // An optional + computed attribute the user set keeps the user's value.
        if (inputNames.has(attr.name) && given !== undefined && given !== null && !isUnknown(given))
          continue;
        out[attr.name] =
          attr.name === ID_ATTRIBUTE && id !== undefined
            ? id
            : toTerraform(
                attr.type,
                (outputs as Record<string, CoreValue>)[attr.coreName],
                attr.stringOrList,
              );
      }
      return out;
    },
    fromCore: (values) => objectToTerraform(block.attributes, values as Record<string, CoreValue>),
    upgrade(json) {
      const raw = json.length === 0 ? null : decodeJson(json);
      return raw === null ? null : storedObject(block.attributes, raw as TfObject);
    },
    encode: (object) => encodeDynamic(object),
  };
}
