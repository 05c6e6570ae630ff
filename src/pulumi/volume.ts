/**
 * The `Volume` dynamic resource: persistent storage mounted into sandboxes by
 * name. See `src/resources/volume/volume.md`.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import type { VolumeArgs as VolumeInputArgs, VolumeOutputs } from "../resources/volume/volume.args";
import { TYPE_MODULE } from "./constants";
import type { OutputProperties, ResourceArgs } from "./inputs";
import { declaredOptions, declaredProps } from "./outputs";
import { createDynamicProvider } from "./provider";

/** Args of {@link Volume}. */
export type VolumeArgs = ResourceArgs<VolumeInputArgs>;

const provider = createDynamicProvider("Volume");

/** A persistent volume with optional seed files. A new name replaces it. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class Volume extends pulumi.dynamic.Resource {
  constructor(name: string, args: VolumeArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      provider,
      name,
      declaredProps("Volume", args),
      declaredOptions("Volume", args, opts),
      TYPE_MODULE,
      "Volume",
    );
  }
}

/**
 * The properties of {@link Volume}: every input and output, typed and described
 * by the core's descriptor (see `src/resources/volume/volume.args.ts`).
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface Volume extends OutputProperties<VolumeOutputs> {}
