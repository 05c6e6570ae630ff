/**
 * Lifecycle logs of a sandbox (created, paused, resumed, timeout...) and the
 * two log endpoints' bodies (docs/control-api.md#sandbox-endpoints).
 *
 * @module
 */
import { LOG_LEVELS } from "../../../wire/control-requests";
import type { LifecycleLogEntry, SandboxRecord } from "./record";

/** Entries kept per sandbox. */
const MAX_ENTRIES = 1000;

/** Appends a lifecycle entry to the record (bounded). */
export function appendLog(
  record: SandboxRecord,
  level: LifecycleLogEntry["level"],
  message: string,
  fields: Record<string, string>,
): void {
  record.logs.push({
    timestamp: new Date().toISOString(),
    level,
    message,
    fields: { sandboxID: record.sandboxID, ...fields },
  });
  if (record.logs.length > MAX_ENTRIES) record.logs.splice(0, record.logs.length - MAX_ENTRIES);
}

/** Query of `GET /v2/sandboxes/:id/logs`. */
export interface LogQuery {
  /** Milliseconds; entries at or after it (forward) or at or before it (backward). */
  cursor?: number | undefined;
  limit: number;
  direction: "forward" | "backward";
  level?: LifecycleLogEntry["level"] | undefined;
  search?: string | undefined;
}

/** Filters the entries for the v2 endpoint. */
export function selectLogs(record: SandboxRecord, q: LogQuery): LifecycleLogEntry[] {
  const minLevel = q.level ? LOG_LEVELS.indexOf(q.level) : 0;
  let entries = record.logs.filter((e) => {
    if (LOG_LEVELS.indexOf(e.level) < minLevel) return false;
    if (q.search !== undefined && !e.message.includes(q.search)) return false;
    if (q.cursor !== undefined) {
      const t = Date.parse(e.timestamp);
      return q.direction === "forward" ? t >= q.cursor : t <= q.cursor;
    }
    return true;
  });
  if (q.direction === "backward") entries = entries.reverse();
  return entries.slice(0, q.limit);
}

/** The `logger` of every v1 log line: the local service's own lifecycle records. */
const V1_LOGGER = "sandbox-iac";

/** The deprecated v1 body `{logs: [{timestamp, line}], logEntries}`. */
export function v1LogsBody(
  record: SandboxRecord,
  startMs: number | undefined,
  limit: number,
): Record<string, unknown> {
  const entries = record.logs
    .filter((e) => startMs === undefined || Date.parse(e.timestamp) >= startMs)
    .slice(0, limit);
  return {
    // E2B's v1 lines are the sandbox's structured log records as JSON (the
    // E2B CLI's `sandbox logs` parses them): level, logger, message, fields.
    logs: entries.map((e) => ({
      timestamp: e.timestamp,
      line: JSON.stringify({ ...e.fields, level: e.level, logger: V1_LOGGER, message: e.message }),
    })),
    logEntries: entries,
  };
}
