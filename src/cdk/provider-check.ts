/**
 * Synth-time validation with exactly what the provider runs for
 * `terraform validate` (ValidateResourceConfig): the construct's attributes,
 * as they will be synthesized, go through the provider's conversion to core
 * inputs and the descriptor's `check`, and every failure is named by its
 * construct's own property path. A CDK user therefore sees `cpuCount ...`
 * (or `buildAttribute.steps[0].run ...`) when running the app, before any plan. Late-bound values (references to other
 * resources, variables) are unknown at synth, as at validate, and left alone.
 *
 * @module
 */
import { defaultCatalog } from "../terraform/catalog";
import { coreInputs, inputAttributes, type TfObject } from "../terraform/provider/state";
import {
  type AttributeName,
  inAdapterNames,
  propertyPathText,
  renamedFields,
} from "../terraform/schema/naming";
import { UNKNOWN, isUnknown, type TfValue } from "../terraform/values/dynamic-value";
import type { CdkRuntime } from "./runtime";

/** A synthesized attribute value as the provider would receive it: tokens unknown, unset null. */
function asTerraformValue(value: unknown, runtime: CdkRuntime): TfValue {
  if (value === undefined || value === null) return null;
  if (runtime.Token.isUnresolved(value)) return UNKNOWN;
  if (Array.isArray(value)) return value.map((v) => asTerraformValue(v, runtime));
  if (typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, asTerraformValue(v, runtime)]),
    );
  }
  return value as TfValue;
}

/**
 * Every problem the provider's validation finds in the synthesized
 * `attributes` of a resource of type `terraformType`, one line each:
 * `<property path> <what is wrong and what is allowed>`, fields named by `name`
 * (the construct's properties).
 */
export function providerProblems(
  terraformType: string,
  attributes: Record<string, unknown>,
  runtime: CdkRuntime,
  name: AttributeName,
): string[] {
  const entry = defaultCatalog().resources.get(terraformType);
  if (!entry) throw new Error(`sandbox-iac: no resource type ${terraformType} in the provider`);
  const config = asTerraformValue(attributes, runtime) as TfObject;
  const result = entry.descriptor.lifecycle.check(coreInputs(entry.block, config), { isUnknown });
  const inputs = inputAttributes(entry.block);
  const renames = renamedFields(inputs, name);
  return result.failures.map(
    (failure) =>
      `${propertyPathText(inputs, failure.property, name)} ${inAdapterNames(failure.reason, renames)}`,
  );
}
