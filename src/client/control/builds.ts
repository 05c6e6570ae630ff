/**
 * Template builds: start (v2), poll the status with logs, read the logs,
 * cancel (a sandbox-iac extension).
 *
 * @module
 */

import { BuildLogsQueryArgs, BuildStartArgs, BuildStatusQueryArgs, checkId } from "./args";
import { type CallContext, type CallOptions, callSpec, discardBody, invoke } from "./call";
import { TemplateBuildInfoSchema, TemplateBuildLogsSchema } from "./template.schemas";
import type {
  BuildLogEntry,
  BuildLogsQuery,
  BuildStatusQuery,
  TemplateBuildInfo,
  TemplateBuildStartV2,
} from "./types";
import { parseArgs } from "./validate";

/** Build methods of the control client. */
export interface BuildMethods {
  /** `POST /v2/templates/{templateID}/builds/{buildID}` (202). Never retried. */
  startTemplateBuildV2(
    templateID: string,
    buildID: string,
    body: TemplateBuildStartV2,
    options?: CallOptions,
  ): Promise<void>;
  /**
   * `DELETE /templates/{templateID}/builds/{buildID}` (204): cancels the build
   * if it is still running. A sandbox-iac extension: E2B's API has no such
   * call and answers 404 or 405 (thrown as usual).
   */
  cancelTemplateBuild(templateID: string, buildID: string, options?: CallOptions): Promise<void>;
  /**
   * `GET /templates/{templateID}/builds/{buildID}/status`. Poll while `waiting`
   * or `building`, advancing `logsOffset` by the entries received.
   */
  getTemplateBuildStatus(
    templateID: string,
    buildID: string,
    query?: BuildStatusQuery,
    options?: CallOptions,
  ): Promise<TemplateBuildInfo>;
  /** `GET /templates/{templateID}/builds/{buildID}/logs`. */
  getTemplateBuildLogs(
    templateID: string,
    buildID: string,
    query?: BuildLogsQuery,
    options?: CallOptions,
  ): Promise<BuildLogEntry[]>;
}

/** Builds the {@link BuildMethods} over `ctx`. */
export function buildMethods(ctx: CallContext): BuildMethods {
  const ids = (operation: string, templateID: string, buildID: string) => ({
    templateID: checkId(operation, "templateID", templateID),
    buildID: checkId(operation, "buildID", buildID),
  });

  return {
    async startTemplateBuildV2(templateID, buildID, body, options) {
      const path = ids("builds.startV2", templateID, buildID);
      const parsed = parseArgs(BuildStartArgs, body, "builds.startV2") as TemplateBuildStartV2;
      const spec = callSpec("builds.startV2", [202], undefined, path.buildID);
      await invoke(ctx, spec, options, async (init) => {
        const result = await ctx.api.POST("/v2/templates/{templateID}/builds/{buildID}", {
          params: { path },
          body: parsed,
          // 202 carries no body; never try to parse one.
          parseAs: "stream",
          ...init,
        });
        await discardBody(result.response);
        return result;
      });
    },

    async cancelTemplateBuild(templateID, buildID, options) {
      const path = ids("builds.cancel", templateID, buildID);
      const spec = callSpec("builds.cancel", [204], undefined, path.buildID);
      await invoke(ctx, spec, options, (init) =>
        ctx.api.DELETE("/templates/{templateID}/builds/{buildID}", { params: { path }, ...init }),
      );
    },

    async getTemplateBuildStatus(templateID, buildID, query, options) {
      const path = ids("builds.status", templateID, buildID);
      const q = parseArgs(BuildStatusQueryArgs, query ?? {}, "builds.status");
      const spec = callSpec("builds.status", [200], TemplateBuildInfoSchema, path.buildID);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/templates/{templateID}/builds/{buildID}/status", {
          params: { path, query: q },
          ...init,
        }),
      );
      return data;
    },

    async getTemplateBuildLogs(templateID, buildID, query, options) {
      const path = ids("builds.logs", templateID, buildID);
      const q = parseArgs(BuildLogsQueryArgs, query ?? {}, "builds.logs");
      const spec = callSpec("builds.logs", [200], TemplateBuildLogsSchema, path.buildID);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/templates/{templateID}/builds/{buildID}/logs", {
          params: { path, query: q },
          ...init,
        }),
      );
      return data.logs;
    },
  };
}
