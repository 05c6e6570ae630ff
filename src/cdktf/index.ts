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
// The code is src/cdktn's, rewritten for the cdktf runtime by `npm run generate`
// (scripts/generate-cdk-entry.js): one definition of the constructs, and no
// file that imports both runtimes.
export * from "../gen/cdktf-entry";
