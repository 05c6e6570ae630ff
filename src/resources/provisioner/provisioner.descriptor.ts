/**
 * The descriptor of the `Provisioner` resource.
 *
 * @module
 */
import type { ResourceDescriptor } from "../core/descriptor";
import {
  provisionerArgsSchema,
  provisionerChangeRules,
  provisionerOutputRules,
  provisionerOutputsSchema,
  provisionerSensitiveInputs,
  type ProvisionerArgs,
  type ProvisionerOutputs,
} from "./provisioner.args";
import { provisionerLifecycle } from "./provisioner.lifecycle";

/** `Provisioner`: files and setup commands applied to a sandbox, optionally ending in a snapshot. */
export const provisionerDescriptor: ResourceDescriptor<ProvisionerArgs, ProvisionerOutputs> = {
  kind: "resource",
  typeName: "Provisioner",
  description:
    "Puts files into a sandbox and runs setup commands there: in a sandbox it creates from a template (killed afterwards unless keepSandbox) or in an existing sandbox. It can end with a snapshot that becomes a template.",
  version: 0,
  args: provisionerArgsSchema,
  outputs: provisionerOutputsSchema,
  changeRules: provisionerChangeRules,
  outputRules: provisionerOutputRules,
  sensitiveInputs: provisionerSensitiveInputs,
  sensitiveOutputs: [],
  replacement: {
    deleteFirst: true,
    reason: "a new snapshot with the same name needs the old one deleted first",
    onlyWithInput: "snapshot",
  },
  lifecycle: provisionerLifecycle,
};
