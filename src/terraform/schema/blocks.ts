/**
 * The attributes of every resource, data source and the provider
 * configuration, derived from the core's descriptors. Both the gRPC schema
 * (`GetProviderSchema`) and the JSON form (`providerSchemaJson`) are printed
 * from these blocks.
 *
 * @module
 */
import type { DataSourceDescriptor, ResourceDescriptor } from "../../resources/core/descriptor";
import { attributesOf } from "./from-zod";
import type { TfAttribute, TfBlock } from "./model";
import { providerConfigSchema, SENSITIVE_PROVIDER_FIELDS } from "./provider-config";

/** The name of the computed id attribute every resource has (the core id, used by read and import). */
export const ID_ATTRIBUTE = "id";

const idAttribute: TfAttribute = {
  name: ID_ATTRIBUTE,
  coreName: ID_ATTRIBUTE,
  type: { kind: "string" },
  description: "The ID of the object in the service; `terraform import` takes it.",
  required: false,
  optional: false,
  computed: true,
  sensitive: false,
};

/** Inputs, then outputs; an output named like an input makes that input optional + computed. */
function merge(inputs: TfAttribute[], outputs: TfAttribute[]): TfAttribute[] {
  const outputNames = new Set(outputs.map((a) => a.name));
  const inputNames = new Set(inputs.map((a) => a.name));
  return [
    ...inputs.map((a) => (outputNames.has(a.name) && a.optional ? { ...a, computed: true } : a)),
    ...outputs.filter((a) => !inputNames.has(a.name)),
  ];
}

/** The attributes of a resource: `id`, the inputs, the outputs. */
export function resourceBlock(descriptor: ResourceDescriptor): TfBlock {
  const inputs = attributesOf(descriptor.args, {
    role: "input",
    sensitive: descriptor.sensitiveInputs,
  });
  const outputs = attributesOf(descriptor.outputs, {
    role: "output",
    sensitive: descriptor.sensitiveOutputs,
  }).filter((a) => a.name !== ID_ATTRIBUTE);
  return {
    description: descriptor.description,
    attributes: [idAttribute, ...merge(inputs, outputs)],
  };
}

/** The attributes of a data source: the arguments, then what it returns. */
export function dataSourceBlock(descriptor: DataSourceDescriptor): TfBlock {
  const inputs = attributesOf(descriptor.args, { role: "input" });
  const outputs = attributesOf(descriptor.result, {
    role: "output",
    sensitive: descriptor.sensitiveOutputs,
  });
  return { description: descriptor.description, attributes: merge(inputs, outputs) };
}

/** The attributes of the `provider "sandboxiac"` block. */
export function providerBlock(): TfBlock {
  return {
    description:
      "Where the E2B-compatible service is and the API key to use. Each attribute left out falls " +
      "back to its E2B_* environment variable, then to the local service (`sandbox-iac serve`).",
    attributes: attributesOf(providerConfigSchema, {
      role: "input",
      sensitive: SENSITIVE_PROVIDER_FIELDS,
    }),
  };
}
