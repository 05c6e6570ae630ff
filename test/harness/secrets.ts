/**
 * Wire-form values (protobuf `Struct` JSON, `runtime/rpc.ts`) and the engine's
 * secret handling for a plugin that answers `acceptSecrets=false`: markers are
 * stripped before every call and re-annotated on the outputs afterwards.
 *
 * @module
 */

/** The key that marks a special object in wire form. */
export const SPECIAL_SIG_KEY = "4dabf18193072939515e22adb298388d";
/** The special-key value of a secret: `{ [SPECIAL_SIG_KEY]: SECRET_SIG, value }`. */
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
/** The special-key value of a resource reference: `{ urn, id, packageVersion }`. */
const RESOURCE_REF_SIG = "5cf8f73096256a8f31e491e813e4eb8e";
/** The plain string standing for a value not known yet (preview). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** A JSON value as carried in a protobuf `Struct`. */
export type Wire = null | boolean | number | string | Wire[] | { [key: string]: Wire };
/** A property map in wire form. */
export type WireMap = Record<string, Wire>;

function isObject(v: unknown): v is { [key: string]: Wire } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** True when `v` is a sig-wrapped secret. */
export function isSecret(v: unknown): v is { value: Wire } {
  return isObject(v) && v[SPECIAL_SIG_KEY] === SECRET_SIG;
}

/** Wraps `v` as a secret, unless it already is one. */
function makeSecret(v: Wire): Wire {
  return isSecret(v) ? v : { [SPECIAL_SIG_KEY]: SECRET_SIG, value: v };
}

/** True when `v` is or contains a secret anywhere. */
export function containsSecret(v: unknown): boolean {
  if (isSecret(v)) return true;
  if (Array.isArray(v)) return v.some(containsSecret);
  if (isObject(v)) return Object.values(v).some(containsSecret);
  return false;
}

/** Removes every secret marker, keeping the values: what the plugin receives. */
export function stripSecrets<T extends Wire>(v: T): T {
  if (isSecret(v)) return stripSecrets(v.value) as T;
  if (Array.isArray(v)) return v.map(stripSecrets) as T;
  if (isObject(v))
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, stripSecrets(x)])) as T;
  return v;
}

/**
 * Downgrades resource references to their ID (or URN for components), because
 * the plugin answers `acceptResources=false`.
 */
export function downgradeResourceRefs<T extends Wire>(v: T): T {
  if (isObject(v) && v[SPECIAL_SIG_KEY] === RESOURCE_REF_SIG) {
    const id = v["id"];
    return (typeof id === "string" && id !== "" ? id : (v["urn"] ?? "")) as T;
  }
  if (Array.isArray(v)) return v.map(downgradeResourceRefs) as T;
  if (isObject(v))
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [k, downgradeResourceRefs(x)]),
    ) as T;
  return v;
}

/**
 * The engine's `annotateSecrets`: an output whose same-named input is secret
 * becomes secret; objects recurse; any other value (e.g. an array) that
 * contains a secret becomes secret as a whole. Then `additionalSecretOutputs`
 * marks the named top-level outputs. A new output key without a secret input
 * of the same name stays plaintext, as under the CLI.
 */
export function annotateSecrets(
  outputs: WireMap,
  inputs: WireMap,
  additionalSecretOutputs: readonly string[] = [],
): WireMap {
  const out: WireMap = { ...outputs };
  for (const [key, input] of Object.entries(inputs)) {
    if (!(key in out) || !containsSecret(input)) continue;
    const output = out[key]!;
    out[key] =
      !isSecret(input) && isObject(input) && isObject(output)
        ? annotateSecrets(output, input)
        : makeSecret(output);
  }
  for (const key of additionalSecretOutputs) {
    const value = out[key];
    if (value !== undefined) out[key] = makeSecret(value);
  }
  return out;
}

/**
 * `v` as the CLI writes it into its checkpoint: every secret's value replaced
 * by ciphertext (`{ [SPECIAL_SIG_KEY]: SECRET_SIG, ciphertext }`), everything
 * else as is. What remains is what a reader of the state file sees in clear.
 */
export function encryptSecrets(v: Wire): Wire {
  if (isSecret(v)) return { [SPECIAL_SIG_KEY]: SECRET_SIG, ciphertext: "(encrypted)" };
  if (Array.isArray(v)) return v.map(encryptSecrets);
  if (isObject(v))
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encryptSecrets(x)]));
  return v;
}

/** Passes a value through JSON, so `undefined` never reaches `Struct.fromJavaScript` (docs/pulumi-provider.md#engine-harness, gotcha 1). */
export function toWire(v: unknown): WireMap {
  return JSON.parse(JSON.stringify(v ?? {})) as WireMap;
}

/** Deep equality of wire values, independent of object key order. */
export function wireEqual(a: Wire | undefined, b: Wire | undefined): boolean {
  return stableJson(a) === stableJson(b);
}

function stableJson(v: Wire | undefined): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "undefined";
}
