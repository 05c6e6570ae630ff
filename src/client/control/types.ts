/**
 * Names for the control API's wire types, taken from the generated contract
 * (src/gen/control.gen.ts, from schema/control.openapi.yaml).
 *
 * @module
 */

import type { components, operations } from "../../gen/control.gen";

/** Every schema of the control API's OpenAPI. */
export type Schemas = components["schemas"];

/** A sandbox as returned by create, connect and resume. */
export type Sandbox = Schemas["Sandbox"];
/** A sandbox as returned by `GET /sandboxes/{sandboxID}`. */
export type SandboxDetail = Schemas["SandboxDetail"];
/** An item of the sandbox lists. */
export type ListedSandbox = Schemas["ListedSandbox"];
/** `running` or `paused`. */
export type SandboxState = Schemas["SandboxState"];
/** Body of `POST /sandboxes`. */
export type NewSandbox = Schemas["NewSandbox"];
/** Body of `POST /v2/sandboxes`. */
export type NewSandboxV2 = Schemas["NewSandboxV2"];
/** Body of `POST /sandboxes/{id}/connect`. */
export type ConnectSandbox = Schemas["ConnectSandbox"];
/** Body of `POST /v2/sandboxes/{id}/connect`. */
export type ConnectSandboxV2 = Schemas["ConnectSandboxV2"];
/** Body of `PUT /sandboxes/{id}/network`. */
export type SandboxNetworkUpdate = Schemas["SandboxNetworkUpdate"];
/** Body of `POST /sandboxes/{id}/resume`. */
export type ResumedSandbox = Schemas["ResumedSandbox"];
/** One metric sample of a sandbox. */
export type SandboxMetric = Schemas["SandboxMetric"];
/** Latest metrics of several sandboxes, by sandbox ID. */
export type SandboxesWithMetrics = Schemas["SandboxesWithMetrics"];
/** Logs of `GET /sandboxes/{id}/logs`. */
export type SandboxLogs = Schemas["SandboxLogs"];
/** One structured sandbox log entry. */
export type SandboxLogEntry = Schemas["SandboxLogEntry"];
/** A snapshot: its ID (usable as a templateID) and names. */
export type SnapshotInfo = Schemas["SnapshotInfo"];
/** A template as listed. */
export type Template = Schemas["Template"];
/** A template with its builds. */
export type TemplateWithBuilds = Schemas["TemplateWithBuilds"];
/** Body of `POST /v3/templates`. */
export type TemplateBuildRequestV3 = Schemas["TemplateBuildRequestV3"];
/** Answer of `POST /v3/templates`. */
export type TemplateRequestResponseV3 = Schemas["TemplateRequestResponseV3"];
/** Answer of the file-hash upload-link lookup. */
export type TemplateBuildFileUpload = Schemas["TemplateBuildFileUpload"];
/** Body of `POST /v2/templates/{id}/builds/{buildID}`. */
export type TemplateBuildStartV2 = Schemas["TemplateBuildStartV2"];
/** One build step. */
export type TemplateStep = Schemas["TemplateStep"];
/** Build status with logs. */
export type TemplateBuildInfo = Schemas["TemplateBuildInfo"];
/** One build log entry. */
export type BuildLogEntry = Schemas["BuildLogEntry"];
/** Answer of the build-logs call. */
export type TemplateBuildLogsResponse = Schemas["TemplateBuildLogsResponse"];
/** Answer of `PATCH /v2/templates/{id}`. */
export type TemplateUpdateResponse = Schemas["TemplateUpdateResponse"];
/** Answer of the alias lookup. */
export type TemplateAliasResponse = Schemas["TemplateAliasResponse"];
/** Answer of tag assignment. */
export type AssignedTemplateTags = Schemas["AssignedTemplateTags"];
/** One tag of a template. */
export type TemplateTag = Schemas["TemplateTag"];
/** `debug`, `info`, `warn` or `error`. */
export type LogLevel = Schemas["LogLevel"];

/** Query of `GET /v2/sandboxes/{id}/logs`. */
export type SandboxLogsV2Query = NonNullable<operations["getSandboxLogsV2"]["parameters"]["query"]>;
/** Query of `GET /templates/{id}/builds/{buildID}/status`. */
export type BuildStatusQuery = NonNullable<
  operations["getTemplateBuildStatus"]["parameters"]["query"]
>;
/** Query of `GET /templates/{id}/builds/{buildID}/logs`. */
export type BuildLogsQuery = NonNullable<operations["getTemplateBuildLogs"]["parameters"]["query"]>;

/** One page of a paginated list. */
export interface Page<T> {
  items: T[];
  /** The cursor of the next page; undefined on the last page. */
  nextToken: string | undefined;
}
