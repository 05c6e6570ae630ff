/**
 * The `Snapshot` dynamic resource: a named snapshot of a sandbox, usable as a
 * template. See `src/resources/snapshot/snapshot.md`.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import type { SnapshotArgs as SnapshotInputArgs } from "../resources/snapshot/snapshot.args";
import { TYPE_MODULE } from "./constants";
import type { ResourceArgs } from "./inputs";
import { declaredOptions, declaredProps } from "./outputs";
import { createDynamicProvider } from "./provider";

/** Args of {@link Snapshot}. */
export type SnapshotArgs = ResourceArgs<SnapshotInputArgs>;

const provider = createDynamicProvider("Snapshot");

/** A snapshot of a sandbox. Any input change takes a new snapshot (replace). */
export class Snapshot extends pulumi.dynamic.Resource {
  /** The snapshotted sandbox. */
  declare readonly sandboxID: pulumi.Output<string>;
  /** The snapshot's name. */
  declare readonly name: pulumi.Output<string>;
  /** The snapshot ID; pass it as the template of new sandboxes. */
  declare readonly snapshotID: pulumi.Output<string>;
  /** Every name of the snapshot. */
  declare readonly names: pulumi.Output<string[]>;

  constructor(name: string, args: SnapshotArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      provider,
      name,
      declaredProps("Snapshot", args),
      declaredOptions("Snapshot", args, opts),
      TYPE_MODULE,
      "Snapshot",
    );
  }
}
