/**
 * The catalog as tfplugin6 `Schema` messages, for `GetProviderSchema`.
 *
 * @module
 */
import { create } from "@bufbuild/protobuf";
import {
  type Schema,
  type Schema_Attribute,
  Schema_AttributeSchema,
  Schema_BlockSchema,
  Schema_Object_NestingMode,
  Schema_ObjectSchema,
  SchemaSchema,
  StringKind,
} from "../../gen/terraform/tfplugin6_pb";
import { ctyType, nesting, type TfAttribute, type TfBlock } from "./model";

const NESTING = {
  single: Schema_Object_NestingMode.SINGLE,
  list: Schema_Object_NestingMode.LIST,
  map: Schema_Object_NestingMode.MAP,
} as const;

function attribute(attr: TfAttribute): Schema_Attribute {
  const nested = nesting(attr.type);
  return create(Schema_AttributeSchema, {
    name: attr.name,
    description: attr.description,
    descriptionKind: StringKind.MARKDOWN,
    required: attr.required,
    optional: attr.optional,
    computed: attr.computed,
    sensitive: attr.sensitive,
    ...(nested
      ? {
          nestedType: create(Schema_ObjectSchema, {
            attributes: nested.object.attributes.map(attribute),
            nesting: NESTING[nested.mode],
          }),
        }
      : { type: new TextEncoder().encode(JSON.stringify(ctyType(attr.type))) }),
  });
}

/** One resource's, data source's or the provider's schema message. */
export function protoSchema(block: TfBlock, version = 0): Schema {
  return create(SchemaSchema, {
    version: BigInt(version),
    block: create(Schema_BlockSchema, {
      version: BigInt(version),
      attributes: block.attributes.map(attribute),
      description: block.description,
      descriptionKind: StringKind.MARKDOWN,
    }),
  });
}
