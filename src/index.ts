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
export type {
  ConfigSource,
  ConfigSources,
  OptionNames,
  ResolvedConfig,
  SandboxAddress,
} from "./config";
export { ERROR_CODES, SandboxIacError, invalidArgument, redact, registerSecret } from "./errors";
export type { ErrorCode, ErrorContext, ErrorDetails } from "./errors";
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
  CheckOptions,
  CheckResult,
  DiffOptions,
  DiffResult,
  PlanOptions,
  ResourceContext,
  ResourceLifecycle,
} from "./resources/core/lifecycle";
export type {
  AnyDescriptor,
  DataSourceDescriptor,
  OutputRule,
  ReplacementConstraint,
  ResourceDescriptor,
} from "./resources/core/descriptor";
export {
  allDescriptors,
  dataSourceDescriptor,
  dataSourceDescriptors,
  dataSourcesByType,
  deletesFirst,
  outputNames,
  resourceDescriptor,
  resourceDescriptors,
  resourcesByType,
} from "./resources/registry";
export { templateDescriptor, templateOutputsSchema } from "./resources/template";
export { snapshotDescriptor, snapshotOutputsSchema } from "./resources/snapshot";
export { sandboxReaderDescriptor, sandboxReaderOutputsSchema } from "./resources/sandbox-reader";
export { provisionerDescriptor, provisionerOutputsSchema } from "./resources/provisioner";
export { sandboxDataSource } from "./resources/data/sandbox";
export type { SandboxDataArgs, SandboxFields } from "./resources/data/sandbox";
export { sandboxesDataSource } from "./resources/data/sandboxes";
export type { SandboxesDataArgs, SandboxesDataResult } from "./resources/data/sandboxes";
export { sandboxMetricsDataSource } from "./resources/data/sandbox-metrics";
export type {
  SandboxMetricsDataArgs,
  SandboxMetricsDataResult,
} from "./resources/data/sandbox-metrics";
export { templateDataSource } from "./resources/data/template";
export type { TemplateDataArgs, TemplateDataResult } from "./resources/data/template";
export { snapshotsDataSource } from "./resources/data/snapshots";
export type { SnapshotsDataArgs, SnapshotsDataResult } from "./resources/data/snapshots";
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
export {
  volumeDescriptor,
  volumeLifecycle,
  volumeArgsSchema,
  volumeChangeRules,
  volumeOutputsSchema,
} from "./resources/volume";
export type { VolumeArgs, VolumeOutputs } from "./resources/volume";
export {
  secretDescriptor,
  secretLifecycle,
  secretArgsSchema,
  secretChangeRules,
  secretOutputsSchema,
} from "./resources/secret";
export type { SecretArgs, SecretOutputs } from "./resources/secret";
export { ENVD_VERSION, ENVD_PORT } from "./wire/envd";
