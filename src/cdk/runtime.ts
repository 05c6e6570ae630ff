/**
 * The few pieces of a CDK for Terraform runtime (`cdktn` or `cdktf`) the
 * conveniences need, passed in by each entry point. Nothing under `src/cdk/`
 * imports either runtime: a construct built on one runtime's classes crashes
 * inside the other's stacks, so each entry point (`sandbox-iac/cdktn`,
 * `sandbox-iac/cdktf`) brings its own.
 *
 * @module
 */
import type { Construct } from "constructs";

/** The subset of `cdktn` / `cdktf` used by the conveniences. */
export interface CdkRuntime {
  /** `Token` of the runtime: tells a late-bound value (a reference, a variable) from a literal. */
  readonly Token: { isUnresolved(value: unknown): boolean };
  /** `TerraformAsset` of the runtime: copies a local file or directory into the synthesized stack. */
  readonly TerraformAsset: new (
    scope: Construct,
    id: string,
    config: { path: string },
  ) => { readonly path: string };
}
