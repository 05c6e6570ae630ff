/**
 * Terraform's `DynamicValue`: msgpack (cty's encoding, with an unknown value
 * as msgpack extension type 0) or JSON (raw stored state). Decoded values are
 * plain JS trees in Terraform's names, with {@link UNKNOWN} where a value is
 * not known yet.
 *
 * @module
 */
import { ExtensionCodec, decode, encode } from "@msgpack/msgpack";
import { create } from "@bufbuild/protobuf";
import { type DynamicValue, DynamicValueSchema } from "../../gen/terraform/tfplugin6_pb";

/** The value Terraform will know only after apply (cty's unknown). */
export const UNKNOWN: unique symbol = Symbol("unknown");

/** A Terraform value in the provider: null, a primitive, a list, a map/object, or unknown. */
export type TfValue =
  null | string | number | boolean | typeof UNKNOWN | TfValue[] | { [key: string]: TfValue };

/** True for {@link UNKNOWN}. */
export function isUnknown(value: unknown): value is typeof UNKNOWN {
  return value === UNKNOWN;
}

/** cty's extension types for unknown values: 0, and 12 for an unknown with refinements. */
const UNKNOWN_EXT = 0;
const REFINED_UNKNOWN_EXT = 12;

const codec = new ExtensionCodec();
codec.register({
  type: UNKNOWN_EXT,
  encode: (value: unknown) => (value === UNKNOWN ? new Uint8Array([0]) : null),
  decode: () => UNKNOWN,
});
codec.register({
  type: REFINED_UNKNOWN_EXT,
  encode: () => null,
  // The refinements (e.g. "not null", a string prefix) are hints; the value is still unknown.
  decode: () => UNKNOWN,
});

/** Decodes a `DynamicValue` (msgpack, else JSON). An empty value is null. */
export function decodeDynamic(value: DynamicValue | undefined): TfValue {
  if (value?.msgpack && value.msgpack.length > 0) {
    return decode(value.msgpack, { extensionCodec: codec, useBigInt64: false }) as TfValue;
  }
  if (value?.json && value.json.length > 0) {
    return JSON.parse(new TextDecoder().decode(value.json)) as TfValue;
  }
  return null;
}

/** Decodes raw JSON bytes (`RawState.json`). Empty bytes are null. */
export function decodeJson(json: Uint8Array): TfValue {
  return json.length === 0 ? null : (JSON.parse(new TextDecoder().decode(json)) as TfValue);
}

/**
 * Encodes a value as msgpack. The caller shapes it to the schema first
 * (every attribute present, null where unset): cty reads objects by name and
 * rejects a missing attribute.
 */
export function encodeDynamic(value: TfValue): DynamicValue {
  return create(DynamicValueSchema, {
    msgpack: encode(value, { extensionCodec: codec, ignoreUndefined: false }),
  });
}
