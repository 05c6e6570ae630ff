/**
 * CDK for Terraform constructs of the `sandbox-iac/sandboxiac` provider for
 * cdktf 0.21 (`sandbox-iac/cdktf`, peer `cdktf`). The same classes as
 * `cdktf get` would generate for the provider (`SandboxiacProvider`,
 * `Template`, `Snapshot`, `Provisioner`, `SandboxReader`, `Volume`, `Secret`, `DataSandboxiac*`), with local paths
 * packaged as assets and synth-time validation. For CDK Terrain (cdktn) apps
 * use `sandbox-iac/cdktn`: the two runtimes' constructs do not mix.
 *
 * The synthesized stack is applied with terraform and the provider installed by
 * `sandbox-iac terraform install` (no registry needed).
 *
 * The data source `sandboxiac_sandbox_metrics` is `DataSandboxiacSandboxMetricsA`:
 * the generator renames it because `DataSandboxiacSandboxMetrics` is already the
 * struct of `sandboxiac_sandbox`'s `metrics` attribute (as `cdktf get` does).
 *
 * @module
 */
export * from "../gen/cdktf";
export {
  Provisioner,
  SandboxReader,
  SandboxiacProvider,
  Secret,
  Snapshot,
  Template,
  Volume,
} from "./constructs";
export { DataSandboxiacSandbox } from "../gen/cdktf/data-sandboxiac-sandbox";
export type { DataSandboxiacSandboxConfig } from "../gen/cdktf/data-sandboxiac-sandbox";
export { DataSandboxiacSandboxMetricsA } from "../gen/cdktf/data-sandboxiac-sandbox-metrics";
export type { DataSandboxiacSandboxMetricsAConfig } from "../gen/cdktf/data-sandboxiac-sandbox-metrics";
export { DataSandboxiacSandboxes } from "../gen/cdktf/data-sandboxiac-sandboxes";
export type { DataSandboxiacSandboxesConfig } from "../gen/cdktf/data-sandboxiac-sandboxes";
export { DataSandboxiacTemplate } from "../gen/cdktf/data-sandboxiac-template";
export type { DataSandboxiacTemplateConfig } from "../gen/cdktf/data-sandboxiac-template";
export { DataSandboxiacSnapshots } from "../gen/cdktf/data-sandboxiac-snapshots";
export type { DataSandboxiacSnapshotsConfig } from "../gen/cdktf/data-sandboxiac-snapshots";
export type { SandboxiacProviderConfig } from "../gen/cdktf/provider";
export type {
  TemplateBuild,
  TemplateBuildSteps,
  TemplateBuildStepsCopy,
  TemplateConfig,
} from "../gen/cdktf/template";
export type {
  ProvisionerCommands,
  ProvisionerConfig,
  ProvisionerFiles,
  ProvisionerSnapshot,
} from "../gen/cdktf/provisioner";
export type { SnapshotConfig } from "../gen/cdktf/snapshot";
export type { SandboxReaderConfig } from "../gen/cdktf/sandbox-reader";
export type { SecretConfig } from "../gen/cdktf/secret";
export type { VolumeConfig, VolumeFiles } from "../gen/cdktf/volume";
