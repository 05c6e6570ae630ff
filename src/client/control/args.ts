/**
 * zod schemas of the control client's arguments. They run before any
 * request, so that a bad argument fails with `invalid_argument` and nothing
 * is sent.
 *
 * @module
 */

import { z } from "zod";
import { invalidArgument } from "../../errors";
import {
  AssignTemplateTagsBody,
  ConnectSandboxBody,
  ConnectSandboxV2Body,
  DeleteTemplateTagsBody,
  logDirection,
  logLevel,
  logSource,
  NewSandboxBody,
  NewSandboxV2Body,
  ResumedSandboxBody,
  SandboxNetworkUpdateBody,
  SandboxPauseBody,
  SandboxRefreshBody,
  SandboxSnapshotBody,
  SandboxTimeoutBody,
  TemplateBuildRequestV3Body,
  TemplateBuildStartV2Body,
  TemplateUpdateBody,
} from "../../wire/control-requests";
import {
  SANDBOX_ID_PATH_ALLOWED,
  SANDBOX_ID_PATH_PATTERN,
  sandboxIDPathProblem,
} from "../../wire/ids";
import { parseArgs } from "./validate";

/** A non-empty identifier. */
const id = z.string().min(1);
/** Page size: 1..100. */
const limit = z.int().min(1).max(100);
/** Unix seconds or milliseconds: an integer >= 0. */
const unixTime = z.int().min(0);
/** A pagination cursor. */
const nextToken = z.string().min(1);
const stringMap = z.record(z.string(), z.string());

/** A sandbox ID as control API paths take it (the legacy `-<clientID>` included). */
const sandboxIDArg = z
  .string()
  .regex(SANDBOX_ID_PATH_PATTERN, { error: `must be ${SANDBOX_ID_PATH_ALLOWED}` });

/** Validates a sandbox ID argument before it goes into a control API path; returns it. */
export function checkSandboxID(operation: string, value: unknown): string {
  const problem = sandboxIDPathProblem(value);
  if (problem !== undefined) throw invalidArgument(operation, "sandboxID", value, problem.allowed);
  return value as string;
}

/** Validates one identifier argument and returns it. */
export function checkId(operation: string, field: string, value: unknown): string {
  return parseArgs(z.object({ [field]: id }), { [field]: value }, operation)[field];
}

/** `NewSandbox`. */
export const NewSandboxArgs = NewSandboxBody;
/** `NewSandboxV2`. */
export const NewSandboxV2Args = NewSandboxV2Body;
/** `ConnectSandbox` (v1: timeout required). */
export const ConnectArgs = ConnectSandboxBody;
/** `ConnectSandboxV2`. */
export const ConnectV2Args = ConnectSandboxV2Body;
/** `ResumedSandbox`. */
export const ResumeArgs = ResumedSandboxBody;
/** `SandboxPauseRequest`. */
export const PauseArgs = SandboxPauseBody;
/** `SandboxTimeoutRequest`. */
export const TimeoutArgs = SandboxTimeoutBody;
/** `SandboxRefreshRequest`. */
export const RefreshArgs = SandboxRefreshBody;
/** `SandboxNetworkUpdate`. */
export const NetworkUpdateArgs = SandboxNetworkUpdateBody;

/** Query of `GET /sandboxes/{id}/metrics`. */
export const MetricsQueryArgs = z
  .object({ start: unixTime.optional(), end: unixTime.optional() })
  .refine((q) => q.start === undefined || q.end === undefined || q.start <= q.end, {
    path: ["end"],
    message: ">= start",
  });
/** `sandbox_ids` of the batch metrics call. */
export const BatchMetricsArgs = z.object({
  sandboxIDs: z
    .array(sandboxIDArg)
    .min(1)
    .max(100)
    .refine((ids) => new Set(ids).size === ids.length, { message: "unique sandbox IDs" }),
});
/** Query of the v1 logs. */
export const LogsQueryArgs = z.object({
  start: unixTime.optional(),
  limit: z.int().min(0).optional(),
});
/** Query of the v2 logs. */
export const LogsV2QueryArgs = z.object({
  cursor: unixTime.optional(),
  limit: z.int().min(0).max(1000).optional(),
  direction: logDirection.optional(),
  level: logLevel.optional(),
  search: z.string().max(256).optional(),
});

/** Query of `GET /v2/sandboxes`. */
export const ListV2QueryArgs = z.object({
  metadata: stringMap.optional(),
  state: z.array(z.enum(["running", "paused"])).optional(),
  order: z.enum(["asc", "desc"]).optional(),
  startedAfter: z.union([z.iso.datetime({ offset: true }), z.date()]).optional(),
  template: id.optional(),
  nextToken: nextToken.optional(),
  limit: limit.optional(),
});
/** Query of `GET /snapshots`. */
export const SnapshotsQueryArgs = z.object({
  sandboxID: sandboxIDArg.optional(),
  name: id.optional(),
  nextToken: nextToken.optional(),
  limit: limit.optional(),
});
/** `SandboxSnapshotRequest`. */
export const SnapshotArgs = SandboxSnapshotBody;

/** `TemplateBuildRequestV3`. */
export const TemplateV3Args = TemplateBuildRequestV3Body;
/** A page query of the template lists. */
export const PageQueryArgs = z.object({ nextToken: nextToken.optional(), limit: limit.optional() });
/** `TemplateUpdateRequest`. */
export const TemplateUpdateArgs = TemplateUpdateBody;
/** A COPY step's files hash. */
export const FilesHash = z.string().regex(/^[0-9a-f]{64}$/);
/** `TemplateBuildStartV2`. */
export const BuildStartArgs = TemplateBuildStartV2Body;
/** Query of the build status. */
export const BuildStatusQueryArgs = z.object({
  logsOffset: z.int().min(0).optional(),
  limit: z.int().min(0).max(100).optional(),
  level: logLevel.optional(),
});
/** Query of the build logs. */
export const BuildLogsQueryArgs = z.object({
  cursor: unixTime.optional(),
  limit: z.int().min(0).max(100).optional(),
  direction: logDirection.optional(),
  level: logLevel.optional(),
  source: logSource.optional(),
});
/** `AssignTemplateTagsRequest`. */
export const AssignTagsArgs = AssignTemplateTagsBody;
/** `DeleteTemplateTagsRequest`. */
export const DeleteTagsArgs = DeleteTemplateTagsBody;
