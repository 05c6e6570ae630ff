/**
 * The `Volume` dynamic resource: persistent storage mounted into sandboxes by
 * name. See `src/resources/volume/volume.md`.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import type { VolumeArgs as VolumeInputArgs } from "../resources/volume/volume.args";
import { TYPE_MODULE } from "./constants";
import type { ResourceArgs } from "./inputs";
import { declaredOptions, declaredProps } from "./outputs";
import { createDynamicProvider } from "./provider";

/** Args of {@link Volume}. */
export type VolumeArgs = ResourceArgs<VolumeInputArgs>;

const provider = createDynamicProvider("Volume");

/** A persistent volume with optional seed files. A new name replaces it. */
export class Volume extends pulumi.dynamic.Resource {
  /** The volume's name; sandboxes mount it by this name. */
  declare readonly name: pulumi.Output<string>;
  /** The seed files. */
  declare readonly files: pulumi.Output<
    Array<{ source: string; destination: string; mode?: number }> | undefined
  >;
  /** The volume's ID. */
  declare readonly volumeID: pulumi.Output<string>;
  /** Per seeded destination, the uploaded content hash and mode. */
  declare readonly fileDigest: pulumi.Output<Record<string, string>>;

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
