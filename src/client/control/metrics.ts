/**
 * Sandbox metrics (one sandbox, or the latest of many) and sandbox logs.
 *
 * @module
 */

import { z } from "zod";
import {
  BatchMetricsArgs,
  checkSandboxID,
  LogsQueryArgs,
  LogsV2QueryArgs,
  MetricsQueryArgs,
} from "./args";
import { type CallContext, type CallOptions, callSpec, invoke } from "./call";
import {
  SandboxesWithMetricsSchema,
  SandboxLogsSchema,
  SandboxLogsV2Schema,
  SandboxMetricSchema,
} from "./sandbox.schemas";
import type {
  SandboxesWithMetrics,
  SandboxLogEntry,
  SandboxLogs,
  SandboxLogsV2Query,
  SandboxMetric,
} from "./types";
import { parseArgs } from "./validate";

/** Metrics and logs methods of the control client. */
export interface MetricsMethods {
  /**
   * `GET /sandboxes/{sandboxID}/metrics`.
   * @param query.start - unix seconds >= 0 @default the sandbox's start
   * @param query.end - unix seconds >= 0 @default now
   */
  getSandboxMetrics(
    sandboxID: string,
    query?: { start?: number | undefined; end?: number | undefined },
    options?: CallOptions,
  ): Promise<SandboxMetric[]>;
  /** `GET /sandboxes/metrics`: the latest metric of each of 1..100 unique sandboxes. */
  getSandboxesMetrics(sandboxIDs: string[], options?: CallOptions): Promise<SandboxesWithMetrics>;
  /**
   * `GET /sandboxes/{sandboxID}/logs` (deprecated).
   * @param query.start - unix milliseconds @default the beginning
   * @param query.limit - @default 1000
   */
  getSandboxLogs(
    sandboxID: string,
    query?: { start?: number; limit?: number },
    options?: CallOptions,
  ): Promise<SandboxLogs>;
  /** `GET /v2/sandboxes/{sandboxID}/logs`. */
  getSandboxLogsV2(
    sandboxID: string,
    query?: SandboxLogsV2Query,
    options?: CallOptions,
  ): Promise<SandboxLogEntry[]>;
}

/** Builds the {@link MetricsMethods} over `ctx`. */
export function metricsMethods(ctx: CallContext): MetricsMethods {
  return {
    async getSandboxMetrics(sandboxID, query, options) {
      const id = checkSandboxID("sandboxes.metrics", sandboxID);
      const q = parseArgs(MetricsQueryArgs, query ?? {}, "sandboxes.metrics");
      const spec = callSpec("sandboxes.metrics", [200], z.array(SandboxMetricSchema), id);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/sandboxes/{sandboxID}/metrics", {
          params: { path: { sandboxID: id }, query: q },
          ...init,
        }),
      );
      return data;
    },

    async getSandboxesMetrics(sandboxIDs, options) {
      const { sandboxIDs: ids } = parseArgs(
        BatchMetricsArgs,
        { sandboxIDs },
        "sandboxes.batchMetrics",
      );
      const spec = callSpec("sandboxes.batchMetrics", [200], SandboxesWithMetricsSchema);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/sandboxes/metrics", { params: { query: { sandbox_ids: ids } }, ...init }),
      );
      return data;
    },

    async getSandboxLogs(sandboxID, query, options) {
      const id = checkSandboxID("sandboxes.logs", sandboxID);
      const q = parseArgs(LogsQueryArgs, query ?? {}, "sandboxes.logs");
      const spec = callSpec("sandboxes.logs", [200], SandboxLogsSchema, id);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/sandboxes/{sandboxID}/logs", {
          params: { path: { sandboxID: id }, query: q },
          ...init,
        }),
      );
      return data;
    },

    async getSandboxLogsV2(sandboxID, query, options) {
      const id = checkSandboxID("sandboxes.logsV2", sandboxID);
      const q = parseArgs(LogsV2QueryArgs, query ?? {}, "sandboxes.logsV2");
      const spec = callSpec("sandboxes.logsV2", [200], SandboxLogsV2Schema, id);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/v2/sandboxes/{sandboxID}/logs", {
          params: { path: { sandboxID: id }, query: q },
          ...init,
        }),
      );
      return data.logs;
    },
  };
}
