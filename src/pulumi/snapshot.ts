/**
 * The `Snapshot` dynamic resource: a named snapshot of a sandbox, usable as a
 * template. See `src/resources/snapshot/snapshot.md`.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import type {
  SnapshotArgs as SnapshotInputArgs,
  SnapshotOutputs,
} from "../resources/snapshot/snapshot.args";
import { TYPE_MODULE } from "./constants";
import type { OutputProperties, ResourceArgs } from "./inputs";
import { declaredOptions, declaredProps } from "./outputs";
import { createDynamicProvider } from "./provider";

/** Args of {@link Snapshot}. */
export type SnapshotArgs = ResourceArgs<SnapshotInputArgs>;

const provider = createDynamicProvider("Snapshot");

/** A snapshot of a sandbox. Any input change takes a new snapshot (replace). */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class Snapshot extends pulumi.dynamic.Resource {
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

/**
 * The properties of {@link Snapshot}: every input and output, typed and described
 * by the core's descriptor (see `src/resources/snapshot/snapshot.args.ts`).
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface Snapshot extends OutputProperties<SnapshotOutputs> {}
