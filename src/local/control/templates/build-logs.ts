/**
 * Build logs: kept in memory for reading and appended to one JSONL file per
 * build, so they survive restarts. Bounded per build.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { MAX_LOG_ENTRIES_PER_BUILD } from "./constants";
import { LOG_LEVELS } from "../../../wire/control-requests";
import type { BuildLogEntry, LogLevel } from "./model";

interface BuildLog {
  entries: BuildLogEntry[];
  truncated: boolean;
  pending: string[];
  flushing: Promise<void>;
}

/** The logs of every build, by build id. */
export class BuildLogStore {
  private readonly logs = new Map<string, BuildLog>();

  constructor(private readonly dir: string) {}

  private file(buildID: string): string {
    return path.join(this.dir, `${buildID}.jsonl`);
  }

  private async load(buildID: string): Promise<BuildLog> {
    const cached = this.logs.get(buildID);
    if (cached) return cached;
    let text = "";
    try {
      text = await fs.readFile(this.file(buildID), "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    const entries: BuildLogEntry[] = [];
    for (const line of text.split("\n")) {
      if (!line) continue;
      try {
        entries.push(JSON.parse(line) as BuildLogEntry);
      } catch {
        // a torn last line after a crash: everything before it is intact
      }
    }
    const again = this.logs.get(buildID);
    if (again) return again;
    const log: BuildLog = {
      entries,
      truncated: entries.length >= MAX_LOG_ENTRIES_PER_BUILD,
      pending: [],
      flushing: Promise.resolve(),
    };
    this.logs.set(buildID, log);
    return log;
  }

  /** Starts an empty log for a new build. */
  create(buildID: string): void {
    this.logs.set(buildID, {
      entries: [],
      truncated: false,
      pending: [],
      flushing: Promise.resolve(),
    });
  }

  /** Appends one entry; beyond the bound, one notice is kept and the rest dropped. */
  append(buildID: string, level: LogLevel, message: string, step?: string): void {
    let log = this.logs.get(buildID);
    if (!log) {
      log = { entries: [], truncated: false, pending: [], flushing: Promise.resolve() };
      this.logs.set(buildID, log);
    }
    if (log.truncated) return;
    let entry: BuildLogEntry = {
      timestamp: new Date().toISOString(),
      level,
      message,
      ...(step !== undefined ? { step } : {}),
    };
    if (log.entries.length === MAX_LOG_ENTRIES_PER_BUILD - 1) {
      log.truncated = true;
      entry = {
        ...entry,
        level: "warn",
        message: `build log truncated after ${MAX_LOG_ENTRIES_PER_BUILD} entries`,
      };
    }
    log.entries.push(entry);
    log.pending.push(JSON.stringify(entry));
    this.scheduleFlush(buildID, log);
  }

  private scheduleFlush(buildID: string, log: BuildLog): void {
    log.flushing = log.flushing.then(async () => {
      if (log.pending.length === 0) return;
      const lines = log.pending.splice(0).join("\n") + "\n";
      try {
        await fs.appendFile(this.file(buildID), lines);
      } catch {
        // the log stays readable in memory; a lost file line is not worth failing a build
      }
    });
  }

  /** Resolves once every appended entry of `buildID` reached the disk. */
  async flush(buildID: string): Promise<void> {
    await this.logs.get(buildID)?.flushing;
  }

  /** Entries at `level` or above, from the `offset`-th of them, at most `limit`. */
  async read(
    buildID: string,
    opts: { offset: number; limit: number; level?: LogLevel },
  ): Promise<BuildLogEntry[]> {
    const log = await this.load(buildID);
    const min = opts.level ? LOG_LEVELS.indexOf(opts.level) : 0;
    // the offset counts entries of the filtered view, as the SDK advances it by what it received
    const visible =
      min === 0 ? log.entries : log.entries.filter((e) => LOG_LEVELS.indexOf(e.level) >= min);
    return visible.slice(opts.offset, opts.offset + opts.limit);
  }

  /** Every entry of `buildID`. */
  async all(buildID: string): Promise<BuildLogEntry[]> {
    return (await this.load(buildID)).entries;
  }

  /** Forgets and deletes the logs of `buildID`. */
  async remove(buildID: string): Promise<void> {
    const log = this.logs.get(buildID);
    this.logs.delete(buildID);
    await log?.flushing;
    await fs.rm(this.file(buildID), { force: true });
  }
}
