/**
 * sandbox-iac: declare and provision E2B-compatible sandboxes as code.
 *
 * The package root holds what every integration shares: configuration, the
 * error type, the typed clients of both interfaces, and the provider-neutral
 * resources. Adapters live in subpaths: `sandbox-iac/pulumi` (the Pulumi
 * dynamic provider) and `sandbox-iac/local` (the embedded local service).
 *
 * @module
 */
export { resolveConfig } from "./config";
export type { ResolvedConfig } from "./config";
export { ERROR_CODES, SandboxIacError, invalidArgument, redact } from "./errors";
export type { ErrorCode, ErrorDetails } from "./errors";
export { createControlClient } from "./client/control";
export type { ControlClient, ControlClientOptions, CallOptions } from "./client/control";
export { createSandboxClient, commandResultOf, fileSignature } from "./client/sandbox";
export type {
  SandboxClient,
  SandboxClientOptions,
  CommandResult,
  EntryInfo,
  ProcessHandle,
} from "./client/sandbox";
export type {
  ChangeRule,
  CheckFailure,
  CheckResult,
  DiffResult,
  ResourceContext,
  ResourceLifecycle,
} from "./resources/core/lifecycle";
export { templateLifecycle, templateArgsSchema, templateChangeRules } from "./resources/template";
export type { TemplateArgs, TemplateOutputs } from "./resources/template";
export { snapshotLifecycle, snapshotArgsSchema, snapshotChangeRules } from "./resources/snapshot";
export type { SnapshotArgs, SnapshotOutputs } from "./resources/snapshot";
export {
  sandboxReaderLifecycle,
  sandboxReaderArgsSchema,
  sandboxReaderChangeRules,
} from "./resources/sandbox-reader";
export type { SandboxReaderArgs, SandboxReaderOutputs } from "./resources/sandbox-reader";
export {
  provisionerLifecycle,
  provisionerArgsSchema,
  provisionerChangeRules,
} from "./resources/provisioner";
export type { ProvisionerArgs, ProvisionerOutputs } from "./resources/provisioner";
export { ENVD_VERSION, ENVD_PORT } from "./wire/envd";
