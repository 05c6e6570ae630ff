/**
 * CDK for Terraform constructs of the `sandbox-iac/sandboxiac` provider for
 * CDK Terrain (`sandbox-iac/cdktn`, peer `cdktn`). The same classes as
 * `cdktn get` would generate for the provider (`SandboxiacProvider`,
 * `Template`, `Snapshot`, `Provisioner`, `SandboxReader`, `Volume`, `Secret`, `DataSandboxiac*`), with local paths
 * packaged as assets and synth-time validation. For cdktf 0.21 apps use
 * `sandbox-iac/cdktf`: the two runtimes' constructs do not mix.
 *
 * The synthesized stack is applied with terraform and the provider installed by
 * `sandbox-iac terraform install` (no registry needed).
 *
 * The data source `sandboxiac_sandbox_metrics` is `DataSandboxiacSandboxMetricsA`:
 * the generator renames it because `DataSandboxiacSandboxMetrics` is already the
 * struct of `sandboxiac_sandbox`'s `metrics` attribute (as `cdktn get` does).
 *
 * @module
 */
export * from "../gen/cdktn";
export {
  Provisioner,
  SandboxReader,
  SandboxiacProvider,
  Secret,
  Snapshot,
  Template,
  Volume,
} from "./constructs";
export type {
  ProvisionerCommands,
  ProvisionerConfig,
  TemplateBuild,
  TemplateBuildSteps,
  TemplateConfig,
} from "./constructs";
export { DataSandboxiacSandbox } from "../gen/cdktn/data-sandboxiac-sandbox";
export type { DataSandboxiacSandboxConfig } from "../gen/cdktn/data-sandboxiac-sandbox";
export { DataSandboxiacSandboxMetricsA } from "../gen/cdktn/data-sandboxiac-sandbox-metrics";
export type { DataSandboxiacSandboxMetricsAConfig } from "../gen/cdktn/data-sandboxiac-sandbox-metrics";
export { DataSandboxiacSandboxes } from "../gen/cdktn/data-sandboxiac-sandboxes";
export type { DataSandboxiacSandboxesConfig } from "../gen/cdktn/data-sandboxiac-sandboxes";
export { DataSandboxiacTemplate } from "../gen/cdktn/data-sandboxiac-template";
export type { DataSandboxiacTemplateConfig } from "../gen/cdktn/data-sandboxiac-template";
export { DataSandboxiacSnapshots } from "../gen/cdktn/data-sandboxiac-snapshots";
export type { DataSandboxiacSnapshotsConfig } from "../gen/cdktn/data-sandboxiac-snapshots";
export type { SandboxiacProviderConfig } from "../gen/cdktn/provider";
export type { TemplateBuildStepsCopy } from "../gen/cdktn/template";
export type { ProvisionerFiles, ProvisionerSnapshot } from "../gen/cdktn/provisioner";
export type { SnapshotConfig } from "../gen/cdktn/snapshot";
export type { SandboxReaderConfig } from "../gen/cdktn/sandbox-reader";
export type { SecretConfig } from "../gen/cdktn/secret";
export type { VolumeConfig, VolumeFiles } from "../gen/cdktn/volume";
