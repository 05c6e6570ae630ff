/**
 * The `Provisioner` dynamic resource: uploads files into a sandbox, runs setup
 * commands, and optionally snapshots it. See `src/resources/provisioner/`.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import type {
  ProvisionerArgs as ProvisionerInputArgs,
  ProvisionerOutputs,
} from "../resources/provisioner/provisioner.args";
import { TYPE_MODULE } from "./constants";
import type { OutputProperties, ResourceArgs } from "./inputs";
import { declaredOptions, declaredProps } from "./outputs";
import { createDynamicProvider } from "./provider";

/** Args of {@link Provisioner}. */
export type ProvisionerArgs = ResourceArgs<ProvisionerInputArgs>;

const provider = createDynamicProvider("Provisioner");

/** Files and commands applied to a sandbox, optionally ending in a snapshot. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class Provisioner extends pulumi.dynamic.Resource {
  constructor(name: string, args: ProvisionerArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      provider,
      name,
      declaredProps("Provisioner", args),
      declaredOptions("Provisioner", args, opts),
      TYPE_MODULE,
      "Provisioner",
    );
  }
}

/**
 * The properties of {@link Provisioner}: every input and output, typed and described
 * by the core's descriptor (see `src/resources/provisioner/provisioner.args.ts`).
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface Provisioner extends OutputProperties<ProvisionerOutputs> {}
