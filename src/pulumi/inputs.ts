/**
 * Pulumi typing derived from the core's types: resource args, where every
 * field at any depth may be an `Output` (Pulumi resolves nested outputs before
 * the provider sees them), and the output properties of the resource classes.
 *
 * @module
 */
import type * as pulumi from "@pulumi/pulumi";

/** `T` with every field, at any depth, accepting a `pulumi.Input`. */
type DeepInput<T> = T extends string | number | boolean | null | undefined
  ? pulumi.Input<T>
  : T extends ReadonlyArray<infer U>
    ? pulumi.Input<Array<DeepInput<U>>>
    : pulumi.Input<{ [K in keyof T]: DeepInput<T[K]> }>;

/** Resource args: each top-level field of `T` as a {@link DeepInput}, optionality kept. */
export type ResourceArgs<T> = { [K in keyof T]: DeepInput<T[K]> };

/**
 * Every field of `T` (inputs and outputs of a resource, as the core's
 * descriptor types them) as a read-only Pulumi output: the properties of a
 * resource class, derived rather than restated.
 */
export type OutputProperties<T> = { readonly [K in keyof T]-?: pulumi.Output<T[K]> };
