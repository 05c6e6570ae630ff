/**
 * The provider's own view of a schema: Terraform types and attributes, each
 * attribute carrying its core name too, so values and attribute paths convert
 * both ways along the same tree that produces the published schema.
 *
 * @module
 */

/**
 * A Terraform type. Objects are published as protocol-6 nested attributes.
 * `dynamic` (cty's DynamicPseudoType) takes a value of any type, sent with its
 * own type; the core's schema says which types it allows (`string | string[]`).
 */
export type TfType =
  | { readonly kind: "dynamic" }
  | { readonly kind: "string" }
  | { readonly kind: "number" }
  | { readonly kind: "bool" }
  | { readonly kind: "list"; readonly element: TfType }
  | { readonly kind: "map"; readonly element: TfType }
  | { readonly kind: "object"; readonly attributes: readonly TfAttribute[] };

/** One attribute of a resource, data source, provider or nested object. */
export interface TfAttribute {
  /** The Terraform name (snake_case). */
  readonly name: string;
  /** The core name (camelCase) in inputs and outputs. */
  readonly coreName: string;
  readonly type: TfType;
  /** From the field's zod metadata. */
  readonly description: string;
  readonly required: boolean;
  readonly optional: boolean;
  readonly computed: boolean;
  readonly sensitive: boolean;
  /**
   * True for a `string | string[]` union published in its list form (its
   * field's metadata says `terraformListForm`): a single string coming back
   * from the core is shown as a one-element list.
   */
  readonly stringOrList?: boolean;
}

/** The attributes of one resource, data source or the provider configuration. */
export interface TfBlock {
  readonly description: string;
  readonly attributes: readonly TfAttribute[];
}

/** Attributes the user writes (required or optional, computed or not). */
export function inputAttributes(block: TfBlock): TfAttribute[] {
  return block.attributes.filter((a) => a.required || a.optional);
}

/** Attributes only the provider sets. */
export function computedOnlyAttributes(block: TfBlock): TfAttribute[] {
  return block.attributes.filter((a) => a.computed && !a.required && !a.optional);
}

/** cty's JSON type notation, as in `GetProviderSchema`'s `type` bytes and `providers schema -json`. */
export type CtyTypeJson = string | [string, CtyTypeJson] | ["object", Record<string, CtyTypeJson>];

/** The cty type of `type` (objects as object types, for places nesting cannot express). */
export function ctyType(type: TfType): CtyTypeJson {
  switch (type.kind) {
    case "dynamic":
    case "string":
    case "number":
    case "bool":
      return type.kind;
    case "list":
    case "map":
      return [type.kind, ctyType(type.element)];
    case "object":
      return ["object", Object.fromEntries(type.attributes.map((a) => [a.name, ctyType(a.type)]))];
  }
}

/** How an attribute of type `type` is published: plain type, or nested attributes with a nesting mode. */
export function nesting(
  type: TfType,
): { mode: "single" | "list" | "map"; object: Extract<TfType, { kind: "object" }> } | undefined {
  if (type.kind === "object") return { mode: "single", object: type };
  if ((type.kind === "list" || type.kind === "map") && type.element.kind === "object") {
    return { mode: type.kind, object: type.element };
  }
  return undefined;
}
