/**
 * zod schemas of the control client's arguments. They run before any
 * request, so that a bad argument fails with `invalid_argument` and nothing
 * is sent.
 *
 * @module
 */

import { z } from "zod";
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
const logLevel = z.enum(["debug", "info", "warn", "error"]);
const direction = z.enum(["forward", "backward"]);

/** Validates one identifier argument and returns it. */
export function checkId(operation: string, field: string, value: unknown): string {
  return parseArgs(z.object({ [field]: id }), { [field]: value }, operation)[field];
}

const newSandboxFields = {
  templateID: id,
  timeout: z.int().min(1).optional(),
  autoPause: z.boolean().optional(),
  autoPauseMemory: z.boolean().optional(),
  autoResume: z.looseObject({ enabled: z.boolean() }).optional(),
  allow_internet_access: z.boolean().optional(),
  network: z.looseObject({}).optional(),
  metadata: stringMap.optional(),
  envVars: stringMap.optional(),
  volumeMounts: z.array(z.looseObject({ name: id, path: id })).optional(),
};

/** `NewSandbox`. */
export const NewSandboxArgs = z.looseObject({
  ...newSandboxFields,
  secure: z.boolean().optional(),
});
/** `NewSandboxV2`. */
export const NewSandboxV2Args = z.looseObject(newSandboxFields);
/** `ConnectSandbox` (v1: timeout required). */
export const ConnectArgs = z.looseObject({
  timeout: z.int().min(0),
  memory: z.boolean().optional(),
});
/** `ConnectSandboxV2`. */
export const ConnectV2Args = z.looseObject({
  timeout: z.int().min(0).optional(),
  memory: z.boolean().optional(),
});
/** `ResumedSandbox`. */
export const ResumeArgs = z.looseObject({
  timeout: z.int().min(1).optional(),
  memory: z.boolean().optional(),
});
/** `SandboxPauseRequest`. */
export const PauseArgs = z.looseObject({ memory: z.boolean().optional() });
/** `SandboxTimeoutRequest`. */
export const TimeoutArgs = z.object({ timeout: z.int().min(0) });
/** `SandboxRefreshRequest`. */
export const RefreshArgs = z.object({ duration: z.int().min(0).max(3600).optional() });

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
    .array(id)
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
  direction: direction.optional(),
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
  sandboxID: id.optional(),
  name: id.optional(),
  nextToken: nextToken.optional(),
  limit: limit.optional(),
});
/** `SandboxSnapshotRequest`. */
export const SnapshotArgs = z.looseObject({ name: id.optional() });

/** `TemplateBuildRequestV3`. */
export const TemplateV3Args = z.looseObject({
  name: id.max(128).optional(),
  tags: z.array(id).optional(),
  alias: id.optional(),
  teamID: id.optional(),
  cpuCount: z.int().min(1).optional(),
  memoryMB: z.int().min(128).optional(),
  minFreeDiskMb: z.int().min(0).optional(),
});
/** A page query of the template lists. */
export const PageQueryArgs = z.object({ nextToken: nextToken.optional(), limit: limit.optional() });
/** `TemplateUpdateRequest`. */
export const TemplateUpdateArgs = z.looseObject({ public: z.boolean().optional() });
/** A COPY step's files hash. */
export const FilesHash = z.string().regex(/^[0-9a-f]{64}$/);
/** `TemplateBuildStartV2`. */
export const BuildStartArgs = z.looseObject({
  fromImage: z.string().optional(),
  fromTemplate: z.string().optional(),
  force: z.boolean().optional(),
  steps: z
    .array(
      z.looseObject({
        type: id,
        args: z.array(z.string()).optional(),
        filesHash: z.string().optional(),
      }),
    )
    .optional(),
  startCmd: z.string().optional(),
  readyCmd: z.string().optional(),
});
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
  direction: direction.optional(),
  level: logLevel.optional(),
  source: z.enum(["temporary", "persistent"]).optional(),
});
/** `AssignTemplateTagsRequest`. */
export const AssignTagsArgs = z.object({ target: id, tags: z.array(id).min(1) });
/** `DeleteTemplateTagsRequest`. */
export const DeleteTagsArgs = z.object({ name: id, tags: z.array(id).min(1) });
