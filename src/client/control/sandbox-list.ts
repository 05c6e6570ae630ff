/**
 * Listing sandboxes: `GET /sandboxes` (deprecated, running only) and the
 * paginated `GET /v2/sandboxes`, as one page or as an async iterator.
 *
 * @module
 */

import { z } from "zod";
import { CONTROL_HEADERS } from "../../wire/control";
import { ListV2QueryArgs } from "./args";
import { type CallContext, type CallOptions, callSpec, invoke } from "./call";
import { nextTokenOf, paginate } from "./pagination";
import { ListedSandboxSchema } from "./sandbox.schemas";
import type { ListedSandbox, Page, SandboxState } from "./types";
import { defined, parseArgs } from "./validate";

/** Filters of the sandbox lists. */
export interface ListSandboxesQuery {
  /**
   * Only sandboxes whose metadata holds every one of these pairs.
   * @default no filter
   */
  metadata?: Record<string, string> | undefined;
}

/** Filters and paging of `GET /v2/sandboxes`. */
export interface ListSandboxesV2Query extends ListSandboxesQuery {
  /**
   * Only sandboxes in these states.
   * @default running and paused
   */
  state?: SandboxState[] | undefined;
  /**
   * Sort by start time.
   * @default "desc" (newest first)
   */
  order?: "asc" | "desc" | undefined;
  /**
   * Only sandboxes started after this instant (RFC 3339 string or Date).
   * @default no filter
   */
  startedAfter?: string | Date | undefined;
  /**
   * Only sandboxes of this template (ID or alias).
   * @default no filter
   */
  template?: string | undefined;
  /**
   * The cursor to start from (an `X-Next-Token` from a previous page).
   * @default the first page
   */
  nextToken?: string | undefined;
  /**
   * Page size, 1..100.
   * @default 100
   */
  limit?: number | undefined;
}

/** One page of `GET /v2/sandboxes`. */
export interface SandboxPage extends Page<ListedSandbox> {
  /** Running sandboxes before paging; only when running ones were asked for. */
  totalRunning: number | undefined;
}

/** Sandbox list methods of the control client. */
export interface SandboxListMethods {
  /** `GET /sandboxes` (deprecated): running sandboxes, newest first, unpaged. */
  listSandboxes(query?: ListSandboxesQuery, options?: CallOptions): Promise<ListedSandbox[]>;
  /** One page of `GET /v2/sandboxes`. */
  listSandboxesV2Page(query?: ListSandboxesV2Query, options?: CallOptions): Promise<SandboxPage>;
  /** Every sandbox of `GET /v2/sandboxes`, page after page (`options` apply to each page). */
  listSandboxesV2(
    query?: ListSandboxesV2Query,
    options?: CallOptions,
  ): AsyncIterable<ListedSandbox>;
}

/**
 * Encodes a metadata filter the way the service (and the official SDK)
 * expects: each key and value URL-encoded, joined as a query string; the
 * HTTP client then encodes the whole value once more.
 */
export function encodeMetadataFilter(metadata: Record<string, string>): string {
  return new URLSearchParams(
    Object.entries(metadata).map(([key, value]): [string, string] => [
      encodeURIComponent(key),
      encodeURIComponent(value),
    ]),
  ).toString();
}

const MetadataArgs = z.object({ metadata: z.record(z.string(), z.string()).optional() });

/** Builds the {@link SandboxListMethods} over `ctx`. */
export function sandboxListMethods(ctx: CallContext): SandboxListMethods {
  const listPage = async (
    query: ListSandboxesV2Query | undefined,
    options?: CallOptions,
  ): Promise<SandboxPage> => {
    const q = parseArgs(ListV2QueryArgs, query ?? {}, "sandboxes.listV2");
    const spec = callSpec("sandboxes.listV2", [200], z.array(ListedSandboxSchema));
    const { data, response } = await invoke(ctx, spec, options, (init) =>
      ctx.api.GET("/v2/sandboxes", {
        params: {
          query: defined({
            metadata: q.metadata ? encodeMetadataFilter(q.metadata) : undefined,
            state: q.state,
            order: q.order,
            startedAfter:
              q.startedAfter instanceof Date ? q.startedAfter.toISOString() : q.startedAfter,
            template: q.template,
            nextToken: q.nextToken,
            limit: q.limit,
          }),
        },
        ...init,
      }),
    );
    const total = response.headers.get(CONTROL_HEADERS.totalRunning);
    return {
      items: data,
      nextToken: nextTokenOf(response),
      totalRunning: total === null || !/^\d+$/.test(total) ? undefined : Number(total),
    };
  };

  return {
    async listSandboxes(query, options) {
      const q = parseArgs(MetadataArgs, query ?? {}, "sandboxes.list");
      const spec = callSpec("sandboxes.list", [200], z.array(ListedSandboxSchema));
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/sandboxes", {
          params: {
            query: defined({ metadata: q.metadata ? encodeMetadataFilter(q.metadata) : undefined }),
          },
          ...init,
        }),
      );
      return data;
    },

    listSandboxesV2Page: listPage,

    listSandboxesV2(query, options) {
      return paginate(
        "sandboxes.listV2",
        (nextToken) => listPage({ ...query, nextToken }, options),
        query?.nextToken,
      );
    },
  };
}
