/**
 * The base class of every Pulumi resource class, made from its type name
 * alone: the dynamic provider, the declared properties and options, the type
 * token, the args type and the output properties all follow from the
 * descriptor registered under that name. A class names its type once, so it
 * cannot be wired to another resource's descriptor by a slip.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import type { InputsOf, OutputsOf, ResourceTypeName } from "../resources/registry";
import { TYPE_MODULE } from "./constants";
import type { OutputProperties, ResourceArgs } from "./inputs";
import { declaredOptions, declaredProps } from "./outputs";
import { noteFollowedRefs } from "./followed-refs";
import { createDynamicProvider } from "./provider";

/** A Pulumi resource class of core type `K`: `new (name, args, opts)` with `K`'s inputs, and `K`'s outputs as properties. */
export type DynamicResourceClass<K extends ResourceTypeName> = new (
  name: string,
  args: ResourceArgs<InputsOf<K>>,
  opts?: pulumi.CustomResourceOptions,
) => pulumi.dynamic.Resource & OutputProperties<OutputsOf<K>>;

/**
 * The base class for resource `typeName`: `export class Template extends
 * dynamicResourceClass("Template") {}`. The provider is made once per class.
 */
export function dynamicResourceClass<K extends ResourceTypeName>(
  typeName: K,
): DynamicResourceClass<K> {
  const provider = createDynamicProvider(typeName);
  // The output properties are Pulumi's to fill: `declaredProps` declares each
  // output, and the engine sets it on the instance; TypeScript cannot see that.
  return class extends pulumi.dynamic.Resource {
    constructor(
      name: string,
      args: ResourceArgs<InputsOf<K>>,
      opts?: pulumi.CustomResourceOptions,
    ) {
      super(
        provider,
        name,
        declaredProps(typeName, args),
        declaredOptions(typeName, args, opts),
        TYPE_MODULE,
        typeName,
      );
      noteFollowedRefs(typeName, name, this, args);
    }
  } as unknown as DynamicResourceClass<K>;
}
