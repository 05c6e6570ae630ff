/**
 * The Pulumi adapter of sandbox-iac (`sandbox-iac/pulumi`): dynamic resources
 * `Template`, `Snapshot`, `SandboxReader`, `Provisioner`, `Volume` and `Secret`, and the functions
 * `getSandbox`, `listSandboxes` and `getSandboxMetrics`.
 *
 * Credentials: stack config `sandbox-iac:apiKey` (secret), `sandbox-iac:apiUrl`,
 * `sandbox-iac:sandboxUrl`, `sandbox-iac:domain`, else the `E2B_*` environment
 * variables; never stored in state.
 *
 * @module
 */
export { Template } from "./template";
export type { TemplateArgs } from "./template";
export { Snapshot } from "./snapshot";
export type { SnapshotArgs } from "./snapshot";
export { SandboxReader } from "./sandbox-reader";
export type { SandboxReaderArgs } from "./sandbox-reader";
export { Provisioner } from "./provisioner";
export type { ProvisionerArgs } from "./provisioner";
export { Volume } from "./volume";
export type { VolumeArgs } from "./volume";
export { Secret } from "./secret";
export type { SecretArgs } from "./secret";
export { getSandbox, getSandboxMetrics, listSandboxes } from "./functions";
export type {
  FunctionOptions,
  ListSandboxesQuery,
  SandboxInfo,
  SandboxMetricInfo,
} from "./functions";
export { createDynamicProvider } from "./provider";
export type { SandboxIacProvider } from "./provider";
export { CONFIG_KEYS, UNKNOWN_SENTINEL } from "./constants";
/**
 * What the serialized providers call inside the plugin.
 * @internal
 */
export * as providerRuntime from "./provider-runtime";
