/**
 * The typed control-API client.
 *
 * @module
 */

export { createControlClient } from "./client";
export type { ControlClient, ControlClientOptions } from "./client";
export type { CallOptions } from "./call";
export type { SandboxMethods, ConnectedSandbox } from "./sandboxes";
export type { ForkBody, ForkMethods, ForkResult } from "./fork";
export type {
  SandboxListMethods,
  ListSandboxesQuery,
  ListSandboxesV2Query,
  SandboxPage,
} from "./sandbox-list";
export { encodeMetadataFilter } from "./sandbox-list";
export type { MetricsMethods } from "./metrics";
export type { SnapshotMethods, ListSnapshotsQuery } from "./snapshots";
export type { TemplateMethods, TemplatePageQuery, TemplateWithBuildsPage } from "./templates";
export type { TemplateUploadMethods, UploadArchive } from "./template-upload";
export type { BuildMethods } from "./builds";
export type { TagMethods } from "./tags";
export type { VolumeMethods, VolumeCreateOptions, VolumeFileBody, VolumeRef } from "./volumes";
export type { SecretMethods, SecretMetadata } from "./secrets";
export type { Volume, VolumeAndToken, VolumeEntryStat, SecretInfo } from "./volume.schemas";
export { OPERATIONS, isIdempotent } from "./operations";
export type { OperationName } from "./operations";
export {
  CODE_FOR_STATUS,
  STATUS_FOR_CODE,
  codeForStatus,
  statusForCode,
} from "../../wire/control-status";
export type {
  AssignedTemplateTags,
  BuildLogEntry,
  BuildLogsQuery,
  BuildStatusQuery,
  ConnectSandbox,
  ConnectSandboxV2,
  ListedSandbox,
  LogLevel,
  NewSandbox,
  NewSandboxV2,
  Page,
  ResumedSandbox,
  Sandbox,
  SandboxDetail,
  SandboxesWithMetrics,
  SandboxLogEntry,
  SandboxLogs,
  SandboxLogsV2Query,
  SandboxMetric,
  SandboxNetworkUpdate,
  SandboxState,
  SnapshotInfo,
  Template,
  TemplateAliasResponse,
  TemplateBuildFileUpload,
  TemplateBuildInfo,
  TemplateBuildLogsResponse,
  TemplateBuildRequestV3,
  TemplateBuildStartV2,
  TemplateRequestResponseV3,
  TemplateStep,
  TemplateTag,
  TemplateUpdateResponse,
  TemplateWithBuilds,
} from "./types";
