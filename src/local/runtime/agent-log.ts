/**
 * Bounded capture of a sandbox's stdout and stderr (bwrap and the agent) into
 * `agent.log`, with the last bytes kept in memory for error messages.
 *
 * @module
 */
import * as fs from "node:fs";
import type { Readable } from "node:stream";
import { AGENT_LOG_MAX_BYTES, AGENT_LOG_TAIL_BYTES } from "./constants";

/** A log file fed by one or more streams. */
export interface AgentLog {
  /** Copies `stream` into the log until it ends. */
  attach(stream: Readable): void;
  /** The last few KiB written, for error messages. */
  tail(): string;
  /** Flushes and closes the file. */
  close(): Promise<void>;
}

/** Opens (truncating) the log at `file`; at most {@link AGENT_LOG_MAX_BYTES} are written per start. */
export function openAgentLog(file: string): AgentLog {
  const out = fs.createWriteStream(file, { flags: "w", mode: 0o600 });
  out.on("error", () => undefined); // a full disk must not crash the service
  let written = 0;
  let truncated = false;
  let tail = Buffer.alloc(0);
  return {
    attach(stream: Readable): void {
      stream.on("data", (chunk: Buffer) => {
        tail = Buffer.concat([tail, chunk]);
        if (tail.length > AGENT_LOG_TAIL_BYTES)
          tail = tail.subarray(tail.length - AGENT_LOG_TAIL_BYTES);
        if (written + chunk.length <= AGENT_LOG_MAX_BYTES) {
          written += chunk.length;
          out.write(chunk);
        } else if (!truncated) {
          truncated = true;
          out.write(`\n[sandbox-iac: log truncated at ${AGENT_LOG_MAX_BYTES} bytes]\n`);
        }
      });
    },
    tail: () => tail.toString("utf8"),
    close: () => new Promise<void>((resolve) => out.end(() => resolve())),
  };
}
