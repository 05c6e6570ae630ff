/**
 * The `Provisioner` dynamic resource: uploads files into a sandbox, runs setup
 * commands, and optionally snapshots it. See `src/resources/provisioner/`.
 *
 * @module
 */
import type { ProvisionerArgs as ProvisionerInputArgs } from "../resources/provisioner/provisioner.args";
import type { ResourceArgs } from "./inputs";
import { dynamicResourceClass } from "./resource-class";

/** Args of {@link Provisioner}. */
export type ProvisionerArgs = ResourceArgs<ProvisionerInputArgs>;

/** Files and commands applied to a sandbox, optionally ending in a snapshot. */
export class Provisioner extends dynamicResourceClass("Provisioner") {}
