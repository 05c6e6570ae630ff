/**
 * The provider schema in the shape `terraform providers schema -json` prints,
 * printed from the same catalog `GetProviderSchema` serves. The CDK bindings
 * are generated from it.
 *
 * @module
 */
import { defaultCatalog } from "../catalog";
import type { Catalog } from "./catalog";
import { ctyType, nesting, type TfAttribute, type TfBlock } from "./model";
import { PROVIDER_ADDRESS } from "./names";

/** One attribute as `providers schema -json` prints it. */
interface AttributeJson {
  type?: unknown;
  nested_type?: { attributes: Record<string, AttributeJson>; nesting_mode: string };
  description?: string;
  description_kind: "markdown";
  required?: true;
  optional?: true;
  computed?: true;
  sensitive?: true;
}

/** One schema (provider, resource or data source) as `providers schema -json` prints it. */
interface SchemaJson {
  version: number;
  block: {
    attributes: Record<string, AttributeJson>;
    description?: string;
    description_kind: "markdown";
  };
}

/** The whole document. */
export interface ProviderSchemaJson {
  format_version: "1.0";
  provider_schemas: Record<
    string,
    {
      provider: SchemaJson;
      resource_schemas: Record<string, SchemaJson>;
      data_source_schemas: Record<string, SchemaJson>;
    }
  >;
}

function attributeJson(attr: TfAttribute): AttributeJson {
  const nested = nesting(attr.type);
  return {
    ...(nested
      ? {
          nested_type: {
            attributes: attributesJson(nested.object.attributes),
            nesting_mode: nested.mode,
          },
        }
      : { type: ctyType(attr.type) }),
    ...(attr.description ? { description: attr.description } : {}),
    description_kind: "markdown",
    ...(attr.required ? { required: true } : {}),
    ...(attr.optional ? { optional: true } : {}),
    ...(attr.computed ? { computed: true } : {}),
    ...(attr.sensitive ? { sensitive: true } : {}),
  };
}

function attributesJson(attributes: readonly TfAttribute[]): Record<string, AttributeJson> {
  return Object.fromEntries(
    [...attributes]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((a) => [a.name, attributeJson(a)]),
  );
}

function schemaJson(block: TfBlock, version: number): SchemaJson {
  return {
    version,
    block: {
      attributes: attributesJson(block.attributes),
      ...(block.description ? { description: block.description } : {}),
      description_kind: "markdown",
    },
  };
}

/**
 * The provider schema as `terraform providers schema -json` prints it for
 * `sandbox-iac/sandboxiac`: `{ format_version, provider_schemas: { "registry.terraform.io/sandbox-iac/sandboxiac": { provider, resource_schemas, data_source_schemas } } }`.
 * @param catalog - @default every descriptor of the core registry
 */
export function providerSchemaJson(catalog: Catalog = defaultCatalog()): ProviderSchemaJson {
  const sorted = <T extends { typeName: string }>(items: Iterable<T>) =>
    [...items].sort((a, b) => a.typeName.localeCompare(b.typeName));
  return {
    format_version: "1.0",
    provider_schemas: {
      [PROVIDER_ADDRESS]: {
        provider: schemaJson(catalog.provider, 0),
        resource_schemas: Object.fromEntries(
          sorted(catalog.resources.values()).map((r) => [
            r.typeName,
            schemaJson(r.block, r.descriptor.version),
          ]),
        ),
        data_source_schemas: Object.fromEntries(
          sorted(catalog.dataSources.values()).map((d) => [d.typeName, schemaJson(d.block, 0)]),
        ),
      },
    },
  };
}
