/**
 * Synth-time validation of a CDK construct with exactly what the provider
 * runs for `terraform validate` (ValidateResourceConfig): the construct's
 * attributes, as they will be synthesized, go through the provider's
 * conversion to core inputs and the descriptor's `check`, and every failure is
 * named by the construct's own property path. A CDK user therefore sees
 * `cpuCount ...` (or `buildAttribute.steps[0].run ...`) when running the app,
 * before any plan. Late-bound values (references to other resources,
 * variables) are unknown at synth, as at validate, and left alone.
 *
 * The CDK entry points call {@link constructProblems} alone: how Terraform
 * names, converts and checks attributes stays inside the provider.
 *
 * @module
 */
import { kindOf, unknownKeyReason, unknownKeysIn } from "../resources/core/unknown-keys";
import { defaultCatalog } from "./catalog";
import type { TfAttribute } from "./schema/model";
import {
  type AttributeName,
  camelCase,
  cdkName,
  inAdapterNames,
  namedShape,
  propertyPathText,
  renamedFields,
} from "./schema/naming";
import { type TfObject, blockCodec } from "./values/block-codec";
import { UNKNOWN, isUnknown, type TfValue } from "./values/dynamic-value";

/** A construct of a provider resource, as its CDK entry point sees it at synth. */
export interface ConstructUnderCheck {
  /** The resource's Terraform type, e.g. `sandboxiac_template`. */
  terraformType: string;
  /**
   * The keys the construct's config may hold: every input its generated
   * binding has, and the meta-arguments (`count`, `dependsOn`, ...).
   */
  knownKeys: readonly string[];
  /** The config the construct was given, as the caller passed it. */
  config: object;
  /** The construct's attributes as they will be synthesized. */
  attributes: Record<string, unknown>;
  /** True for a value known only at apply (a CDK token). */
  isLate: (value: unknown) => boolean;
  /**
   * Problems the entry point found itself (a missing local path, say),
   * listed after the unknown keys and before the provider's checks.
   * @default none
   */
  adapterProblems?: readonly string[];
}

/** A synthesized attribute value as the provider would receive it: late values unknown, unset null. */
function asTerraformValue(value: unknown, isLate: (value: unknown) => boolean): TfValue {
  if (value === undefined || value === null) return null;
  if (isLate(value)) return UNKNOWN;
  if (Array.isArray(value)) return value.map((v) => asTerraformValue(v, isLate));
  if (typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, asTerraformValue(v, isLate)]),
    );
  }
  return value as TfValue;
}

/**
 * How the construct names the top-level `inputs`: the generated binding's
 * property (`cpuCount`, `sandboxId`; `buildAttribute` where the generator
 * renamed a reserved name, found among `knownKeys`), nested fields in camelCase.
 */
function constructNaming(
  inputs: readonly TfAttribute[],
  knownKeys: readonly string[],
): AttributeName {
  const known = new Set(knownKeys);
  const topLevel = new Map(
    inputs.map((a) => {
      const plain = camelCase(a.name);
      return [a, known.has(plain) ? plain : `${plain}Attribute`] as const;
    }),
  );
  return (a) => topLevel.get(a) ?? cdkName(a);
}

/**
 * Every problem with a construct, one line each, in the construct's names:
 * the keys of its config, at any depth, it does not know (a JavaScript
 * caller, or a cast, can pass them; the generated binding would drop them
 * silently), each with its property path and the nearest known key
 * (`commands[0].timeoutSecs: ...`); then `adapterProblems`; then every
 * failure of the provider's validation (`<property path> <what is wrong and
 * what is allowed>`).
 */
export function constructProblems(construct: ConstructUnderCheck): string[] {
  const { terraformType, knownKeys, config, isLate } = construct;
  const entry = defaultCatalog().resources.get(terraformType);
  if (!entry) throw new Error(`sandbox-iac: no resource type ${terraformType} in the provider`);
  const codec = blockCodec(entry.block);
  const inputs = codec.inputs;
  const name = constructNaming(inputs, knownKeys);
  const topLevel = Object.entries(config)
    .filter(([key]) => !knownKeys.includes(key))
    .map(([key, value]) => `${key}: ${unknownKeyReason(key, knownKeys, kindOf(value))}`);
  const nested = unknownKeysIn(namedShape(inputs, name), config, { isLate, known: knownKeys })
    .filter((k) => k.steps.length > 1)
    .map((k) => `${k.path}: ${k.reason}`);
  const attributes = asTerraformValue(construct.attributes, isLate) as TfObject;
  const result = entry.descriptor.lifecycle.check(codec.configObject(attributes)?.inputs ?? {}, {
    isUnknown,
  });
  const renames = renamedFields(inputs, name);
  return [
    ...topLevel,
    ...nested,
    ...(construct.adapterProblems ?? []),
    ...result.failures.map(
      (failure) =>
        `${propertyPathText(inputs, failure.property, name)} ${inAdapterNames(failure.reason, renames)}`,
    ),
  ];
}
