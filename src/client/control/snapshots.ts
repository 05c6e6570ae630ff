/**
 * Snapshots: take one of a sandbox, list them page by page.
 *
 * @module
 */

import { z } from "zod";
import { checkSandboxID, SnapshotArgs, SnapshotsQueryArgs } from "./args";
import { type CallContext, type CallOptions, callSpec, invoke } from "./call";
import { nextTokenOf, paginate } from "./pagination";
import { SnapshotInfoSchema } from "./sandbox.schemas";
import type { Page, SnapshotInfo } from "./types";
import { parseArgs } from "./validate";

/** Filters and paging of `GET /snapshots`. */
export interface ListSnapshotsQuery {
  /**
   * Only snapshots of this sandbox.
   * @default every sandbox
   */
  sandboxID?: string | undefined;
  /**
   * Only snapshots with this name.
   * @default every name
   */
  name?: string | undefined;
  /**
   * The cursor to start from.
   * @default the first page
   */
  nextToken?: string | undefined;
  /**
   * Page size, 1..100.
   * @default 100
   */
  limit?: number | undefined;
}

/** Snapshot methods of the control client. */
export interface SnapshotMethods {
  /**
   * `POST /sandboxes/{sandboxID}/snapshots` (201). The `snapshotID` can be
   * used as a templateID. Never retried.
   * @param body.name - @default unnamed (the ID is `<templateID>:default`)
   */
  createSnapshot(
    sandboxID: string,
    body?: { name?: string },
    options?: CallOptions,
  ): Promise<SnapshotInfo>;
  /** One page of `GET /snapshots`. */
  listSnapshotsPage(query?: ListSnapshotsQuery, options?: CallOptions): Promise<Page<SnapshotInfo>>;
  /** Every snapshot, page after page. */
  listSnapshots(query?: ListSnapshotsQuery, options?: CallOptions): AsyncIterable<SnapshotInfo>;
}

/** Builds the {@link SnapshotMethods} over `ctx`. */
export function snapshotMethods(ctx: CallContext): SnapshotMethods {
  const listPage = async (
    query: ListSnapshotsQuery | undefined,
    options?: CallOptions,
  ): Promise<Page<SnapshotInfo>> => {
    const q = parseArgs(SnapshotsQueryArgs, query ?? {}, "snapshots.list");
    const spec = callSpec("snapshots.list", [200], z.array(SnapshotInfoSchema));
    const { data, response } = await invoke(ctx, spec, options, (init) =>
      ctx.api.GET("/snapshots", { params: { query: q }, ...init }),
    );
    return { items: data, nextToken: nextTokenOf(response) };
  };

  return {
    async createSnapshot(sandboxID, body, options) {
      const id = checkSandboxID("snapshots.create", sandboxID);
      const parsed = parseArgs(SnapshotArgs, body ?? {}, "snapshots.create");
      const spec = callSpec("snapshots.create", [201], SnapshotInfoSchema, id);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.POST("/sandboxes/{sandboxID}/snapshots", {
          params: { path: { sandboxID: id } },
          body: parsed,
          ...init,
        }),
      );
      return data;
    },

    listSnapshotsPage: listPage,

    listSnapshots(query, options) {
      return paginate(
        "snapshots.list",
        (nextToken) => listPage({ ...query, nextToken }, options),
        query?.nextToken,
      );
    },
  };
}
