/**
 * The Provisioner: files and setup commands inside a sandbox, as a resource.
 *
 * @module
 */
export { provisionerDescriptor } from "./provisioner.descriptor";
export { provisionerLifecycle } from "./provisioner.lifecycle";
export {
  commandSpecSchema,
  fileSpecSchema,
  provisionerArgsSchema,
  provisionerChangeRules,
  provisionerOutputRules,
  provisionerOutputsSchema,
} from "./provisioner.args";
export type {
  CommandSpec,
  FileSpec,
  ProvisionerArgs,
  ProvisionerOutputs,
} from "./provisioner.args";
