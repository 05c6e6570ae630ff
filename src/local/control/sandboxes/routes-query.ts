/**
 * Control routes that read sandboxes: detail, the two lists, metrics and
 * lifecycle logs (docs/control-api.md#sandbox-endpoints).
 *
 * @module
 */
import { CONTROL_HEADERS } from "../../../wire/control";
import { serviceError, type ControlRequest, type Route } from "../http";
import { parseSandboxID } from "./ids";
import { idParam } from "./routes-lifecycle";
import {
  matchesMetadata,
  paginate,
  parseLimit,
  parseMetadataFilter,
  parseOrder,
  parseStateFilter,
  sortRecords,
} from "./list";
import { LOG_LEVELS } from "../../../wire/control-requests";
import { selectLogs, v1LogsBody } from "./logs";
import { notFound, type SandboxManager } from "./manager";
import { sandboxMetricView } from "./metrics";
import { detailView, listedView, type SandboxRecord } from "./record";

/** Parses an optional non-negative integer query parameter. */
function queryInt(
  req: ControlRequest,
  name: string,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  const raw = req.query.get(name);
  if (raw === null || raw === "") return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n > max) {
    throw serviceError(
      "invalid_argument",
      `query.${name}: must be an integer from 0 to ${max}, got ${JSON.stringify(raw.slice(0, 40))}`,
    );
  }
  return n;
}

function recordOf(manager: SandboxManager, req: ControlRequest): SandboxRecord {
  const id = idParam(req);
  const r = manager.get(id);
  if (!r) throw notFound(id);
  return r;
}

/** A date-time query parameter in ms since the epoch; 400 when it is not RFC 3339. */
function parseDateQuery(raw: string | null, name: string): number | undefined {
  if (!raw) return undefined;
  const ms = Date.parse(raw);
  if (Number.isNaN(ms)) {
    throw serviceError(
      "invalid_argument",
      `query.${name}: must be an RFC 3339 date-time such as 2026-01-02T15:04:05Z, got ${JSON.stringify(raw.slice(0, 40))}`,
    );
  }
  return ms;
}

/** The read routes. */
export function queryRoutes(manager: SandboxManager): Route[] {
  return [
    {
      method: "GET",
      pattern: "/sandboxes/:sandboxID",
      handler: async (req) => {
        const r = recordOf(manager, req);
        return { status: 200, body: detailView(r, manager.tokenOf(r), manager.servedDomain()) };
      },
    },
    {
      method: "GET",
      pattern: "/sandboxes",
      handler: async (req) => {
        const filter = parseMetadataFilter(req.query.get("metadata"));
        const running = manager
          .all()
          .filter((r) => r.state === "running" && matchesMetadata(r, filter));
        return { status: 200, body: sortRecords(running, "desc").map(listedView) };
      },
    },
    {
      method: "GET",
      pattern: "/v2/sandboxes",
      handler: async (req) => {
        const filter = parseMetadataFilter(req.query.get("metadata"));
        const states = parseStateFilter(req.query.getAll("state"));
        const order = parseOrder(req.query.get("order"));
        const limit = parseLimit(req.query.get("limit"));
        // Both bounds are inclusive: "started at or after", "at or before".
        const startedAfter = parseDateQuery(req.query.get("startedAfter"), "startedAfter");
        const startedBefore = parseDateQuery(req.query.get("startedBefore"), "startedBefore");
        const template = req.query.get("template");
        const matching = manager
          .all()
          .filter(
            (r) =>
              states.has(r.state) &&
              matchesMetadata(r, filter) &&
              (startedAfter === undefined || Date.parse(r.startedAt) >= startedAfter) &&
              (startedBefore === undefined || Date.parse(r.startedAt) <= startedBefore) &&
              (!template || r.templateID === template || r.alias === template),
          );
        const { page, nextToken } = paginate(
          sortRecords(matching, order),
          order,
          limit,
          req.query.get("nextToken"),
        );
        const headers: Record<string, string> = {};
        if (nextToken) headers[CONTROL_HEADERS.nextToken] = nextToken;
        if (states.has("running"))
          headers[CONTROL_HEADERS.totalRunning] = String(
            matching.filter((r) => r.state === "running").length,
          );
        return { status: 200, body: page.map(listedView), headers };
      },
    },
    {
      method: "GET",
      pattern: "/sandboxes/metrics",
      handler: async (req) => {
        const raw = req.query.get("sandbox_ids");
        if (!raw)
          throw serviceError(
            "invalid_argument",
            "query.sandbox_ids: required, a comma-separated list of 1 to 100 sandbox ids",
          );
        const ids = [
          ...new Set(
            raw
              .split(",")
              .map((s) => s.trim())
              .filter((s) => s !== ""),
          ),
        ];
        if (ids.length === 0 || ids.length > 100) {
          throw serviceError(
            "invalid_argument",
            `query.sandbox_ids: must list 1 to 100 sandbox ids, got ${ids.length}`,
          );
        }
        const sandboxes: Record<string, unknown> = {};
        const parsed = ids.map(parseSandboxID);
        await manager.metrics.settled(parsed);
        for (const id of parsed) {
          const latest = manager.metrics.latest(id);
          if (latest && manager.exists(id)) sandboxes[id] = sandboxMetricView(latest);
        }
        return { status: 200, body: { sandboxes } };
      },
    },
    {
      method: "GET",
      pattern: "/sandboxes/:sandboxID/metrics",
      handler: async (req) => {
        const r = recordOf(manager, req);
        const start = queryInt(req, "start") ?? 0;
        const end = queryInt(req, "end") ?? Math.floor(Date.now() / 1000) + 1;
        if (start > end)
          throw serviceError(
            "invalid_argument",
            `query.start: must not be after end, got start ${start} and end ${end}`,
          );
        await manager.metrics.settled([r.sandboxID]);
        return {
          status: 200,
          body: manager.metrics.range(r.sandboxID, start, end).map(sandboxMetricView),
        };
      },
    },
    {
      method: "GET",
      pattern: "/sandboxes/:sandboxID/logs",
      handler: async (req) => {
        const r = recordOf(manager, req);
        return {
          status: 200,
          body: v1LogsBody(r, queryInt(req, "start"), queryInt(req, "limit") ?? 1000),
        };
      },
    },
    {
      method: "GET",
      pattern: "/v2/sandboxes/:sandboxID/logs",
      handler: async (req) => {
        const r = recordOf(manager, req);
        const direction = req.query.get("direction") ?? "forward";
        if (direction !== "forward" && direction !== "backward") {
          throw serviceError(
            "invalid_argument",
            `query.direction: must be forward or backward, got ${JSON.stringify(direction.slice(0, 40))}`,
          );
        }
        const level = req.query.get("level") ?? undefined;
        if (level !== undefined && !(LOG_LEVELS as readonly string[]).includes(level)) {
          throw serviceError(
            "invalid_argument",
            `query.level: must be one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(level.slice(0, 40))}`,
          );
        }
        const search = req.query.get("search") ?? undefined;
        if (search !== undefined && search.length > 256)
          throw serviceError(
            "invalid_argument",
            `query.search: must be at most 256 characters, got ${search.length}`,
          );
        const logs = selectLogs(r, {
          cursor: queryInt(req, "cursor"),
          limit: queryInt(req, "limit", 1000) ?? 1000,
          direction,
          level: level as (typeof LOG_LEVELS)[number] | undefined,
          search,
        });
        return { status: 200, body: { logs } };
      },
    },
  ];
}
