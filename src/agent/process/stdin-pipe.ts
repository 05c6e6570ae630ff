/**
 * `GET /_sandbox-iac/stdin-pipe?pid=<pid>` (or `?tag=<tag>`): the agent's own
 * descriptor of a live process's stdin pipe, and the pipe's inode, for the
 * service to write a binary `StreamInput` into the pipe itself
 * (src/wire/direct-stdin.ts, src/local/proxy/direct-stdin.ts). 404 for no
 * such live process; 409 when its input cannot be taken that way (a PTY, no
 * stdin, closed, or the agent's own writes still queued). The service then
 * relays the call to the agent as any other, which answers it as it would.
 *
 * @module
 */
import { create } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import * as fs from "node:fs";
import type { ServerResponse } from "node:http";
import { ProcessSelectorSchema } from "../../gen/envd/process/process_pb";
import type { StdinPipeAnswer } from "../../wire/direct-stdin";
import { sendError, sendJson } from "../http/respond";
import type { ProcessRegistry } from "./registry";
import { liveOnly } from "./selection";

/** Answers the stdin-pipe route for the process `url`'s query names. */
export function serveStdinPipe(res: ServerResponse, url: URL, registry: ProcessRegistry): void {
  const pid = url.searchParams.get("pid");
  const tag = url.searchParams.get("tag");
  if ((pid === null) === (tag === null) || (pid !== null && !/^[0-9]{1,10}$/.test(pid))) {
    sendError(res, 400, "name the process by exactly one of pid (a number) and tag");
    return;
  }
  let fd: number | undefined;
  try {
    const proc = liveOnly(
      registry,
      create(ProcessSelectorSchema, {
        selector:
          pid !== null ? { case: "pid", value: Number(pid) } : { case: "tag", value: tag ?? "" },
      }),
    );
    fd = proc.stdinPipe();
  } catch (err) {
    sendError(res, 404, err instanceof ConnectError ? err.rawMessage : String(err));
    return;
  }
  if (fd === undefined) {
    sendError(res, 409, "the process's input is not a pipe the agent can hand over");
    return;
  }
  const answer: StdinPipeAnswer = { fd, ino: fs.fstatSync(fd).ino };
  sendJson(res, 200, answer);
}
