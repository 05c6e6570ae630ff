/**
 * The `Provisioner` dynamic resource: uploads files into a sandbox, runs setup
 * commands, and optionally snapshots it. See `src/resources/provisioner/`.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import type { z } from "zod";
import type { provisionerArgsSchema } from "../resources/provisioner/provisioner.args";
import type { ManifestDigest } from "../resources/provisioner/manifest";
import { TYPE_MODULE } from "./constants";
import type { ResourceArgs } from "./inputs";
import { declaredOptions, declaredProps } from "./outputs";
import { createDynamicProvider } from "./provider";

/** Args of {@link Provisioner}. */
export type ProvisionerArgs = ResourceArgs<z.input<typeof provisionerArgsSchema>>;

const provider = createDynamicProvider("Provisioner");

/** Files and commands applied to a sandbox, optionally ending in a snapshot. */
export class Provisioner extends pulumi.dynamic.Resource {
  /** The sandbox kept running after provisioning (with `keepSandbox`). */
  declare readonly keptSandboxID: pulumi.Output<string | undefined>;
  /** Content hash, mode and size of every uploaded file, by sandbox path. */
  declare readonly fileDigest: pulumi.Output<ManifestDigest>;
  /** The snapshot taken, usable as a template, when `snapshot` is set. */
  declare readonly snapshotID: pulumi.Output<string | undefined>;
  /** Names of the snapshot, when `snapshot` is set. */
  declare readonly snapshotNames: pulumi.Output<string[] | undefined>;
  /** How many setup commands ran in the last run. */
  declare readonly commandsRun: pulumi.Output<number>;
  /** Bytes uploaded by the last run. */
  declare readonly bytesUploaded: pulumi.Output<number>;
  /** The template the sandbox was created from. */
  declare readonly template: pulumi.Output<string | undefined>;
  /** The existing sandbox worked in, when one was given. */
  declare readonly sandboxID: pulumi.Output<string | undefined>;

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
