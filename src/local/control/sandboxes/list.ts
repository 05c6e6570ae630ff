/**
 * The list endpoints' filters and pagination (docs/control-api.md#sandbox-endpoints,
 * docs/control-api.md#list-filters-and-paging): the triple-encoded metadata filter, the comma-form state
 * filter, ordering by start time and the opaque `X-Next-Token` cursor.
 *
 * @module
 */
import { serviceError } from "../http";
import { SANDBOX_ID_PATTERN } from "../../../wire/ids";
import type { SandboxRecord } from "./record";

/**
 * Parses the `metadata` query value: already decoded once by the query parser,
 * it is parsed as a query string, and each key and value is URL-decoded once
 * more (the SDK encodes them three times).
 */
export function parseMetadataFilter(value: string | null): Record<string, string> {
  if (value === null || value === "") return {};
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(value)) {
    try {
      out[decodeURIComponent(k)] = decodeURIComponent(v);
    } catch {
      throw serviceError(
        "invalid_argument",
        `query.metadata: ${JSON.stringify(value.slice(0, 80))} is not a valid URL-encoded key=value list; encode it like k1=v1&k2=v2`,
      );
    }
  }
  return out;
}

/** True when every filter entry is in the sandbox's metadata. */
export function matchesMetadata(record: SandboxRecord, filter: Record<string, string>): boolean {
  return Object.entries(filter).every(([k, v]) => record.metadata[k] === v);
}

/** Parses `state=running,paused` (also repeated parameters); both when absent. */
export function parseStateFilter(values: string[]): Set<"running" | "paused"> {
  const states = values
    .flatMap((v) => v.split(","))
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (states.length === 0) return new Set(["running", "paused"]);
  const out = new Set<"running" | "paused">();
  for (const s of states) {
    if (s !== "running" && s !== "paused") {
      throw serviceError(
        "invalid_argument",
        `query.state: must be running or paused (comma-separated), got ${JSON.stringify(s.slice(0, 40))}`,
      );
    }
    out.add(s);
  }
  return out;
}

/** Parses `limit` (1..100, default 100). */
export function parseLimit(value: string | null): number {
  if (value === null) return 100;
  const n = Number(value);
  if (!/^-?\d+$/.test(value) || n < 1 || n > 100) {
    throw serviceError(
      "invalid_argument",
      `query.limit: must be an integer from 1 to 100, got ${JSON.stringify(value.slice(0, 40))}`,
    );
  }
  return n;
}

/** Parses `order` (`asc` / `desc`, default `desc`). */
export function parseOrder(value: string | null): "asc" | "desc" {
  if (value === null || value === "") return "desc";
  if (value !== "asc" && value !== "desc")
    throw serviceError(
      "invalid_argument",
      `query.order: must be asc or desc, got ${JSON.stringify(value.slice(0, 40))}`,
    );
  return value;
}

/** Orders records by start time (then id) in the asked direction. */
export function sortRecords(records: SandboxRecord[], order: "asc" | "desc"): SandboxRecord[] {
  const sign = order === "asc" ? 1 : -1;
  return [...records].sort((a, b) => {
    const d = Date.parse(a.startedAt) - Date.parse(b.startedAt);
    if (d !== 0) return sign * d;
    return sign * (a.sandboxID < b.sandboxID ? -1 : a.sandboxID > b.sandboxID ? 1 : 0);
  });
}

/** One page of a sorted list, and the cursor of the next page when one exists. */
export function paginate(
  sorted: SandboxRecord[],
  order: "asc" | "desc",
  limit: number,
  nextToken: string | null,
): { page: SandboxRecord[]; nextToken: string | undefined } {
  let start = 0;
  if (nextToken !== null && nextToken !== "") {
    const cursor = decodeCursor(nextToken);
    const sign = order === "asc" ? 1 : -1;
    start = sorted.findIndex((r) => {
      const d = Date.parse(r.startedAt) - cursor.startedMs;
      if (d !== 0) return sign * d > 0;
      return (
        sign * (r.sandboxID < cursor.sandboxID ? -1 : r.sandboxID > cursor.sandboxID ? 1 : 0) > 0
      );
    });
    if (start < 0) start = sorted.length;
  }
  const page = sorted.slice(start, start + limit);
  const last = page[page.length - 1];
  const more = start + limit < sorted.length;
  return { page, nextToken: more && last ? encodeCursor(last) : undefined };
}

function encodeCursor(r: SandboxRecord): string {
  return Buffer.from(`${r.startedAt}__${r.sandboxID}`).toString("base64url");
}

function decodeCursor(token: string): { startedMs: number; sandboxID: string } {
  const text = /^[A-Za-z0-9_-]+$/.test(token)
    ? Buffer.from(token, "base64url").toString("utf8")
    : "";
  const [started, sandboxID] = text.split("__");
  const startedMs = Date.parse(started ?? "");
  if (!sandboxID || Number.isNaN(startedMs) || !SANDBOX_ID_PATTERN.test(sandboxID)) {
    throw serviceError("invalid_argument", "Invalid next token");
  }
  return { startedMs, sandboxID };
}
