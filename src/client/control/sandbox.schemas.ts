/**
 * zod schemas of the sandbox responses, matching schema/control.openapi.yaml.
 * Unknown fields pass through so that a newer service does not break us.
 *
 * @module
 */

import { z } from "zod";
import { logLevel } from "../../wire/control-requests";
import type {
  ListedSandbox,
  Sandbox,
  SandboxDetail,
  SandboxesWithMetrics,
  SandboxLogEntry,
  SandboxLogs,
  SandboxMetric,
  SnapshotInfo,
} from "./types";

const dateTime = z.iso.datetime({ offset: true });
const stringMap = z.record(z.string(), z.string());
const volumeMount = z.looseObject({ name: z.string(), path: z.string() });
const state = z.enum(["running", "paused"]);

/** `Sandbox`. */
export const SandboxSchema: z.ZodType<Sandbox> = z.looseObject({
  templateID: z.string(),
  sandboxID: z.string().min(1),
  alias: z.string().exactOptional(),
  clientID: z.string(),
  envdVersion: z.string(),
  envdAccessToken: z.string().exactOptional(),
  trafficAccessToken: z.string().nullable().exactOptional(),
  domain: z.string().nullable().exactOptional(),
});

const listedFields = {
  templateID: z.string(),
  sandboxID: z.string().min(1),
  alias: z.string().exactOptional(),
  clientID: z.string(),
  startedAt: dateTime,
  endAt: dateTime,
  envdVersion: z.string(),
  cpuCount: z.int().min(1),
  memoryMB: z.int().min(128),
  diskSizeMB: z.int().min(0),
  metadata: stringMap.exactOptional(),
  state,
  volumeMounts: z.array(volumeMount).exactOptional(),
};

/** `ListedSandbox`. */
export const ListedSandboxSchema: z.ZodType<ListedSandbox> = z.looseObject(listedFields);

/** `SandboxDetail`. */
export const SandboxDetailSchema: z.ZodType<SandboxDetail> = z.looseObject({
  ...listedFields,
  envdAccessToken: z.string().nullable().exactOptional(),
  allowInternetAccess: z.boolean().nullable().exactOptional(),
  domain: z.string().nullable().exactOptional(),
  network: z.looseObject({}).exactOptional(),
  lifecycle: z
    .looseObject({ autoResume: z.boolean(), onTimeout: z.enum(["kill", "pause"]) })
    .exactOptional(),
});

/** `SandboxMetric`. */
export const SandboxMetricSchema: z.ZodType<SandboxMetric> = z.looseObject({
  timestamp: dateTime,
  timestampUnix: z.int(),
  cpuCount: z.int(),
  cpuUsedPct: z.number(),
  memUsed: z.int(),
  memTotal: z.int(),
  memCache: z.int(),
  diskUsed: z.int(),
  diskTotal: z.int(),
});

/** `SandboxesWithMetrics`. */
export const SandboxesWithMetricsSchema: z.ZodType<SandboxesWithMetrics> = z.looseObject({
  sandboxes: z.record(z.string(), SandboxMetricSchema),
});

/** `SandboxLogEntry`. */
const SandboxLogEntrySchema: z.ZodType<SandboxLogEntry> = z.looseObject({
  timestamp: dateTime,
  level: logLevel,
  message: z.string(),
  fields: stringMap,
});

/** `SandboxLogs` (v1). */
export const SandboxLogsSchema: z.ZodType<SandboxLogs> = z.looseObject({
  logs: z.array(z.looseObject({ timestamp: dateTime, line: z.string() })),
  logEntries: z.array(SandboxLogEntrySchema),
});

/** `SandboxLogsV2Response`. */
export const SandboxLogsV2Schema = z.looseObject({ logs: z.array(SandboxLogEntrySchema) });

/** `SnapshotInfo`. */
export const SnapshotInfoSchema: z.ZodType<SnapshotInfo> = z.looseObject({
  snapshotID: z.string().min(1),
  names: z.array(z.string()),
});
