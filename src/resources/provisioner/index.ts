/**
 * The Provisioner: files and setup commands inside a sandbox, as a resource.
 *
 * @module
 */
export { provisionerLifecycle } from "./provisioner.lifecycle";
export type { ProvisionerOutputs } from "./provisioner.lifecycle";
export { provisionerArgsSchema, provisionerChangeRules } from "./provisioner.args";
export type { CommandSpec, FileSpec, ProvisionerArgs } from "./provisioner.args";
