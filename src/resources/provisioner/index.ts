/**
 * The Provisioner: files and setup commands inside a sandbox, as a resource.
 *
 * @module
 */
export { provisionerDescriptor } from "./provisioner.descriptor";
export { provisionerLifecycle } from "./provisioner.lifecycle";
export {
  provisionerArgsSchema,
  provisionerChangeRules,
  provisionerOutputsSchema,
} from "./provisioner.args";
export type { ProvisionerArgs, ProvisionerOutputs } from "./provisioner.args";
