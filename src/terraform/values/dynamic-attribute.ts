/**
 * Values of dynamic attributes (cty's DynamicPseudoType, e.g. a `run` that
 * takes a string or a list). On the wire each value carries its own type:
 * msgpack sends `[<type as JSON bytes>, <value>]`, a stored JSON state holds
 * `{"value": …, "type": …}`. Inputs are passed back exactly as received (a
 * tuple stays a tuple): Terraform requires a planned input to equal the
 * configuration, type included.
 *
 * @module
 */
import { type TfValue, isUnknown } from "./dynamic-value";

/** cty's JSON type notation, as a dynamic value carries it. */
type CtyType = string | CtyType[] | { [name: string]: CtyType };

/** A dynamic value as stored in a JSON state. */
interface StoredDynamic {
  value: TfValue;
  type: CtyType;
}

function isStored(value: unknown): value is StoredDynamic {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const keys = Object.keys(value).sort();
  return keys.length === 2 && keys[0] === "type" && keys[1] === "value";
}

/** True for msgpack's `[type bytes, value]`. */
function isWire(value: unknown): value is [Uint8Array, TfValue] {
  return Array.isArray(value) && value.length === 2 && value[0] instanceof Uint8Array;
}

/**
 * The plain value inside a dynamic attribute's value, its type dropped: a
 * tuple or list is an array, an object or map a record. A value that carries
 * no type (the CDK's synthesized JSON, checked at synth) is taken as it is.
 */
export function dynamicToPlain(value: TfValue): TfValue {
  if (isWire(value)) return value[1];
  if (isStored(value)) return value.value;
  return value;
}

/** The cty type of a plain value (lists of strings as lists, other arrays as tuples). */
function typeOfPlain(value: TfValue): CtyType {
  if (typeof value === "string") return "string";
  if (typeof value === "number") return "number";
  if (typeof value === "boolean") return "bool";
  if (Array.isArray(value)) {
    return value.every((v) => typeof v === "string")
      ? ["list", "string"]
      : ["tuple", value.map(typeOfPlain)];
  }
  if (value !== null && typeof value === "object" && !isUnknown(value)) {
    return [
      "object",
      Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeOfPlain(v)])),
    ];
  }
  return "dynamic";
}

function wire(type: CtyType, value: TfValue): TfValue {
  return [new TextEncoder().encode(JSON.stringify(type)) as unknown as TfValue, value];
}

/**
 * A plain value (from the core, or from a state written before the attribute
 * was dynamic) as a dynamic value on the wire, with the type it has.
 */
export function plainToDynamic(value: TfValue): TfValue {
  if (value === null || isUnknown(value)) return value;
  return wire(typeOfPlain(value), value);
}

/** A dynamic value read from a stored JSON state, as msgpack carries it, its stored type kept. */
export function storedToDynamic(value: TfValue): TfValue {
  // A typed null keeps its type too, as cty stored it.
  if (isStored(value)) return wire(value.type, value.value);
  return plainToDynamic(value);
}
