/**
 * `GET /metrics` and `GET /health`. The control service normally answers
 * metrics from the cgroup; this minimal version reads /proc in case a request
 * reaches the agent.
 *
 * @module
 */
import * as fs from "node:fs";
import * as os from "node:os";
import { sendJson } from "./respond";
import type { RouteContext } from "./route-context";

function meminfo(): Record<string, number> {
  const out: Record<string, number> = {};
  try {
    for (const line of fs.readFileSync("/proc/meminfo", "utf8").split("\n")) {
      const m = /^(\w+):\s+(\d+)/.exec(line);
      if (m) out[m[1]] = Number(m[2]) * 1024;
    }
  } catch {
    // no /proc: report zeros
  }
  return out;
}

/** Serves `GET /metrics`. */
export async function metrics(ctx: RouteContext): Promise<void> {
  const mem = meminfo();
  const total = mem.MemTotal ?? 0;
  const cache = (mem.Cached ?? 0) + (mem.Buffers ?? 0);
  const used = Math.max(0, total - (mem.MemFree ?? 0) - cache);
  const disk = await fs.promises.statfs("/").catch(() => undefined);
  const cpus = os.cpus().length || 1;
  const load = os.loadavg()[0] ?? 0;
  sendJson(ctx.res, 200, {
    ts: Math.floor(Date.now() / 1000),
    cpu_count: cpus,
    cpu_used_pct: Math.round(Math.min(100, (load / cpus) * 100) * 100) / 100,
    mem_total_mib: Math.floor(total / 1048576),
    mem_used_mib: Math.floor(used / 1048576),
    mem_total: total,
    mem_used: used,
    mem_cache: cache,
    disk_used: disk ? (disk.blocks - disk.bfree) * disk.bsize : 0,
    disk_total: disk ? disk.blocks * disk.bsize : 0,
  });
}

/** Serves `GET /health`. */
export async function health(ctx: RouteContext): Promise<void> {
  ctx.res.writeHead(204, { "Cache-Control": "no-store" });
  ctx.res.end();
}
