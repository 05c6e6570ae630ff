/**
 * How a process RPC finds its process and gives it input, with envd's errors
 * (docs/envd.md#process-service): shared by the Connect service
 * (`service.ts`) and the binary bulk stdin path (`stdin-stream.ts`), so both
 * answer alike.
 *
 * @module
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { ProcessSelector } from "../../gen/envd/process/process_pb";
import type { ManagedProcess } from "./managed-process";
import { notFoundMessage, type ProcessRegistry } from "./registry";

/** The process `selector` names, live or recently ended; not_found otherwise. */
export function select(
  registry: ProcessRegistry,
  selector: ProcessSelector | undefined,
): ManagedProcess {
  const sel = selector?.selector ?? { case: undefined };
  const proc = registry.find(sel);
  if (!proc) throw new ConnectError(notFoundMessage(sel), Code.NotFound);
  return proc;
}

/** The live process `selector` names; not_found for one that has ended. */
export function liveOnly(
  registry: ProcessRegistry,
  selector: ProcessSelector | undefined,
): ManagedProcess {
  const proc = select(registry, selector);
  if (proc.ended) {
    throw new ConnectError(
      notFoundMessage(selector?.selector ?? { case: undefined }),
      Code.NotFound,
    );
  }
  return proc;
}

/** A `ProcessInput`'s input: stdin bytes, PTY bytes, or nothing. */
export type InputCase =
  | { case: "stdin"; value: Uint8Array }
  | { case: "pty"; value: Uint8Array }
  | { case: undefined; value?: undefined }
  | undefined;

/** Writes `input` to `proc`, or throws envd's error for input of the wrong kind or a closed stdin. */
export function sendInput(proc: ManagedProcess, input: InputCase): void {
  if (!input || input.case === undefined) return;
  if (input.case === "stdin" && proc.isPty) {
    throw new ConnectError("process has a pty: send pty input instead of stdin", Code.Internal);
  }
  if (input.case === "pty" && !proc.isPty) {
    throw new ConnectError("process has no pty: send stdin input instead", Code.Internal);
  }
  if (!proc.write(input.value))
    throw new ConnectError("stdin not enabled or closed", Code.Internal);
}
