/**
 * Test helper: reads a process stream into a summary.
 *
 * @module
 */
import type { ProcessEvent } from "../../../src/gen/envd/process/process_pb";

/** What a finished process stream carried. */
export interface StreamSummary {
  kinds: string[];
  pid: number | undefined;
  stdout: string;
  stderr: string;
  pty: string;
  end:
    { exitCode: number; exited: boolean; status: string; error?: string | undefined } | undefined;
}

/** Drains `stream` and summarises it. */
export async function collect(
  stream: AsyncIterable<{ event?: ProcessEvent | undefined }>,
): Promise<StreamSummary> {
  const s: StreamSummary = {
    kinds: [],
    pid: undefined,
    stdout: "",
    stderr: "",
    pty: "",
    end: undefined,
  };
  for await (const msg of stream) {
    const ev = msg.event?.event;
    if (!ev || ev.case === undefined) continue;
    s.kinds.push(ev.case);
    if (ev.case === "start") s.pid = ev.value.pid;
    if (ev.case === "data" && ev.value.output.case) {
      s[ev.value.output.case] += Buffer.from(ev.value.output.value).toString();
    }
    if (ev.case === "end")
      s.end = {
        exitCode: ev.value.exitCode,
        exited: ev.value.exited,
        status: ev.value.status,
        error: ev.value.error,
      };
  }
  return s;
}
