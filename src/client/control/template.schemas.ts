/**
 * zod schemas of the template, build and tag responses, matching
 * schema/control.openapi.yaml. Unknown fields pass through.
 *
 * @module
 */

import { z } from "zod";
import { logLevel } from "../../wire/control-requests";
import type {
  AssignedTemplateTags,
  BuildLogEntry,
  Template,
  TemplateAliasResponse,
  TemplateBuildFileUpload,
  TemplateBuildInfo,
  TemplateBuildLogsResponse,
  TemplateRequestResponseV3,
  TemplateTag,
  TemplateUpdateResponse,
  TemplateWithBuilds,
} from "./types";

const dateTime = z.iso.datetime({ offset: true });
const names = z.array(z.string());
const buildStatus = z.enum(["building", "waiting", "ready", "error"]);

/** `Template`. */
export const TemplateSchema: z.ZodType<Template> = z.looseObject({
  templateID: z.string().min(1),
  buildID: z.string(),
  cpuCount: z.int().min(1),
  memoryMB: z.int().min(128),
  diskSizeMB: z.int().min(0),
  public: z.boolean(),
  aliases: names,
  names,
  createdAt: dateTime,
  updatedAt: dateTime,
  createdBy: z.looseObject({ id: z.string(), email: z.string().nullable() }).nullable(),
  lastSpawnedAt: dateTime.nullable(),
  spawnCount: z.int(),
  buildCount: z.int(),
  envdVersion: z.string(),
  buildStatus,
});

/** `TemplateWithBuilds`. */
export const TemplateWithBuildsSchema: z.ZodType<TemplateWithBuilds> = z.looseObject({
  templateID: z.string().min(1),
  public: z.boolean(),
  aliases: names,
  names,
  createdAt: dateTime,
  updatedAt: dateTime,
  lastSpawnedAt: dateTime.nullable(),
  spawnCount: z.int(),
  builds: z.array(
    z.looseObject({
      buildID: z.string(),
      status: buildStatus,
      createdAt: dateTime,
      updatedAt: dateTime,
      finishedAt: dateTime.exactOptional(),
      cpuCount: z.int().min(1),
      memoryMB: z.int().min(128),
      diskSizeMB: z.int().min(0).exactOptional(),
      envdVersion: z.string().exactOptional(),
    }),
  ),
});

/** `TemplateRequestResponseV3`. */
export const TemplateRequestResponseV3Schema: z.ZodType<TemplateRequestResponseV3> = z.looseObject({
  templateID: z.string().min(1),
  buildID: z.string().min(1),
  public: z.boolean(),
  names,
  tags: names,
  aliases: names,
});

/** `TemplateBuildFileUpload`: when the files are absent, `url` says where to PUT them. */
export const TemplateBuildFileUploadSchema: z.ZodType<TemplateBuildFileUpload> = z
  .looseObject({
    present: z.boolean(),
    url: z.string().exactOptional(),
    headers: z.record(z.string(), z.string()).exactOptional(),
  })
  .refine((v) => v.present || (typeof v.url === "string" && v.url !== ""), {
    path: ["url"],
    message: "a non-empty upload URL when present is false",
  });

/** `BuildLogEntry`. */
const BuildLogEntrySchema: z.ZodType<BuildLogEntry> = z.looseObject({
  timestamp: dateTime,
  message: z.string(),
  level: logLevel,
  step: z.string().exactOptional(),
});

/** `TemplateBuildInfo`. */
export const TemplateBuildInfoSchema: z.ZodType<TemplateBuildInfo> = z.looseObject({
  templateID: z.string(),
  buildID: z.string(),
  status: buildStatus,
  logs: z.array(z.string()),
  logEntries: z.array(BuildLogEntrySchema),
  reason: z
    .looseObject({
      message: z.string(),
      step: z.string().exactOptional(),
      logEntries: z.array(BuildLogEntrySchema).exactOptional(),
    })
    .exactOptional(),
});

/** `TemplateBuildLogsResponse`. */
export const TemplateBuildLogsSchema: z.ZodType<TemplateBuildLogsResponse> = z.looseObject({
  logs: z.array(BuildLogEntrySchema),
});

/** `TemplateUpdateResponse`. */
export const TemplateUpdateResponseSchema: z.ZodType<TemplateUpdateResponse> = z.looseObject({
  names,
});

/** `TemplateAliasResponse`. */
export const TemplateAliasResponseSchema: z.ZodType<TemplateAliasResponse> = z.looseObject({
  templateID: z.string().min(1),
  public: z.boolean(),
});

/** `AssignedTemplateTags`. */
export const AssignedTemplateTagsSchema: z.ZodType<AssignedTemplateTags> = z.looseObject({
  tags: names,
  buildID: z.string(),
});

/** `TemplateTag`. */
export const TemplateTagSchema: z.ZodType<TemplateTag> = z.looseObject({
  tag: z.string(),
  buildID: z.string(),
  createdAt: dateTime,
});
